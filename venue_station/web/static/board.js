// A board's detail: the live card, the position and moves of its game record (issue 29: drawn
// from the station's FEN and Chinese notation; no rules here), the per-move time chart and the
// event history.
"use strict";
(function () {
  const board = decodeURIComponent(location.pathname.split("/").pop());
  const card = new QZ.Card(board, { link: false });
  document.getElementById("card-slot").append(card.el);
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
    for (const ev of view.events || []) addEvent(ev);
    redrawHistory();
    await loadGame(view.state ? view.state.game : null);
  }

  // -- the game record: the position after the last recorded move, the moves in Chinese ---------
  // Chinese glyphs; in English the WXF letters (K A E H R C P) and the moves in WXF.
  const GLYPHS = { K: "帅", A: "仕", B: "相", N: "马", R: "车", C: "炮", P: "兵",
                   k: "将", a: "士", b: "象", n: "马", r: "车", c: "炮", p: "卒" };
  const LETTERS = { K: "K", A: "A", B: "E", N: "H", R: "R", C: "C", P: "P" };
  let lastRecord = null;
  const xq = document.getElementById("xq");
  const recordBox = document.getElementById("record-box");
  const recordMoves = document.getElementById("record-moves");
  for (let i = 0; i < 90; i++) {
    xq.append(QZ.el("span", { class: "cell", "data-r": String(Math.floor(i / 9)), "data-c": String(i % 9) }));
  }
  function drawRecord(view) {
    if (!view || typeof view.fen !== "string" || !Array.isArray(view.moves)) return;
    const rows = view.fen.split(" ")[0].split("/");
    if (rows.length !== 10) return;
    lastRecord = view;
    const en = QZ.lang === "en";
    const cells = xq.children;
    rows.forEach((row, r) => {
      let c = 0;
      for (const ch of row) {
        if (ch >= "1" && ch <= "9") {
          for (let k = 0; k < Number(ch) && c < 9; k++, c++) { cells[r * 9 + c].textContent = ""; cells[r * 9 + c].className = "cell"; }
        } else if (c < 9) {
          const cell = cells[r * 9 + c++];
          cell.textContent = (en ? LETTERS[ch.toUpperCase()] : GLYPHS[ch]) || "";
          cell.className = "cell " + (ch === ch.toUpperCase() ? "red" : "black");
        }
      }
    });
    recordMoves.replaceChildren(...view.moves.map((m) =>
      QZ.el("li", { class: m.side === "black" ? "black" : "red", text: String((en ? m.wxf : m.chinese) || "") })));
    recordBox.dataset.ply = String(view.moves.length);
    recordBox.hidden = false;
  }
  async function loadRecord() {
    const r = await fetch("/api/records/" + encodeURIComponent(board));
    if (r.ok) drawRecord(await r.json());
  }

  QZ.stream({
    record(d) { if (d.board === board && (!game || d.game === game)) drawRecord(d); },
    hello(d) {
      document.getElementById("venue").textContent = d.station ? d.station.venue : "";
      const view = (d.boards || []).find((b) => b.board === board);
      if (view) { card.missing = false; card.update({ state: view.state, status: view.status }); }
    },
    state(d) {
      if (d.board !== board) return;
      card.update({ state: d.state });
      if (d.state.game !== game) { loadGame(d.state.game); loadRecord(); }
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
  load().then(loadRecord);
})();
