// The hall display: the boards of this screen, counting down from the timestamped snapshots.
// Plain `/` lists every board (scrolling; cards off the screen are not drawn). A hall screen
// names its boards (?boards=1-40) and/or pages through them (?page_s=20, ?per_page=40): then
// the page fits the cards to the screen, without scrolling, and draws only the current page.
// Beside the grid: the top boards' positions (positions.js, ?positions=N).
"use strict";
(function () {
  const cards = new Map();
  const params = new URLSearchParams(location.search);
  const onlyRound = params.get("round");
  const problems = [];

  let range = null;
  if (params.get("boards")) {
    range = QZ.parseBoards(params.get("boards"));
    if (range.error) {
      const e = range.error;
      problems.push(QZ.t("screen.bad_boards", { item: e.item, text: e.text || "", reason: QZ.t("screen." + e.reason) }));
      range = null;
    }
  }
  const pageS = QZ.intParam(params, "page_s", 3, 3600, 0, problems);
  const perPage = QZ.intParam(params, "per_page", 1, 200, 40, problems);
  // The top boards' records beside the grid (positions.js): ?positions=N, 2 by default.
  const positions = new QZ.Positions(document.getElementById("positions"),
    QZ.intParam(params, "positions", 0, 4, 2, problems));
  const fit = !!(params.get("boards") || pageS || params.get("fit") === "1");
  document.body.classList.toggle("fit", fit);

  function inRound(view) {
    if (!onlyRound) return true;
    const game = (view.state && view.state.game) || (view.paired && view.paired.game); // (a clock never seen)
    return !!game && game.startsWith("r" + onlyRound + "-");
  }
  function onScreen(board) { return !range || range.has(board); }

  // -- which cards are in the grid ----------------------------------------------------------
  // #grid is the page on the screen; on a paging screen the next page is built in the layer
  // behind it before its turn (pagelayers.js).
  let pageNo = 0, pageList = [[]];
  const layers = new QZ.PageLayers(document.getElementById("grid"), document.getElementById("grid-next"), fit);
  function sortedBoards() { return [...cards.keys()].sort(QZ.boardKey); }
  function cardsOf(list) { return list.map((b) => cards.get(b)); }

  function layout() {
    const boards = sortedBoards();
    pageList = fit ? QZ.pages(boards, pageS ? perPage : Math.max(boards.length, 1)) : [boards];
    if (pageNo >= pageList.length) pageNo = 0;
    layers.place(cardsOf(fit ? pageList[pageNo] : boards));
    if (fit) {
      const shown = new Set(pageList[pageNo]);
      for (const [b, c] of cards) c.show(shown.has(b));
    }
    positions.boards(boards);
    if (!boards.length) layers.shown.replaceChildren(QZ.el("p", { class: "empty", text: QZ.t("no_boards") }));
    showPage();
    planBuild();
  }

  const pageEl = document.getElementById("page");
  function showPage() {
    const many = pageList.length > 1;
    pageEl.hidden = !many;
    if (!many) return;
    const list = pageList[pageNo];
    pageEl.textContent = QZ.t("screen.page", { n: pageNo + 1, of: pageList.length, first: list[0], last: list[list.length - 1] });
    pageEl.dataset.page = String(pageNo + 1);
    pageEl.dataset.pages = String(pageList.length);
  }

  // Paging: every page_s seconds (counted from the load, without drift) the next page turns
  // up; it is built from BUILD_LEAD_MS before (at most half a page's time), its cards shown
  // (ticking) as they go in, so it turns up with every time as it is now.
  const BUILD_LEAD_MS = 2000;
  let turnAt = performance.now() + pageS * 1000, buildTimer = null;
  function ready(c) { c.show(true); c.tick(QZ.clock.now()); }
  function planBuild() {
    clearTimeout(buildTimer);
    if (!pageS || pageList.length < 2) return;
    const lead = Math.min(BUILD_LEAD_MS, pageS * 500);
    buildTimer = setTimeout(() => layers.build(cardsOf(pageList[(pageNo + 1) % pageList.length]), ready, turnAt),
      Math.max(0, turnAt - lead - performance.now()));
  }
  function turn() {
    turnAt += pageS * 1000;
    setTimeout(turn, Math.max(0, turnAt - performance.now()));
    if (pageList.length < 2) return;
    const before = pageList[pageNo];
    pageNo = (pageNo + 1) % pageList.length;
    layers.turn(cardsOf(pageList[pageNo]), ready);
    const shown = new Set(pageList[pageNo]);
    for (const b of before) if (!shown.has(b)) cards.get(b).show(false);
    showPage();
    planBuild();
  }
  if (pageS) setTimeout(turn, pageS * 1000);
  if (fit) {
    const resized = new ResizeObserver(() => layout());
    resized.observe(layers.shown);
    resized.observe(layers.next);
  }

  // Without paging, the page scrolls: a card is drawn only while it is on the screen.
  const watcher = fit ? null : new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const c = cards.get(entry.target.dataset.board);
      if (c) c.show(entry.isIntersecting);
    }
  }, { rootMargin: "200px" });

  let relayout = false;
  function card(board) {
    let c = cards.get(board);
    if (!c) {
      c = new QZ.Card(board);
      cards.set(board, c);
      if (watcher) watcher.observe(c.el);
      // Many boards arrive at once (hello): lay out once for the lot.
      if (!relayout) { relayout = true; setTimeout(() => { relayout = false; layout(); }, 0); }
    }
    return c;
  }

  function show(view) {
    if (!onScreen(view.board)) return;
    if (!inRound(view) && !cards.has(view.board)) return;
    card(view.board).update(view);
    if (view.state) positions.game(view.board, view.state.game);
    QZ.roundBar.changed(view);
  }

  QZ.applyI18n();
  QZ.langButton(document.getElementById("lang"));
  QZ.onLang.push(() => { for (const c of cards.values()) c.render(); positions.redraw(); showRound(); showPage(); barSecond = null; QZ.wake(); });
  if (onlyRound) document.getElementById("round").dataset.round = onlyRound;
  function showRound() {
    const r = document.getElementById("round");
    r.textContent = r.dataset.round ? QZ.t("round", { n: r.dataset.round }) : "";
  }
  showRound();
  const problemEl = document.getElementById("problems");
  if (problems.length) { problemEl.textContent = problems.join(" · "); problemEl.hidden = false; }

  QZ.roundBar.start(cards);
  QZ.stream({
    hello(d) {
      document.getElementById("venue").textContent = d.station ? (d.station.title || d.station.venue) : "";
      for (const view of d.boards || []) show({ board: view.board, state: view.state, status: view.status, paired: view.paired || null });
      QZ.roundBar.refresh();
      // The records are not in hello: the top boards' own are read, at each (re)connection
      // (a move recorded between the screen's first read and its stream, or while the screen
      // was cut off, is shown now, not only after the next move).
      positions.refresh();
    },
    state(d) { show({ board: d.board, state: d.state }); },
    status(d) { show({ board: d.board, status: d.status }); },
    record(d) { positions.record(d); },
    event(d) { if (d.event && d.event.type === "started") QZ.roundBar.started(d.event); },
  });

  layout();
  // The wall clock at the top and the round line: written once a second, in the frames that
  // draw the cards' seconds (at most QZ.DRAW_SLACK_MS late), not in frames of their own.
  const nowEl = document.getElementById("now");
  let barSecond = null;
  const bar = {
    tick(now) {
      const second = Math.floor(now / 1000);
      if (second === barSecond) return;
      barSecond = second;
      QZ.setText(nowEl, QZ.time(now));
      QZ.roundBar.draw();
    },
    nextChange(now) { return 1000 - (now % 1000) + 1; },
  };
  QZ.animate(cards, [bar]);
})();
