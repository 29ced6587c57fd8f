// The arbiter page's list of the chosen game's confirmed fouls (arbiter.js), each with 撤销 for
// one recorded by mistake: two taps send the board's `withdraw`, and a loss by fouls it
// completed goes with it (docs/web.md). Read from the station (GET /api/events, the game's
// fouls), again when one of the board's fouls arrives on the stream.
// ``page``: { selected() → the chosen board, card(board), api, boardCmd } of arbiter.js.
"use strict";
(function () {
  const QZ = window.QZ;
  const $ = (id) => document.getElementById(id);
  QZ.foulList = function (page) {
    let shown = { board: null, game: null, fouls: [] };
    // The latest ruling of each foul (its own report, or the ruling naming it by ref), oldest
    // first; the confirmed ones, with the event that first reported them.
    function confirmed(events) {
      const byKey = new Map();
      for (const ev of events) {
        const d = ev.data || {};
        const key = d.ref || ev.seq;
        const had = byKey.get(key);
        byKey.set(key, { seq: key, first: had ? had.first : ev, status: d.status });
      }
      return [...byKey.values()].filter((f) => f.status === "confirmed");
    }
    async function load() {
      const b = page.selected();
      const st = b ? page.card(b).view.state : null;
      if (!st || !st.game) { shown = { board: b, game: null, fouls: [] }; render(); return; }
      const q = "/api/events?type=foul&order=asc&limit=1000&board=" + encodeURIComponent(b) + "&game=" + encodeURIComponent(st.game);
      const { status, data } = await page.api("GET", q);
      if (status !== 200 || page.selected() !== b) return;
      shown = { board: b, game: st.game, fouls: confirmed(data.events || []) };
      render();
    }
    function render() {
      const box = $("board-fouls");
      box.hidden = !shown.game;
      const list = $("board-foul-rows");
      list.textContent = "";
      if (!shown.fouls.length) list.append(QZ.el("li", { class: "hint", text: QZ.t("fouls.none") }));
      for (const f of shown.fouls) {
        const d = f.first.data || {};
        const what = QZ.t(d.side) + " · " + QZ.reason(d.reason);
        const button = QZ.el("button", { type: "button", class: "needs-arbiter", "data-action": "withdraw", "data-seq": f.seq, text: QZ.t("withdraw") });
        arm(button, () => {
          const board = shown.board;
          return page.boardCmd(board, "withdraw", { seq: f.seq },
            () => QZ.t("board", { n: board }) + " " + QZ.t("withdraw.what") + " " + what);
        });
        list.append(QZ.el("li", { "data-seq": f.seq }, QZ.el("time", { text: QZ.time(f.first.ts) }), " " + what + " ", button));
      }
    }
    // Two taps, the second within 5 s (a double click's second click is the same gesture).
    function arm(button, run) {
      let armed = null;
      button.addEventListener("click", (ev) => {
        if (ev.detail > 1) return;
        if (!armed) {
          button.dataset.armed = "1";
          button.classList.add("armed");
          button.textContent = QZ.t("withdraw.again");
          armed = setTimeout(() => { armed = null; delete button.dataset.armed; button.classList.remove("armed"); button.textContent = QZ.t("withdraw"); }, 5000);
          return;
        }
        clearTimeout(armed);
        button.disabled = true;
        Promise.resolve().then(run).catch(() => {}).finally(() => load().catch(() => {}));
      });
    }
    // The chosen board now shows another game (or another board is chosen): read its fouls.
    let asked = null;
    function sync() {
      const b = page.selected();
      const st = b ? page.card(b).view.state : null;
      const key = b + "|" + ((st && st.game) || "");
      if (key === asked || (b === shown.board && ((st && st.game) || null) === shown.game)) return;
      asked = key;
      load().catch(() => {}).finally(() => { if (asked === key) asked = null; });
    }
    return { load, render, sync };
  };
})();
