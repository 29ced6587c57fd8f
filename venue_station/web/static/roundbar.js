// The round on the hall screen: its number, the time since it started, the late deadline
// counting down at its start with the sides still absent (no press yet), by board, and the
// next round's start from the schedule. /api/round says what the station knows; the absent
// sides come from the live snapshots. One write a second at most (the page calls draw() each
// second), only of changed text.
"use strict";
(function () {
  const QZ = window.QZ;
  const MAX_ABSENT = 16; // listed by board; more are counted ("+n")
  const els = {};
  let info = null, cards = null;

  function set(el, text) {
    if (el.textContent !== text) el.textContent = text;
    const hidden = !text;
    if (el.hidden !== hidden) el.hidden = hidden;
  }
  function clockText(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(sec).padStart(2, "0");
  }

  // Sides of the round's games that have not pressed yet (red: no move; black: no move).
  function absent(round) {
    const out = [];
    out.games = 0;
    const prefix = "r" + round + "-";
    for (const board of [...cards.keys()].sort(QZ.boardKey)) {
      const st = cards.get(board).view.state;
      if (!st || !st.game || !st.game.startsWith(prefix)) continue;
      out.games += 1;
      if (st.result || st.flag) continue;
      if (st.phase !== "running" && st.phase !== "paused" && st.phase !== "ready") continue;
      for (const side of ["red", "black"]) if (!st.moves || !st.moves[side]) out.push([board, side]);
    }
    return out;
  }

  function draw() {
    if (!cards) return;
    const now = QZ.clock.now();
    const round = info && info.round;
    const fixed = els.round.dataset.round;
    if (!fixed) set(els.round, round ? QZ.t("round", { n: round }) : "");
    // once every game of the round on this screen is over, its time stops (an outsider saw
    // 已进行 4:26 run on beside eight finished games)
    const games = round ? [...cards.values()].map((c) => c.view.state)
      .filter((st) => st && st.game && st.game.startsWith("r" + round + "-")) : [];
    // (a board of the round whose clock was never seen has not played its game)
    const unseen = round && [...cards.values()].some((c) => !c.view.state && c.view.paired && c.view.paired.game.startsWith("r" + round + "-"));
    const over = !unseen && games.length > 0 && games.every((st) => st.phase === "finished" || st.result);
    set(els.elapsed, round && info.started_ms ? (over ? QZ.t("screen.over")
      : QZ.t("screen.elapsed", { t: clockText(now - info.started_ms) })) : "");
    let late = "";
    const counting = round && info.late_deadline_ms && now < info.late_deadline_ms;
    const who = counting ? absent(round) : [];
    // Once every player of the round's games on this screen has pressed, nobody can be late:
    // the countdown stops (before the games show here, it runs).
    if (counting && (who.length || !who.games)) {
      const names = who.slice(0, MAX_ABSENT).map(([b, side]) => QZ.t("screen.absent_side", { n: b, side: QZ.t("screen.side_" + side) }));
      if (who.length > MAX_ABSENT) names.push("+" + (who.length - MAX_ABSENT));
      late = QZ.t("screen.late", { t: clockText(info.late_deadline_ms - now) }) +
        (who.length ? " · " + QZ.t("screen.absent", { n: who.length }) + " " + names.join(" ") : "");
      if (els.late.dataset.absent !== String(who.length)) els.late.dataset.absent = String(who.length);
    }
    set(els.late, late);
    const next = info && info.next;
    set(els.next, next && next.time ? QZ.t("screen.next", { n: next.round, time: next.time, date: next.date || "" }) : "");
  }

  QZ.roundBar = {
    // The page calls draw() each second (display.js: in the frames that draw its cards).
    start(allCards) {
      cards = allCards;
      for (const id of ["round", "elapsed", "late", "next"]) els[id] = document.getElementById(id);
    },
    async refresh() {
      try {
        const res = await fetch("/api/round", { headers: { accept: "application/json" } });
        if (res.ok) info = await res.json();
      } catch (e) { /* the stream's banner already says the station is unreachable */ }
      draw();
    },
    changed() { /* the absent list is read from the cards at the next second */ },
    // A board's `started` event: a new round shows at once (the store may not have it yet),
    // then the station is asked again for the schedule.
    started(ev) {
      const m = /^r(\d+)-/.exec(ev.game || "");
      if (!m || !info) return;
      const round = Number(m[1]);
      if (info.round === null || round > info.round) {
        info = { ...info, round, started_ms: ev.ts, late_deadline_ms: ev.ts + info.late_ms, next: null };
        draw();
        setTimeout(() => QZ.roundBar.refresh(), 2000);
      }
    },
    draw,
  };
})();
