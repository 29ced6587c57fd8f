// The prize list page (奖励名单): GET /api/prizes, refreshed on every SSE `game`/`knockout`
// message. Text is set with textContent only, so a player's name can never become markup.
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {
      heading: "奖励名单", csv: "奖励名单 CSV", print: "打印", "to-standings": "成绩排名", lang: "English",
      place: "名次", player: "棋手", prize: "奖金（元）", note: "说明",
      total: "合计", "list.total": "本项奖金 {paid} 元（全额 {total} 元）",
      summary: "报名参赛 {n} 人 · 奖金总额 {total} 元，本表发放 {paid} 元",
      combinable: "以上奖项可重复领取。",
      shrunk: "报名参赛 {n} 人，不足 {below} 人：受奖面为总人数的 {percent}%，取前 {paid} 名（共设 {places} 名）。",
      places: "取前 {places} 名。", "places.few": "本组 {n} 人，设 {places} 名奖。", none: "暂无获奖者", "none.members": "本组没有棋手",
      "g.u14": "少儿", "g.women": "女子", "g.local": "本地", "g.master": "大师",
      "final.note": "最终名单：全部轮次已结束，成绩均已裁定。",
      shared: "并列第{place}–{to}名，平分", pending: "第1–4名待淘汰赛决出", withdrawn: "已退赛", ko: "淘汰赛第{n}名",
      provisional: "暂定名单：{why}。最终名单以全部比赛结束、成绩裁定后为准。",
      "why.rounds": "比赛轮次尚未全部结束", "why.undecided": "尚有对局未出结果",
      "why.knockout": "淘汰赛尚未结束（第1–4名待淘汰赛决出，其余从第5名起排）",
      final: "最终名单", short: "暂定", disconnected: "与服务器的连接已断开，正在重连…",
      "err.no_prizes": "本赛事规程未设奖励办法", "err.bad_standings": "成绩数据不一致，请检查导入的棋手与配对",
      "err.generic": "出错了（HTTP {status}）", "err.network": "无法连接站点", error: "无法生成奖励名单：{e}",
    },
    en: {
      heading: "Prize list", csv: "Prize list CSV", print: "Print", "to-standings": "Standings", lang: "中文",
      place: "Place", player: "Player", prize: "Prize (yuan)", note: "Note",
      total: "Total", "list.total": "This list pays {paid} yuan (in full {total} yuan)",
      summary: "{n} registered players · prize fund {total} yuan, {paid} yuan paid in all",
      combinable: "A player may take a prize in each list.",
      shrunk: "{n} registered players, fewer than {below}: prizes go to {percent}% of them, the first {paid} places (of {places}).",
      places: "The first {places} places.", "places.few": "{n} players in this list, {places} prizes.",
      none: "No prize winners yet", "none.members": "No player is in this group",
      "g.u14": "under 14", "g.women": "woman", "g.local": "local player", "g.master": "master player",
      "final.note": "Final list: every round is over and every result decided.",
      shared: "places {place}–{to} shared equally", pending: "places 1–4 decided by the knockout", withdrawn: "withdrawn", ko: "knockout place {n}",
      provisional: "Provisional: {why}. The list is final once every game is played and decided.",
      "why.rounds": "not every round has been played", "why.undecided": "some games have no result yet",
      "why.knockout": "the knockout is not finished (its four take places 1–4, the others rank from 5th)",
      final: "Final list", short: "provisional", disconnected: "Connection to the station lost, reconnecting…",
      "err.no_prizes": "this event's regulation has no prizes",
      "err.bad_standings": "the results do not fit together; check the imported players and pairings",
      "err.generic": "something went wrong (HTTP {status})", "err.network": "cannot reach the station",
      error: "Cannot draw the prize list: {e}",
    },
  };
  let lang = QZP.initialLang();
  const t = QZP.words(TEXT, () => lang);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  };
  const state = { sheet: null, error: null, event: "" };
  const yuan = (s) => { const n = Number(s); return Number.isInteger(n) ? String(n) : s; };
  const fen = (s) => Math.round(Number(s) * 100);

  function applyText() {
    document.documentElement.lang = lang;
    document.title = (lang === "en" ? "qizhong · " : "棋钟 · ") + t("heading");
    for (const id of ["heading", "csv", "print", "to-standings", "lang"]) $(id).textContent = t(id);
    $("csv").href = "/api/export/prizes.csv?lang=" + (lang === "en" ? "en" : "zh");
    $("conn").textContent = t("disconnected");
    $("title").textContent = state.event;
  }

  function note(row) {
    const notes = [];
    if (row.knockout_place) notes.push(t("ko", { n: row.knockout_place }));
    if (row.knockout_pending) notes.push(t("pending"));
    else if (row.shared) notes.push(t("shared", { place: row.place, to: row.to }));
    for (const tag of row.tags || []) notes.push(t("g." + tag));  // why he is in this group
    if (row.withdrawn) notes.push(t("withdrawn"));
    return notes.join(lang === "en" ? "; " : "；");
  }

  function listSection(list, registered) {
    const sec = el("section", "prize-list");
    sec.dataset.list = list.key;
    sec.append(el("h2", "", lang === "en" ? list.en : list.zh));
    const rule = list.shrunk
      ? t("shrunk", { n: registered, below: list.shrunk.below, percent: list.shrunk.percent, paid: list.paid_places, places: list.places })
      : list.members < list.places ? t("places.few", { n: list.members, places: list.places })
        : t("places", { places: list.places });
    sec.append(el("p", "list-note", rule));
    const table = el("table", "standings prizes");
    const head = el("tr");
    for (const col of ["place", "player", "prize", "note"]) {
      const th = el("th", "", t(col));
      th.dataset.col = col;
      head.append(th);
    }
    table.append(el("thead"));
    table.tHead.append(head);
    const body = el("tbody");
    if (!list.rows.length) {
      const tr = el("tr");
      // a group nobody is in says so: "yet" on a final list read as a list still to come
      const td = el("td", "empty", t(list.members ? "none" : "none.members"));
      td.colSpan = 4;
      tr.append(td);
      body.append(tr);
    }
    for (const row of list.rows) {
      const tr = el("tr", row.shared ? "shared" : "");
      tr.dataset.player = row.player;
      const place = row.shared ? row.place + "–" + row.to : String(row.place);
      tr.append(el("td", "rank", place), el("td", "player", row.player), el("td", "prize", row.prize === "" ? "—" : yuan(row.prize)), el("td", "note", note(row)));
      body.append(tr);
    }
    table.append(body);
    const foot = el("tfoot");
    const tr = el("tr");
    const label = el("td", "", t("total"));
    label.colSpan = 2;
    const sum = el("td", "prize", yuan(list.paid));
    sum.dataset.total = list.paid;
    tr.append(label, sum, el("td", "note", t("list.total", { paid: yuan(list.paid), total: yuan(list.total) })));
    foot.append(tr);
    table.append(foot);
    sec.append(table);
    return sec;
  }

  function render() {
    applyText();
    const box = $("lists");
    box.replaceChildren();
    const s = state.sheet;
    if (state.error) { $("provisional").hidden = true; showError(); return; }
    $("error").hidden = true;
    if (!s) return;
    const paid = s.lists.reduce((a, l) => a + fen(l.paid), 0);
    const paidText = yuan((paid / 100).toFixed(2));
    $("summary").textContent = t("summary", { n: s.registered, total: yuan(s.total), paid: paidText }) +
      (s.combinable && s.lists.length > 1 ? " · " + t("combinable") : "");
    const why = s.provisional.map((w) => t("why." + w)).join(lang === "en" ? "; " : "；");
    $("provisional").textContent = s.final ? t("final.note") : t("provisional", { why });
    $("provisional").classList.toggle("final", s.final);
    $("provisional").hidden = false;  // 暂定 or 最终名单: always said (a reviewer: it never showed)
    const name = document.createElement("span");
    name.translate = false;  // the organiser's own words in either language
    name.textContent = state.event ? state.event + " · " : "";
    $("sheet-title").replaceChildren(name, t("heading") + " · " + (s.final ? t("final") : t("short")));
    for (const list of s.lists) box.append(listSection(list, s.registered));
  }

  function showError() {
    const { status, body } = state.error;
    const code = body && body.code;
    const e = code && TEXT[lang]["err." + code] ? t("err." + code) : status ? t("err.generic", { status }) : t("err.network");
    $("error").textContent = t("error", { e });
    $("error").hidden = false;
  }

  const load = QZP.coalesced(async () => {
    try {
      const r = await fetch("/api/prizes");
      const body = await r.json().catch(() => ({}));
      state.error = r.ok ? null : { status: r.status, body };
      state.sheet = r.ok ? body : null;
    } catch (e) {
      state.error = { status: 0, body: {} };
    } finally {
      render();
      document.body.dataset.loaded = String(Date.now());
    }
  });

  async function loadTitle() {
    try {
      const r = await fetch("/api/station");
      if (r.ok) { state.event = (await r.json()).title || ""; applyText(); render(); }
    } catch (e) { /* the list works without its heading */ }
  }

  function connect() {
    // its `hello` loads the list; every `game` (and the knockout's news) reloads it
    QZP.stream({ hello: () => load(), game: () => load(), knockout: () => load(), tournament: () => load() }, $("conn"));
  }

  document.addEventListener("DOMContentLoaded", () => {
    applyText();
    $("lang").addEventListener("click", () => { lang = QZP.switchLang(lang); render(); });
    $("print").addEventListener("click", () => window.print());
    loadTitle();
    connect();
  });
})();
