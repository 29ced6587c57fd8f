// A board's detail: the live card, the position and moves of its game record (issue 29: drawn
// from the station's FEN and Chinese notation; no rules here), the per-move time chart and the
// event history.
"use strict";
(function () {
  const board = decodeURIComponent(location.pathname.split("/").pop());
  // ?game=: a past game of this board (its record, its clock chart), not the one it plays now
  const wanted = new URLSearchParams(location.search).get("game");
  const card = new QZ.Card(board, { link: false });
  const slot = document.getElementById("card-slot");
  slot.append(card.el);
  // an earlier game asked for: the board's live card (another game now) is not shown above
  // its record as if it were that game's (an outsider organiser); 本台当前对局 links to it
  const showCard = (st) => { slot.hidden = !!(wanted && st && st.game && st.game !== wanted); };
  const chartBox = document.getElementById("chart");
  const history = document.getElementById("history");
  let game = null;
  let moves = [];
  const seen = new Set();

  QZ.applyI18n();
  QZ.langButton(document.getElementById("lang"));
  QZ.onLang.push(() => { card.render(); QZ.drawChart(chartBox, moves); redrawHistory(); drawRecord(lastRecord); });
  const events = [];

  function redrawHistory() {
    history.textContent = "";
    for (const ev of events.slice(-200).reverse())
      history.append(QZ.el("li", { "data-type": ev.type }, QZ.el("time", { text: QZ.time(ev.ts) }), " ", QZ.describeEvent(ev)));
  }
  function addEvent(ev) {
    const key = ev.session + ":" + ev.seq;
    if (seen.has(key)) return;
    seen.add(key);
    events.push(ev);
    events.sort((a, b) => a.session - b.session || a.seq - b.seq);
    if (ev.type === "move" && ev.game === game)
      moves.push({ move: ev.data.move, side: ev.data.side, used_ms: ev.data.used_ms });
  }

  async function loadGame(g) {
    game = g;
    moves = [];
    if (!g) { QZ.drawChart(chartBox, moves); return; }
    const url = `/api/events?board=${encodeURIComponent(board)}&game=${encodeURIComponent(g)}&type=move&limit=1000`;
    const r = await fetch(url);
    if (r.ok) {
      const body = await r.json();
      for (const ev of body.events) {
        const key = ev.session + ":" + ev.seq;
        if (!seen.has(key)) { seen.add(key); events.push(ev); }
      }
      events.sort((a, b) => a.session - b.session || a.seq - b.seq);
      moves = events.filter((e) => e.type === "move" && e.game === g)
        .map((e) => ({ move: e.data.move, side: e.data.side, used_ms: e.data.used_ms }));
    }
    QZ.drawChart(chartBox, moves);
    redrawHistory();
  }

  async function load() {
    const r = await fetch("/api/boards/" + encodeURIComponent(board));
    // No board by this id in the station: say so, not "not connected".
    if (r.status === 404) { card.missing = true; card.render(); document.body.dataset.missing = "1"; return; }
    if (!r.ok) return;
    const view = await r.json();
    card.update({ state: view.state, status: view.status });
    showCard(view.state);
    for (const ev of view.events || []) addEvent(ev);
    redrawHistory();
    await loadGame(wanted || (view.state ? view.state.game : null));
  }

  // -- the game record: the position after the last recorded move, the moves in Chinese ---------
  // Drawn by xq.js (Chinese glyphs; in English the WXF letters and the moves in WXF).
  let lastRecord = null;
  const xq = document.getElementById("xq");
  const recordBox = document.getElementById("record-box");
  const recordMoves = document.getElementById("record-moves");
  QZ.xqCells(xq);
  function drawRecord(view) {
    if (!view || !Array.isArray(view.moves)) return;
    // A read answered after a newer record came on the stream: keep the newer one.
    if (lastRecord && view.game === lastRecord.game && view.updated_ms < lastRecord.updated_ms) return;
    const last = view.moves[view.moves.length - 1];
    if (!QZ.xqDraw(xq, view.fen, last && last.iccs)) return;
    lastRecord = view;
    // numbered by 回合 as the score sheet and the PGN are (it numbered plies: "5." was another move)
    let round = 0;
    recordMoves.replaceChildren(...view.moves.map((m) =>
      QZ.el("li", { class: m.side === "black" ? "black" : "red" },
        QZ.el("span", { class: "no", text: m.side === "black" ? "" : ++round + "." }), QZ.el("span", { class: "mv", text: QZ.xqMove(m) }))));
    recordBox.dataset.ply = String(view.moves.length);
    recordBox.dataset.game = view.game;
    document.getElementById("record-title").textContent =
      QZ.t("board.record.round", { r: view.round, red: view.red, black: view.black });
    // the records exist for online reporting: this game's PGN and the whole round's
    document.getElementById("record-pgn").href = "/api/export/games/" + encodeURIComponent(view.game) + "/record.pgn";
    document.getElementById("round-pgn").href = "/api/export/rounds/" + view.round + "/records.pgn";
    const current = document.getElementById("record-current");
    current.hidden = !wanted;
    current.href = "/board/" + encodeURIComponent(board);
    recordBox.hidden = false;
  }
  async function loadRecord() {
    const q = wanted ? "?game=" + encodeURIComponent(wanted) : "";
    const r = await fetch("/api/records/" + encodeURIComponent(board) + q);
    if (r.ok) drawRecord(await r.json());
  }

  let hellos = 0;
  // A read the network failed (the page cut off): nothing to say, the next hello reads again.
  const quietly = (p) => p.catch(() => {});
  QZ.stream({
    record(d) {
      const shown = wanted || game;
      if (d.board === board && (!shown || d.game === shown)) drawRecord(d);
    },
    hello(d) {
      document.getElementById("venue").textContent = d.station ? (d.station.title || d.station.venue) : "";
      const view = (d.boards || []).find((b) => b.board === board);
      if (view) { card.missing = false; card.update({ state: view.state, status: view.status }); showCard(view.state); }
      // The stream is (again) connected: what was recorded or happened before it, or while
      // the page was cut off (a phone off the hall's wifi), is read once now. The first
      // hello too: a move recorded between the page's first read and the stream was lost.
      if (hellos++) quietly(load()); // the board's events (the first read is under way)
      quietly(loadRecord());
    },
    state(d) {
      if (d.board !== board) return;
      card.update({ state: d.state });
      showCard(d.state);
      if (!wanted && d.state.game !== game) { quietly(loadGame(d.state.game)); quietly(loadRecord()); }
    },
    status(d) { if (d.board === board) card.update({ status: d.status }); },
    event(d) {
      if (d.board !== board) return;
      addEvent(d.event);
      if (d.event.type === "move") QZ.drawChart(chartBox, moves);
      redrawHistory();
    },
  });
  QZ.animate(new Map([[board, card]]));
  QZ.loadReasons().then(redrawHistory);
  quietly(load().then(loadRecord));
})();
