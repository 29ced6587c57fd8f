// The federation overview: per venue its boards' clocks, its games' results and its standings.
// zh-CN by default, English by the switch (?lang=en), like the venue pages (static/i18n.js).
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {title: "联赛总览（只读）", venue: "赛场", board: "台次", red: "红方", black: "黑方",
              phase: "状态", result: "结果", none: "暂无数据", live: "实时棋钟",
              standings: "排名", rank: "名次", player: "棋手", points: "积分",
              progressive: "累进分", wins: "胜局", games: "对局", round: "轮次", game: "对局号",
              pending: "待确认", skipped: "未计入排名"},
    "en": {title: "Federation overview (read-only)", venue: "Venue", board: "Board", red: "Red",
           black: "Black", phase: "Phase", result: "Result", none: "No data yet",
           live: "Live clocks", standings: "Standings", rank: "Rank", player: "Player",
           points: "Points", progressive: "Progressive", wins: "Wins", games: "Games",
           round: "Round", game: "Game", pending: "pending", skipped: "Not in the standings"},
  };
  const lang = new URLSearchParams(location.search).get("lang") === "en" ? "en" : "zh-CN";
  const t = (k) => TEXT[lang][k];
  document.documentElement.lang = lang;
  const switcher = document.getElementById("lang");
  switcher.textContent = lang === "en" ? "中文" : "English";
  switcher.href = lang === "en" ? "?" : "?lang=en";
  document.getElementById("live").href = lang === "en" ? "live?lang=en" : "live";
  document.querySelectorAll("[data-t]").forEach((el) => { el.textContent = t(el.dataset.t); });
  const mmss = (ms) => `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`;

  function table(head, rows, cls) {
    const el = document.createElement("table");
    if (cls) el.className = cls;
    const h = el.insertRow();
    for (const k of head) { const th = document.createElement("th"); th.textContent = t(k); h.appendChild(th); }
    for (const cells of rows) {
      const row = el.insertRow();
      for (const c of cells) row.insertCell().textContent = c === null || c === undefined ? "" : String(c);
    }
    return el;
  }

  function gameText(g) {
    if (g.result) return g.result;
    if (g.status === "pending") return `${g.proposed || ""} (${t("pending")})`;
    return "";
  }

  async function venueBlock(v) {
    const id = encodeURIComponent(v.venue);
    const [boards, st] = await Promise.all([
      fetch(`api/venues/${id}/boards`).then((r) => r.json()),
      fetch(`api/venues/${id}/standings`).then((r) => r.json()),
    ]);
    const now = Date.now();
    const clocks = boards.map((b) => {
      const s = b.state;
      const left = (side) => s.running === side && s.phase === "running" ? s[`${side}_ms`] - (now - s.ts) : s[`${side}_ms`];
      // each side: the player (when the board's state names one) and the time left
      const side = (k) => [typeof s[k] === "string" ? s[k] : "", mmss(Math.max(0, left(k) || 0))].filter(Boolean).join(" ");
      return [b.board, side("red"), side("black"), QZW.phase(s.phase, lang), QZW.result(s.result, lang)];
    });
    const h = document.createElement("h2");
    h.textContent = `${t("venue")} ${v.name || v.venue}`; // the hub's name for it, else its id
    const parts = [h, table(["board", "red", "black", "phase", "result"], clocks, "clocks")];
    const h3 = document.createElement("h3");
    h3.textContent = t("standings");
    const ranks = (st.standings || []).map((r) => [r.rank, r.player, r.points, r.progressive, r.wins, r.games]);
    parts.push(h3, table(["rank", "player", "points", "progressive", "wins", "games"], ranks, "standings"));
    const games = (st.games || []).map((g) => [g.round, g.board, g.red, g.black, gameText(g)]);
    parts.push(table(["round", "board", "red", "black", "result"], games, "games"));
    if ((st.skipped || []).length) {
      const p = document.createElement("p");
      p.className = "skipped";
      const sep = lang === "en" ? "; " : "；";
      p.textContent = `${t("skipped")}: ` + st.skipped.map((s) =>
        `${QZW.game(s.game, lang)} ${t("board")} ${s.board} (${QZW.skipped(s.code, lang)})`).join(sep);
      parts.push(p);
    }
    const div = document.createElement("section");
    div.dataset.venue = v.venue;
    div.append(...parts);
    return div;
  }

  async function draw() {
    const root = document.getElementById("venues");
    const venues = await (await fetch("api/venues")).json();
    if (!venues.length) { root.textContent = t("none"); return; }
    root.replaceChildren(...await Promise.all(venues.map(venueBlock)));
  }
  draw(); setInterval(draw, 2000);
})();
