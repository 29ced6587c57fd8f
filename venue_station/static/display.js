// The hall display: every board of the round, counting down from the timestamped snapshots.
"use strict";
(function () {
  const cards = new Map();
  const grid = document.getElementById("grid");
  const params = new URLSearchParams(location.search);
  const onlyRound = params.get("round");

  function inRound(view) {
    if (!onlyRound) return true;
    const game = view.state && view.state.game;
    return !!game && game.startsWith("r" + onlyRound + "-");
  }

  function card(board) {
    let c = cards.get(board);
    if (!c) {
      c = new QZ.Card(board);
      cards.set(board, c);
      const sorted = [...cards.keys()].sort(QZ.boardKey);
      const next = sorted[sorted.indexOf(board) + 1];
      grid.insertBefore(c.el, next ? cards.get(next).el : null);
      const empty = grid.querySelector(".empty");
      if (empty) empty.remove();
    }
    return c;
  }

  function show(view) {
    if (!inRound(view) && !cards.has(view.board)) return;
    card(view.board).update(view);
  }

  QZ.applyI18n();
  QZ.langButton(document.getElementById("lang"));
  QZ.onLang.push(() => { for (const c of cards.values()) c.render(); showRound(); });
  if (onlyRound) document.getElementById("round").dataset.round = onlyRound;
  function showRound() {
    const r = document.getElementById("round");
    r.textContent = r.dataset.round ? QZ.t("round", { n: r.dataset.round }) : "";
  }
  showRound();

  QZ.stream({
    hello(d) {
      document.getElementById("venue").textContent = d.station ? d.station.venue : "";
      for (const view of d.boards || []) show({ board: view.board, state: view.state, status: view.status });
    },
    state(d) { show({ board: d.board, state: d.state }); },
    status(d) { show({ board: d.board, status: d.status }); },
  });

  const nowEl = document.getElementById("now");
  let lastSecond = -1;
  QZ.animate(cards);
  (function clock() {
    const s = Math.floor(QZ.clock.now() / 1000);
    if (s !== lastSecond) { lastSecond = s; nowEl.textContent = QZ.time(s * 1000); }
    requestAnimationFrame(clock);
  })();
})();
