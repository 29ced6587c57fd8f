// The arbiter page's 撤销结果 (board_actions.js): the result that stands on the chosen board taken
// back when it was a mistake — entered on the wrong board, a flag confirmed while its clock was
// at fault (an outsider chief could only replace it with another result, as wrong). Two taps
// send the board's `withdraw` of that result (docs/web.md); the game goes on, paused and held
// by the arbiter (after a flag, its side is given time first: the flag hint says so).
// Read from the station (GET /api/events, the game's results) when the board's result changes.
// ``page``: { selected() → the chosen board, card(board), api, boardCmd } of arbiter.js.
"use strict";
(function () {
  const QZ = window.QZ;
  const $ = (id) => document.getElementById(id);
  QZ.resultBack = function (page) {
    let shown = { key: null, seq: null };
    // The referee's standing result: the newest one (by its first report) not dismissed.
    function standing(events) {
      const latest = new Map();
      for (const ev of events) {
        const d = ev.data || {};
        latest.set(d.ref || ev.seq, d.status || "confirmed");
      }
      const live = [...latest].filter(([, status]) => status !== "dismissed").map(([seq, status]) => ({ seq, status }));
      const last = live.sort((a, b) => a.seq - b.seq).pop();
      return last && last.status === "confirmed" ? last.seq : null;
    }
    function keyOf() {
      const b = page.selected();
      const st = b ? page.card(b).view.state : null;
      const r = st && st.result && typeof st.result === "object" ? st.result : null;
      return r && st.game ? [b, st.game, r.winner, r.reason].join("|") : null;
    }
    async function load(key, tries = 0) {
      const [b, game] = key.split("|");
      const q = "/api/events?type=result&order=asc&limit=1000&board=" + encodeURIComponent(b) + "&game=" + encodeURIComponent(game);
      const { status, data } = await page.api("GET", q);
      if (status !== 200 || keyOf() !== key) return;
      shown = { key, seq: standing(data.events || []) };
      render();
      // the board's state can come before its result is stored (a busy station): ask again
      if (shown.seq === null && tries < 10) setTimeout(() => { if (keyOf() === key) load(key, tries + 1).catch(() => {}); }, 1000);
    }
    const button = $("result-back");
    let armed = null;
    function disarm() {
      if (armed) clearTimeout(armed);
      armed = null;
      button.classList.remove("armed");
    }
    function render() {
      const on = shown.key !== null && shown.key === keyOf() && shown.seq !== null;
      button.hidden = !on;
      // after a flag the game waits for the flagged side's time, not for 继续 (an outsider)
      const flag = (shown.key || "").endsWith("|flag");
      button.textContent = QZ.t(armed ? (flag ? "result.back.again.flag" : "result.back.again") : "result.back");
    }
    // Two taps, the second within 5 s (a double click's second click is the same gesture).
    button.addEventListener("click", (ev) => {
      if (ev.detail > 1 || shown.seq === null) return;
      const b = page.selected();
      if (!armed) {
        button.classList.add("armed");
        armed = setTimeout(() => { disarm(); render(); }, 5000);
        render();
        return;
      }
      disarm();
      const seq = shown.seq;
      shown = { key: null, seq: null };
      render();
      Promise.resolve(page.boardCmd(b, "withdraw", { seq }, () => QZ.t("board", { n: b }) + " " + QZ.t("result.back.what")))
        .catch(() => {}).finally(sync); // refused: the result still stands, and so does the button
    });
    // The chosen board's result changed (or another board is chosen): read which event it is.
    function sync() {
      const key = keyOf();
      if (key === shown.key) { render(); return; }
      disarm();
      shown = { key, seq: null };
      render();
      if (key) load(key).catch(() => {});
    }
    return { sync, render };
  };
})();
