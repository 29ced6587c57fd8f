// The round's sheet for the wall (对阵表, then 成绩): board, red and black with their points
// before the round, the result once decided; printable in black on white. Reads the public
// /api/rounds, /api/results, /api/standings (points after the round before) and
// /api/trf/entrants (the byes); refreshes on the SSE `game` messages.
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {
      title: "对阵表", round: "轮次", print: "打印", "to-standings": "成绩排名", lang: "English",
      heading: "第{n}轮 对阵表", "heading.done": "第{n}轮 对阵及成绩",
      board: "台次", red: "红方", black: "黑方", red_points: "积分", black_points: "积分", result: "结果",
      "round.n": "第{n}轮", empty: "尚无配对", byes: "轮空：{list}", "bye.F": "（得胜分）", "bye.H": "（得和分）",
      "bye.Z": "（不得分）", "bye.U": "", pending: "待裁定", draw: "和", disconnected: "与服务器的连接已断开，正在重连…",
      error: "无法读取对阵表（HTTP {status}）", "error.network": "无法连接站点",
      "stage.semi_final": "半决赛", "stage.final": "决赛", "stage.third_place": "三四名决赛", tiebreak: "加赛",
    },
    en: {
      title: "Pairings", round: "Round", print: "Print", "to-standings": "Standings", lang: "中文",
      heading: "Round {n} pairings", "heading.done": "Round {n} pairings and results",
      board: "Board", red: "Red", black: "Black", red_points: "Pts", black_points: "Pts", result: "Result",
      "round.n": "round {n}", empty: "No pairings yet", byes: "Byes: {list}", "bye.F": " (a win's points)",
      "bye.H": " (a draw's points)", "bye.Z": " (no points)", "bye.U": "", pending: "to rule", draw: "draw",
      disconnected: "Connection to the station lost, reconnecting…",
      error: "Cannot read the pairings (HTTP {status})", "error.network": "cannot reach the station",
      "stage.semi_final": "semi-final", "stage.final": "final", "stage.third_place": "third-place game", tiebreak: "tie-break",
    },
  };
  const params = new URLSearchParams(location.search);
  let lang = QZP.initialLang();
  const t = QZP.words(TEXT, () => lang);
  const $ = (id) => document.getElementById(id);
  const state = { round: Number(params.get("round")) || null, rounds: [], rows: [], points: new Map(), byes: [], event: "", error: null };

  async function getJson(url) {
    const r = await fetch(url);
    if (!r.ok) throw Object.assign(new Error("http"), { status: r.status });
    return r.json();
  }

  function resultText(row) {
    if (!row.result) return "";
    if (row.result === "1/2-1/2") return t("draw");
    return row.result;  // 1-0 / 0-1 / 0-0 (red's score first, as the sheet reads left to right)
  }

  function render() {
    document.documentElement.lang = lang;
    document.title = (lang === "en" ? "qizhong · " : "棋钟 · ") + t("title");
    for (const id of ["print", "to-standings", "lang"]) $(id).textContent = t(id);
    $("round-label").textContent = t("round");
    $("conn").textContent = t("disconnected");
    $("title").textContent = state.event;
    for (const th of document.querySelectorAll("th[data-col]")) th.textContent = t(th.dataset.col);
    const select = $("round");
    select.replaceChildren(...state.rounds.map((n) => {
      const o = document.createElement("option");
      o.value = String(n);
      o.textContent = t("round.n", { n });
      return o;
    }));
    if (state.round) select.value = String(state.round);
    $("error").hidden = !state.error;
    if (state.error) $("error").textContent = state.error.status ? t("error", { status: state.error.status }) : t("error.network");
    const done = state.rows.length > 0 && state.rows.every((r) => r.result);
    // the event's name is the organiser's, in its own words in either language (translate=no)
    const name = document.createElement("span");
    name.translate = false;
    name.textContent = state.event ? state.event + " · " : "";
    $("heading").replaceChildren(...(state.round ? [name, t(done ? "heading.done" : "heading", { n: state.round })] : []));
    $("empty").hidden = state.rows.length > 0;
    $("empty").textContent = t("empty");
    const body = $("rows");
    body.replaceChildren();
    for (const row of state.rows) {
      const tr = document.createElement("tr");
      tr.dataset.board = row.board;
      // a knockout game says what it is where the board number is
      const where = row.stage ? row.board + " · " + t("stage." + row.stage) + (row.tiebreak ? " " + t("tiebreak") : "") : row.board;
      const cells = [["board", where], ["player red", row.red], ["points", state.points.get(row.red) ?? 0],
        ["result", resultText(row)], ["points", state.points.get(row.black) ?? 0], ["player black", row.black]];
      for (const [cls, text] of cells) {
        const td = document.createElement("td");
        td.className = cls;
        td.textContent = String(text);
        tr.append(td);
      }
      body.append(tr);
    }
    const byes = state.byes.map((b) => b.name + t("bye." + b.kind));
    $("byes").hidden = !byes.length;
    $("byes").textContent = byes.length ? t("byes", { list: byes.join(lang === "en" ? ", " : "、") }) : "";
    document.body.dataset.loaded = String(Date.now());
  }

  const load = QZP.coalesced(async () => {
    try {
      const [rounds, station] = await Promise.all([getJson("/api/rounds"), getJson("/api/station").catch(() => ({}))]);
      state.event = station.title || "";
      state.rounds = rounds.rounds.map((r) => r.round).sort((a, b) => a - b);
      if (!state.round || !state.rounds.includes(state.round)) state.round = state.rounds.length ? state.rounds[state.rounds.length - 1] : null;
      state.rows = [];
      state.points = new Map();
      state.byes = [];
      if (state.round) {
        const n = state.round;
        const [results, before, entrants, ko] = await Promise.all([
          getJson("/api/results?round=" + n),
          n > 1 ? getJson("/api/standings?round=" + (n - 1)) : Promise.resolve({ standings: [] }),
          getJson("/api/trf/entrants").catch(() => ({ entrants: [], byes: [] })),
          getJson("/api/knockout").catch(() => ({ started: false })),
        ]);
        const boardOrder = (b) => (/^\d+$/.test(b) ? Number(b) : 1e9);
        // Meishan's knockout games on their boards beside the round (the station says which)
        const koRows = !ko.started ? [] : ko.games.filter((g) => g.confirmed && g.board && g.round === n).map((g) => ({
          board: g.board, red: g.red, black: g.black, stage: g.stage, tiebreak: g.tiebreak,
          result: g.result === "red" ? "1-0" : g.result === "black" ? "0-1" : g.result === "draw" ? "1/2-1/2" : "",
        }));
        state.rows = results.results.concat(koRows).sort((a, b) => boardOrder(a.board) - boardOrder(b.board) || (a.board < b.board ? -1 : 1));
        for (const s of before.standings) state.points.set(s.player, s.points);
        const names = new Map(entrants.entrants.map((e) => [e.start_rank, e.name]));
        state.byes = entrants.byes.filter((b) => b.round === n && names.has(b.player)).map((b) => ({ name: names.get(b.player), kind: b.kind }));
      }
      state.error = null;
    } catch (e) {
      state.error = { status: e.status || 0 };
    } finally {
      render();
    }
  });

  document.addEventListener("DOMContentLoaded", () => {
    render();
    $("lang").addEventListener("click", () => { lang = QZP.switchLang(lang); render(); });
    $("round").addEventListener("change", () => {
      state.round = Number($("round").value) || null;
      const url = new URL(location.href);
      url.searchParams.set("round", String(state.round));
      history.replaceState(null, "", url);
      load();
    });
    $("print").addEventListener("click", () => window.print());
    QZP.stream({ hello: () => load(), game: () => load(), knockout: () => load(), tournament: () => load() }, $("conn"));
  });
})();
