// The standings page: GET /api/standings, refreshed on every SSE `game` message (no polling).
// Text is set with textContent only, so a player's name can never become markup.
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {
      title: "成绩排名", round: "轮次", tag: "组别", latest: "最新", all: "全部", after: "第{n}轮后",
      "g.u14": "14岁以下少儿", "g.women": "女子", "g.local": "本地", "g.master": "大师",
      "g.u14,women": "综合组（少儿、女子）", withdrawn: "（已退赛）",
      rank: "名次", player: "棋手", points: "积分", progressive: "累进分", wins: "胜局",
      fouls: "犯规", black_games: "后走局数", reason: "区分原因", lang: "English",
      disconnected: "与服务器的连接已断开，正在重连…", empty: "暂无成绩", error: "无法计算排名：{e}",
      "err.generic": "出错了（HTTP {status}）", "err.bad_standings": "成绩数据不一致，请检查导入的棋手与配对",
      "err.bad_request": "地址参数有误", "err.network": "无法连接站点",
      csv: "排名 CSV", "x-results": "本轮成绩 CSV", "x-pgn": "棋谱 PGN", "x-trf": "TRF",
      "to-arbiter": "裁判台", "to-pairing": "编排", "to-prizes": "奖励名单", "to-sheet": "对阵表",
      final: "最终排名", "ko-note": "第1–4名由淘汰赛决定（决赛、三四名决赛），第5名起按积分排名。",
      undecided: "尚有 {n} 局未出结果（{list}），本表未计入：裁定后自动更新。", "undecided.game": "第{r}轮第{b}台",
      "ko-mark": "淘汰赛第{n}名",
    },
    en: {
      title: "Standings", round: "Round", tag: "Group", latest: "latest", all: "all", after: "after round {n}",
      "g.u14": "Under 14", "g.women": "Women", "g.local": "Local", "g.master": "Masters",
      "g.u14,women": "Combined (under 14, women)", withdrawn: " (withdrawn)",
      rank: "Rank", player: "Player", points: "Points", progressive: "Progressive", wins: "Wins",
      fouls: "Fouls", black_games: "Games as black", reason: "Tie broken by", lang: "中文",
      disconnected: "Connection to the station lost, reconnecting…", empty: "No results yet",
      error: "Cannot compute the standings: {e}",
      "err.generic": "something went wrong (HTTP {status})",
      "err.bad_standings": "the results do not fit together; check the imported players and pairings",
      "err.bad_request": "a wrong address parameter", "err.network": "cannot reach the station",
      csv: "Standings CSV", "x-results": "Round results CSV", "x-pgn": "Games PGN", "x-trf": "TRF",
      "to-arbiter": "Arbiter", "to-pairing": "Pairing", "to-prizes": "Prize list", "to-sheet": "Pairings sheet",
      final: "Final standings",
      "ko-note": "Places 1–4 are decided by the knockout (the final and the third-place game); from 5th on, by the standings.",
      undecided: "{n} game(s) without a result yet ({list}) are not counted in this table; it updates once they are decided.", "undecided.game": "round {r} board {b}",
      "ko-mark": "knockout place {n}",
    },
  };
  const params = new URLSearchParams(location.search);
  let lang = QZP.initialLang();
  const t = QZP.words(TEXT, () => lang);
  const $ = (id) => document.getElementById(id);
  const state = { round: params.get("round") || "", tag: params.get("tag") || "", rows: [], tags: new Set(), final: false, withdrawn: new Set() };

  function query() {
    const q = new URLSearchParams();
    if (state.round) q.set("round", state.round);
    if (state.tag) q.set("tag", state.tag);
    return q.toString();
  }

  function applyText() {
    document.documentElement.lang = lang;
    document.title = (lang === "en" ? "qizhong · " : "棋钟 · ") + t("title");
    $("title").textContent = t(state.final || state.complete ? "final" : "title");
    $("ko-note").textContent = t("ko-note");
    $("ko-note").hidden = !state.final;
    // games of the rounds shown without a confirmed result: the table does not count them yet
    const open = state.undecided || [];
    const list = open.slice(0, 6).map((g) => t("undecided.game", { r: g.round, b: g.board }));
    $("undecided").textContent = open.length ? t("undecided", { n: open.length, list: list.join(lang === "en" ? ", " : "、") + (open.length > 6 ? " …" : "") }) : "";
    $("undecided").hidden = !open.length;
    $("round-label").textContent = t("round");
    $("tag-label").textContent = t("tag");
    $("round-all").textContent = t("latest");
    $("tag-all").textContent = t("all");
    for (const o of $("tag").querySelectorAll("option[data-tag]")) o.textContent = groupName(o.dataset.tag);
    $("lang").textContent = t("lang");
    $("conn").textContent = t("disconnected");
    for (const th of document.querySelectorAll("th[data-col]")) th.textContent = t(th.dataset.col);
    for (const id of ["csv", "x-results", "x-pgn", "x-trf", "to-arbiter", "to-pairing", "to-prizes", "to-sheet"]) $(id).textContent = t(id);
    if (state.error) showError();
    for (const opt of $("round").querySelectorAll("option[data-n]")) opt.textContent = t("after", { n: opt.dataset.n });
  }

  function cell(cls, text) {
    const td = document.createElement("td");
    td.className = cls;
    td.textContent = text;
    return td;
  }

  function render() {
    const body = $("rows");
    body.replaceChildren();
    if (!state.rows.length) {
      const tr = document.createElement("tr");
      const td = cell("empty", t("empty"));
      td.colSpan = 8;
      tr.append(td);
      body.append(tr);
    }
    // A tie-break's reason on the row it explains: why this player is below the one above,
    // shown where the two are level on points (a points gap explains itself; points compared
    // again after dropping rounds do not: "去除第1–3轮后，积分 9 > 7" is shown).
    state.rows.forEach((r, i) => {
      const above = i > 0 ? state.rows[i - 1] : null;
      // The knockout's four carry their mark; nobody borrows a reason from them (their places
      // are not the points table's).
      const explains = above && above.knockout_place == null && r.knockout_place == null &&
        above.points === r.points;
      r.why = r.knockout_place != null ? t("ko-mark", { n: r.knockout_place })
        : explains ? (lang === "en" ? above.reason_en : above.reason_zh) : "";
    });
    for (const r of state.rows) {
      const tr = document.createElement("tr");
      if (r.shared) tr.className = "shared";
      if (r.knockout_place != null) {
        tr.className = "knockout place-" + r.knockout_place;
        tr.dataset.knockoutPlace = String(r.knockout_place);
      }
      tr.append(
        // a withdrawn player is marked, as the pairing page marks him (an outsider organiser)
        cell("rank", r.rank), cell("player", state.withdrawn.has(r.player) ? r.player + t("withdrawn") : r.player), cell("points", r.points),
        cell("progressive", r.progressive), cell("wins", r.wins), cell("fouls", r.fouls),
        cell("black_games", r.black_games), cell("reason", r.why),
      );
      body.append(tr);
    }
    const q = query();
    // the CSV opens in a spreadsheet: its header row in the page's language
    $("csv").href = "/api/export/standings.csv?" + (q ? q + "&" : "") + "lang=" + (lang === "en" ? "en" : "zh");
    $("json").href = "/api/export/standings.json" + (q ? "?" + q : "");
    const round = state.round || state.lastRound;
    $("x-results").hidden = $("x-pgn").hidden = !round;
    if (round) {
      $("x-results").href = "/api/export/rounds/" + round + "/results.csv?lang=" + (lang === "en" ? "en" : "zh");
      $("x-pgn").href = "/api/export/rounds/" + round + "/games.pgn";
    }
    $("x-trf").href = "/api/export/tournament.trf" + (state.round ? "?round=" + state.round : "");
  }
  function showError() {
    const { status, body } = state.error;
    const code = body && body.code;
    const e = code && TEXT[lang]["err." + code] ? t("err." + code) : status ? t("err.generic", { status }) : t("err.network");
    $("error").textContent = t("error", { e });
    $("error").hidden = false;
  }

  const groupName = (name) => (TEXT[lang]["g." + name] ? t("g." + name) : name);
  function addOptions(rounds, tags) {
    const round = $("round");
    for (const n of rounds) {
      if (round.querySelector(`option[data-n="${n}"]`)) continue;
      const opt = document.createElement("option");
      opt.value = String(n);
      opt.dataset.n = String(n);
      opt.textContent = t("after", { n });
      round.append(opt);
    }
    const tag = $("tag");
    // the groups in words (it listed local / master / u14 / women), and Wulong's 综合组 — the
    // under-14s and the women ranked together — as one choice (an outsider organiser)
    const all = [...tags];
    if (all.includes("u14") && all.includes("women")) all.push("u14,women");
    for (const name of all) {
      if (state.tags.has(name)) continue;
      state.tags.add(name);
      const opt = document.createElement("option");
      opt.value = name;
      opt.dataset.tag = name;
      opt.textContent = groupName(name);
      tag.append(opt);
    }
    round.value = state.round;
    tag.value = state.tag;
  }

  // a burst of results: one more fetch, not N
  const load = QZP.coalesced(async () => {
    try {
      const r = await fetch("/api/standings" + (query() ? "?" + query() : ""));
      const body = await r.json().catch(() => ({}));
      if (!r.ok) { state.error = { status: r.status, body }; showError(); return; }
      state.error = null;
      $("error").hidden = true;
      state.rows = body.standings;
      state.final = body.final === true;
      state.complete = body.complete === true; // the last round played and decided (Wulong)
      state.undecided = Array.isArray(body.undecided) ? body.undecided : [];
      state.withdrawn = new Set(Array.isArray(body.withdrawn) ? body.withdrawn : []);
      applyText();
      const tags = new Set(Array.isArray(body.groups) ? body.groups : []);
      for (const row of state.rows) for (const x of row.tags) tags.add(x);
      // a group a corrected players file emptied leaves the menu (unless it is the one shown)
      if (tags.has("u14") && tags.has("women")) tags.add("u14,women");
      for (const o of $("tag").querySelectorAll("option[data-tag]"))
        if (!tags.has(o.dataset.tag) && o.dataset.tag !== state.tag) { state.tags.delete(o.dataset.tag); o.remove(); }
      addOptions([], [...tags].filter((x) => x !== "u14,women").sort());
      render();
      document.body.dataset.loaded = String(Date.now());
    } catch (e) {
      state.error = { status: 0, body: {} };
      showError();
    }
  });

  async function loadRounds() {
    try {
      const r = await fetch("/api/rounds");
      if (r.ok) {
        const rounds = (await r.json()).rounds.map((x) => x.round);
        state.lastRound = rounds.length ? Math.max(...rounds) : null;
        addOptions(rounds, []);
        render();
      }
    } catch (e) { /* the table still works without the round list */ }
  }

  function connect() {
    // the knockout's last result makes the final list
    QZP.stream({ hello: () => load(), game: () => { load(); loadRounds(); }, knockout: () => load(), tournament: () => { load(); loadRounds(); } }, $("conn"));
  }

  document.addEventListener("DOMContentLoaded", () => {
    applyText();
    $("lang").addEventListener("click", () => { lang = QZP.switchLang(lang); applyText(); render(); });
    for (const id of ["round", "tag"]) {
      $(id).addEventListener("change", () => {
        state[id] = $(id).value;
        const url = new URL(location.href);
        if (state[id]) url.searchParams.set(id, state[id]); else url.searchParams.delete(id);
        history.replaceState(null, "", url);
        load();
      });
    }
    if (state.tag) addOptions([], [state.tag]);
    loadRounds();
    connect();  // its `hello` loads the table; every `game` message reloads it
  });
})();
