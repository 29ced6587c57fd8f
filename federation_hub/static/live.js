// Live clocks for the public (issue 18): this page reads the board state snapshots straight
// from the federation centre's NATS WebSocket listener (the PUBLIC account: read state only),
// grouped by venue, and counts the running side down from each snapshot's `ts` as the venue
// display does. NATS's WebSocket protocol is its plain text protocol in WebSocket frames
// (INFO, CONNECT, SUB, MSG, PING/PONG, -ERR): the tiny client below needs no library.
// Game records (issue 29): the hub checks each venue's record (the moves replayed by the
// station's rules, in Python) and publishes what to draw on {prefix}.live.{venue}.record.{board}:
// ten rows of FEN letters (the position after the last move) and each move in Chinese notation
// with its clock. The page only draws it (no rules of xiangqi here). /live/{venue}/{board} is
// the same page for one game (the body's data-venue/data-board).
// Input is bounded: a message over MAX_PAYLOAD bytes, a payload that is not JSON or not a
// snapshot, and a board past max_boards are ignored and counted (shown in #ignored).
"use strict";
(function () {
  const MAX_PAYLOAD = 16384; // the wire's payload bound (docs/wire.md); a snapshot is < 1 KiB
  const MAX_BUFFER = 128 * 1024; // unparsed bytes; the centre's max_payload is 64 KiB
  const DAY_MS = 86400000; // red_ms/black_ms bound (docs/wire.md)
  const ID = /^[A-Za-z0-9_-]{1,32}$/;
  const PHASES = ["idle", "ready", "running", "paused", "finished"];
  const TEXT = {
    "zh-CN": {title: "实时棋钟", lang: "English", none: "暂无棋局", venue: "赛场", board: "台",
              connecting: "连接中…", live: "实时", closed: "连接中断，重连中…",
              ignored: "已忽略消息", red: "红方", black: "黑方",
              off: "未配置实时棋钟", moves: "着法", record: "棋谱"},
    "en": {title: "Live clocks", lang: "中文", none: "No games yet", venue: "Venue", board: "Board",
           connecting: "connecting…", live: "live", closed: "disconnected, reconnecting…",
           ignored: "ignored messages", red: "Red", black: "Black",
           off: "live clocks are not configured", moves: "Moves", record: "Record"},
  };
  const GLYPHS = {K: "帅", A: "仕", B: "相", N: "马", R: "车", C: "炮", P: "兵",
                  k: "将", a: "士", b: "象", n: "马", r: "车", c: "炮", p: "卒"};
  const MAX_PLIES = 360; // the wire's bound on a record (docs/wire.md)
  const ROW = /^[KABNRCPkabnrcp.]{9}$/;
  const LETTERS = {K: "K", A: "A", B: "E", N: "H", R: "R", C: "C", P: "P"}; // WXF, in English
  const only = document.body.dataset.venue ? document.body.dataset.venue + "/" + document.body.dataset.board : null;
  const base = document.body.dataset.base || "";
  const params = new URLSearchParams(location.search);
  let lang = (params.get("lang") || "").toLowerCase().startsWith("en") ? "en" : "zh-CN";
  const t = (k) => TEXT[lang][k] || k;

  const root = document.getElementById("venues");
  const connEl = document.getElementById("conn");
  const ignoredEl = document.getElementById("ignored");
  const boards = new Map(); // "venue/board" -> {venue, board, state, el, ...}
  const venues = new Map(); // venue -> {el, grid}
  const ignored = {too_large: 0, not_json: 0, invalid: 0, too_many_boards: 0};
  let config = {ws: null, prefix: "fed", max_boards: 1000, names: {}};
  const venueTitle = (v) => `${t("venue")} ${(config.names && typeof config.names[v] === "string" && config.names[v]) || v}`;
  let offset = 0; // hub clock - this browser's clock (ms)
  let connState = "connecting";

  // -- text and language ------------------------------------------------------------------
  function applyText() {
    document.documentElement.lang = lang;
    document.title = (lang === "en" ? "qizhong · " : "棋钟 · ") + t("title");
    document.querySelectorAll("[data-t]").forEach((el) => { el.textContent = t(el.dataset.t); });
    document.getElementById("lang").textContent = t("lang");
    showConn(connState);
    showIgnored();
    for (const b of boards.values()) { render(b); drawRecord(b); }
    for (const [v, entry] of venues) entry.title.textContent = venueTitle(v);
  }
  document.getElementById("lang").addEventListener("click", () => {
    lang = lang === "en" ? "zh-CN" : "en";
    const url = new URL(location.href);
    url.searchParams.set("lang", lang === "en" ? "en" : "zh");
    history.replaceState(null, "", url);
    applyText();
  });
  function showConn(state) {
    connState = state;
    connEl.dataset.state = state;
    connEl.textContent = config.ws === null && state === "closed" ? t("off") : t(state);
  }
  function count(kind) {
    ignored[kind] += 1;
    showIgnored();
  }
  function showIgnored() {
    let total = 0;
    for (const [k, n] of Object.entries(ignored)) { ignoredEl.dataset[k] = String(n); total += n; }
    ignoredEl.dataset.total = String(total);
    ignoredEl.textContent = total ? `${t("ignored")}: ${total}` : "";
  }

  // -- the clocks ---------------------------------------------------------------------------
  const now = () => Date.now() + offset;
  function remaining(s, side, at) {
    const ms = s[side + "_ms"];
    if (s.phase === "running" && s.running === side && !s.flag) return Math.max(0, ms - Math.max(0, at - s.ts));
    return ms;
  }
  function fmt(ms) {
    if (ms < 10000) { const d = Math.floor(ms / 100); return `0:0${Math.floor(d / 10)}.${d % 10}`; }
    const s = Math.floor(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(s % 60).padStart(2, "0");
  }
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function venueEntry(venue) {
    let v = venues.get(venue);
    if (!v) {
      const section = el("section", "venue");
      section.dataset.venue = venue;
      const title = el("h2", "", venueTitle(venue));
      const grid = el("div", "boards");
      section.append(title, grid);
      v = {el: section, title, grid};
      venues.set(venue, v);
      const empty = root.querySelector(".empty");
      if (empty) empty.remove();
      const after = [...venues.keys()].sort().indexOf(venue);
      root.insertBefore(section, root.children[after] || null);
    }
    return v;
  }
  function sideEl(side) {
    const row = el("div", "side " + side);
    row.dataset.side = side;
    row.append(el("span", "name"), el("span", "time"));
    return row;
  }
  function boardEntry(venue, board) {
    const card = el("div", "board");
    card.dataset.venue = venue;
    card.dataset.board = board;
    const head = el("div", "head");
    head.append(el("span", "title"), el("span", "phase"), el("span", "result"));
    card.append(head, sideEl("red"), sideEl("black"));
    const grid = venueEntry(venue).grid;
    const key = (b) => [b.length, b];
    const later = [...grid.children].find((c) => {
      const [la, sa] = key(c.dataset.board), [lb, sb] = key(board);
      return la > lb || (la === lb && sa > sb);
    });
    grid.insertBefore(card, later || null);
    return {venue, board, state: null, record: null, el: card};
  }
  function entry(venue, board) {
    const k = venue + "/" + board;
    let b = boards.get(k);
    if (!b) {
      if (boards.size >= config.max_boards) { count("too_many_boards"); return null; }
      b = boardEntry(venue, board);
      boards.set(k, b);
    }
    return b;
  }
  function render(b) {
    const s = b.state;
    if (!s) {
      b.el.querySelector(".title").textContent = `${t("board")} ${b.board}`;
      return;
    }
    const game = s.game ? ` · ${QZW.game(s.game, lang)}` : "";
    b.el.querySelector(".title").textContent = `${t("board")} ${b.board}${game}`;
    b.el.querySelector(".phase").textContent = QZW.phase(s.phase, lang); // (words.js: the overview's too)
    b.el.querySelector(".result").textContent = s.result ? QZW.result(s.result, lang) : "";
    b.el.dataset.phase = s.phase;
    for (const side of ["red", "black"]) {
      const row = b.el.querySelector(`.side.${side}`);
      row.querySelector(".name").textContent = typeof s[side] === "string" && s[side] ? s[side] : t(side);
      row.classList.toggle("running", s.phase === "running" && s.running === side);
      row.classList.toggle("flag", s.flag === side);
    }
    tick(b, now());
  }
  function tick(b, at) {
    for (const side of ["red", "black"]) {
      const ms = remaining(b.state, side, at);
      const time = b.el.querySelector(`.side.${side} .time`);
      time.textContent = fmt(ms);
      time.dataset.ms = String(ms);
    }
  }
  setInterval(() => {
    const at = now();
    for (const b of boards.values()) if (b.state && b.state.phase === "running") tick(b, at);
  }, 100);

  // -- one snapshot in ------------------------------------------------------------------------
  const int = (x, lo, hi) => Number.isInteger(x) && x >= lo && x <= hi;
  function valid(s, board) {
    return s !== null && typeof s === "object" && !Array.isArray(s) && s.board === board &&
      int(s.red_ms, 0, DAY_MS) && int(s.black_ms, 0, DAY_MS) && int(s.ts, 0, 2 ** 53) &&
      int(s.session, 0, 2 ** 53) && int(s.seq, 0, 2 ** 53) && PHASES.includes(s.phase) &&
      [null, undefined, "red", "black"].includes(s.running) &&
      (s.game === undefined || s.game === null || (typeof s.game === "string" && s.game.length <= 64)) &&
      ["red", "black"].every((k) => s[k] === undefined || s[k] === null || (typeof s[k] === "string" && s[k].length <= 64));
  }
  function onState(subject, bytes) {
    // {prefix}.qz.v1.{venue}.board.{board}.state
    const head = config.prefix + ".qz.v1.";
    const parts = subject.startsWith(head) ? subject.slice(head.length).split(".") : [];
    if (parts.length !== 4 || parts[1] !== "board" || parts[3] !== "state" || !ID.test(parts[0]) || !ID.test(parts[2])) {
      count("invalid");
      return;
    }
    const [venue, , board] = parts;
    if (only !== null && only !== venue + "/" + board) return; // the spectator page's one game
    let s;
    try { s = JSON.parse(new TextDecoder("utf-8", {fatal: true}).decode(bytes)); } catch (e) { count("not_json"); return; }
    onSnapshot(venue, board, s);
  }
  function onSnapshot(venue, board, s) {
    if (only !== null && only !== venue + "/" + board) return;
    if (!valid(s, board)) { count("invalid"); return; }
    const known = boards.get(venue + "/" + board);
    if (known && known.state && (s.session < known.state.session ||
        (s.session === known.state.session && s.seq < known.state.seq))) {
      return; // an older snapshot overtaken by a newer one: not news
    }
    const b = entry(venue, board);
    if (!b) return;
    b.state = s;
    render(b);
  }

  // -- one game record in (checked by the hub; bounded here all the same) ----------------------
  const clockOk = (x) => x === null || int(x, 0, DAY_MS);
  function validRecord(r, venue, board) {
    return r !== null && typeof r === "object" && r.venue === venue && r.board === board &&
      typeof r.game === "string" && r.game.length <= 64 && int(r.ts, 0, 2 ** 53) &&
      Array.isArray(r.rows) && r.rows.length === 10 && r.rows.every((x) => typeof x === "string" && ROW.test(x)) &&
      Array.isArray(r.moves) && r.moves.length <= MAX_PLIES && int(r.ply, 0, MAX_PLIES) && r.ply === r.moves.length &&
      r.moves.every((m) => Array.isArray(m) && m.length === 4 && typeof m[0] === "string" &&
                           m[0].length <= 8 && typeof m[1] === "string" && m[1].length <= 8 &&
                           clockOk(m[2]) && clockOk(m[3]));
  }
  function onRecord(venue, board, r) {
    if (only !== null && only !== venue + "/" + board) return;
    if (!validRecord(r, venue, board)) { count("invalid"); return; }
    const known = boards.get(venue + "/" + board);
    if (known && known.record && known.record.game === r.game && r.ts < known.record.ts) return;
    const b = entry(venue, board);
    if (!b) return;
    b.record = r;
    drawRecord(b);
  }
  function drawRecord(b) {
    const r = b.record;
    if (!r) return;
    let box = b.el.querySelector(".record");
    if (!box) {
      box = el("div", "record");
      const xq = el("div", "xq");
      for (let row = 0; row < 10; row++) {
        for (let col = 0; col < 9; col++) {
          const cell = el("span", "cell");
          cell.dataset.r = String(row);
          cell.dataset.c = String(col);
          xq.append(cell);
        }
      }
      box.append(xq, el("h3", "movesTitle"), el("ol", "moves"));
      b.el.append(box);
    }
    box.dataset.ply = String(r.ply);
    box.dataset.game = r.game;
    box.querySelector(".movesTitle").textContent = `${t("moves")} · ${QZW.game(r.game, lang)}`;
    const cells = box.querySelectorAll(".xq .cell");
    for (let row = 0; row < 10; row++) {
      for (let col = 0; col < 9; col++) {
        const letter = r.rows[row][col];
        const cell = cells[row * 9 + col];
        cell.textContent = letter === "." ? "" : lang === "en" ? LETTERS[letter.toUpperCase()] : GLYPHS[letter];
        cell.className = "cell" + (letter === "." ? "" : letter === letter.toUpperCase() ? " red" : " black");
      }
    }
    const list = box.querySelector(".moves");
    // numbered by 回合 as a score sheet is (an <ol> numbered plies: its "5." was another move)
    const blackFirst = r.moves.length > 0 && r.to_move === (r.moves.length % 2 ? "red" : "black");
    list.replaceChildren(...r.moves.map((m, i) => {
      const black = (i % 2 === 1) !== blackFirst;
      const li = el("li", black ? "black" : "red");
      li.append(el("span", "no", black ? "" : `${Math.floor((i + (blackFirst ? 1 : 0)) / 2) + 1}.`),
                el("span", "mv", lang === "en" ? m[1] : m[0]));
      if (m[2] !== null) li.append(el("span", "clk", ` ${fmt(m[2])} / ${fmt(m[3])}`));
      return li;
    }));
    list.scrollTop = list.scrollHeight;
  }
  function onMessage(subject, bytes) {
    // {prefix}.live.{venue}.record.{board}: the hub's checked record; anything else a state
    const head = config.prefix + ".live.";
    if (!subject.startsWith(head)) { onState(subject, bytes); return; }
    const parts = subject.slice(head.length).split(".");
    if (parts.length !== 3 || parts[1] !== "record" || !ID.test(parts[0]) || !ID.test(parts[2])) {
      count("invalid");
      return;
    }
    let r;
    try { r = JSON.parse(new TextDecoder("utf-8", {fatal: true}).decode(bytes)); } catch (e) { count("not_json"); return; }
    onRecord(parts[0], parts[2], r);
  }

  // -- the NATS client: text protocol over WebSocket frames ------------------------------------
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  let buf = new Uint8Array(0);
  let backoff = 1000;
  function crlf(from) {
    for (let i = from; i + 1 < buf.length; i++) if (buf[i] === 13 && buf[i + 1] === 10) return i;
    return -1;
  }
  function connect() {
    showConn("connecting");
    const ws = new WebSocket(config.ws);
    ws.binaryType = "arraybuffer";
    let pending = null; // a MSG header waiting for its payload: {subject, size, skip}
    buf = new Uint8Array(0);
    const send = (line) => ws.send(enc.encode(line + "\r\n"));
    ws.onmessage = (e) => {
      const chunk = new Uint8Array(e.data instanceof ArrayBuffer ? e.data : enc.encode(e.data));
      if (buf.length + chunk.length > MAX_BUFFER) { count("too_large"); ws.close(); return; }
      const joined = new Uint8Array(buf.length + chunk.length);
      joined.set(buf); joined.set(chunk, buf.length);
      buf = joined;
      let at = 0;
      for (;;) {
        if (pending) {
          if (buf.length - at < pending.size + 2) break;
          if (!pending.skip) onMessage(pending.subject, buf.subarray(at, at + pending.size));
          at += pending.size + 2;
          pending = null;
          continue;
        }
        const end = crlf(at);
        if (end < 0) break;
        const line = dec.decode(buf.subarray(at, end));
        at = end + 2;
        if (line.startsWith("MSG ")) {
          const f = line.split(" ");
          const size = Number(f[f.length - 1]);
          if (!Number.isInteger(size) || size < 0) { ws.close(); return; }
          const skip = size > MAX_PAYLOAD;
          if (skip) count("too_large");
          pending = {subject: f[1], size, skip};
        } else if (line.startsWith("INFO ")) {
          send(JSON.stringify({verbose: false, pedantic: false, lang: "qz-live", version: "1",
                               protocol: 1, headers: false, no_responders: false}).replace(/^/, "CONNECT "));
          send(`SUB ${config.prefix}.qz.v1.*.board.*.state 1`);
          send(`SUB ${config.prefix}.live.*.record.* 2`);
          send("PING");
        } else if (line === "PING") {
          send("PONG");
        } else if (line === "PONG") {
          if (connState !== "live") loadStates(); // what changed while the socket was away
          showConn("live");
          backoff = 1000;
        } else if (line.startsWith("-ERR")) {
          console.warn("nats:", line);
        }
      }
      buf = buf.slice(at);
    };
    ws.onclose = () => {
      showConn("closed");
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 30000);
    };
  }

  // The boards' latest states as the hub holds them: a board speaks only when its clock changes
  // (a long think, a pause, a finished game say nothing for minutes), so a page opened between
  // two states showed no players, no clocks, no result until then (an outsider spectator).
  function loadStates() {
    return fetch(base + "api/live/states").then((r) => r.json()).then((list) => {
      if (!Array.isArray(list)) return;
      for (const x of list.slice(0, config.max_boards)) {
        if (x && typeof x === "object" && typeof x.venue === "string" && typeof x.board === "string" &&
            ID.test(x.venue) && ID.test(x.board)) onSnapshot(x.venue, x.board, x.state);
      }
    }).catch(() => {});
  }

  // -- start: the hub tells where the centre's WebSocket listener is --------------------------
  applyText();
  const asked = Date.now();
  fetch(base + "api/live").then((r) => r.json()).then((c) => {
    const got = Date.now();
    config = {ws: c.ws, prefix: String(c.prefix || "fed"), max_boards: Number(c.max_boards) || 1000,
      names: c.names && typeof c.names === "object" ? c.names : {}};
    for (const [v, entry] of venues) entry.title.textContent = venueTitle(v);
    if (Number.isInteger(c.now)) offset = c.now + (got - asked) / 2 - got;
    loadStates();
    if (!config.ws) { showConn("closed"); return; }
    connect();
    // the records the hub holds, for a page opened mid-game (newer ones come over the socket)
    return fetch(base + "api/live/records").then((r) => r.json()).then((list) => {
      if (!Array.isArray(list)) return;
      for (const r of list.slice(0, config.max_boards)) {
        if (r && typeof r === "object" && typeof r.venue === "string" && typeof r.board === "string" &&
            ID.test(r.venue) && ID.test(r.board)) onRecord(r.venue, r.board, r);
      }
    });
  }).catch(() => showConn("closed"));
})();
