// The record page (录谱, /record/{board}): a board to tap, a field that takes Chinese, WXF or
// ICCS, undo, the move list with the clock's times. The rules of xiangqi live in the station
// only: a tap may do what the station's `legal` list says, and every move is checked there.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const board = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
  const params = new URLSearchParams(location.search);
  const game = params.get("game");
  const key = params.get("key");
  const base = "/api/records/" + encodeURIComponent(board);
  let csrf = null;
  let view = null;
  let selected = null; // the square of the piece tapped first
  let busy = false;
  // Every request that may replace the view is numbered: an answer older than the one shown is
  // dropped. The 3 s reload's GET could answer after a move's POST it was sent before, and put
  // the record back one move: the next move then went with a stale ply and was refused.
  let asked = 0;
  let shown = 0;
  function fresher(n) { if (n < shown) return false; shown = n; return true; }
  let lastMsg = null; // () => text, so a language switch re-renders it
  // The board's previous game whose record is still due (GET without ?game=): the QR code
  // names no game, so a player who scans it after the next round started is offered theirs.
  let offer = null;
  // The moves entered while the station could not be reached (record_outbox.js).
  const outbox = new QZ.RecordOutbox(board);
  let flushing = false;

  QZ.applyI18n();
  QZ.langButton($("lang"));
  QZ.onLang.push(render);

  // -- the station ------------------------------------------------------------------------------
  async function api(method, url, body) {
    const headers = { "Content-Type": "application/json" };
    if (csrf) headers["X-CSRF-Token"] = csrf;
    const r = await fetch(url, { method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body) });
    let data = {};
    try { data = await r.json(); } catch (e) { /* an empty body */ }
    return { status: r.status, data };
  }
  // The game this page records: ?game=, else — once the recorder entered or took back a move
  // here, or moves wait for a game — that game, pinned: a board whose next round was imported
  // meanwhile is said (current), never followed silently (an outsider's next move landed on
  // round 2's new game).
  let pinned = game ? null : (outbox.first() ? outbox.first().game : null);
  const viewing = () => game || pinned;
  const withGame = (body) => (viewing() ? { ...body, game: viewing() } : body);
  const lastIccs = (v) => (v && v.moves.length ? v.moves[v.moves.length - 1].iccs : "");
  function show(data) {
    view = data;
    offer = data.earlier || null;
    outbox.keepView(data); // a page opened again without the station still shows the game
  }
  async function load() {
    const n = ++asked;
    let answer;
    try {
      answer = await api("GET", base + (viewing() ? "?game=" + encodeURIComponent(viewing()) : ""));
    } catch (e) {
      if (!view) say(() => QZ.t("api.network"), true);
      return; // the station away a moment: the next reload tries again
    }
    const { status, data } = answer;
    if (status === 200) {
      if (lastMsg && lastMsg.network) say(null); // the station is back: its "cannot reach" goes
      if (fresher(n)) { show(data); render(); }
      flush();
    }
    else if (!view) say(() => QZ.apiError(status, data), true);
  }
  async function session() {
    if (key) {
      const { status, data } = await api("POST", "/api/auth/record-key", { board, key });
      if (status === 200) { csrf = data.csrf; who({ role: "recorder", boards: [board] }); return; }
      say(() => QZ.apiError(status, data), true);
    }
    const { status, data } = await api("GET", "/api/auth/session");
    if (status === 200 && data.csrf) { csrf = data.csrf; who(data); }
    $("login-box").hidden = !!csrf;
  }
  // This tab's token went stale (the QR code scanned again in another tab, a station restart):
  // the browser's session as it is now, else the board's key again, else the login box.
  // (recorder_only: the browser's session is now another board's recorder — its QR code was
  // scanned in another tab — so this board's key is asked again)
  const stale = (status, data) => status === 401 ||
    (status === 403 && data && (data.code === "csrf" || data.code === "recorder_only"));
  async function renew() {
    try {
      const now = await api("GET", "/api/auth/session");
      const mine = now.data && (now.data.role !== "recorder" || (now.data.boards || []).includes(board));
      if (now.status === 200 && now.data.csrf && mine) { csrf = now.data.csrf; who(now.data); return true; }
      if (key) {
        const keyed = await api("POST", "/api/auth/record-key", { board, key });
        if (keyed.status === 200) { csrf = keyed.data.csrf; return true; }
      }
    } catch (e) { return false; }
    csrf = null;
    $("login-box").hidden = false;
    return false;
  }
  // A recorder (a record key, a recorder account) may open nothing but its boards' records:
  // no way back to the overview it cannot open (a page of raw JSON, an outsider), a way out of
  // the recorder's login instead, and said at once when this board is not one of its own.
  function who(data) {
    const recorder = data.role === "recorder";
    $("back").hidden = recorder;
    $("logout").hidden = !recorder;
    if (recorder && Array.isArray(data.boards) && !data.boards.includes(board))
      say(() => QZ.t("record.not_yours", { boards: data.boards.join(QZ.lang === "en" ? ", " : "、") }), true);
  }
  $("logout").addEventListener("click", async () => {
    await api("POST", "/api/auth/logout");
    location.href = "/board/" + encodeURIComponent(board);
  });
  async function login() {
    const { status, data } = await api("POST", "/api/auth/login",
      { username: $("username").value, password: $("password").value });
    if (status === 200) { csrf = data.csrf; $("login-box").hidden = true; say(null); who(data); flush(); }
    else say(() => QZ.apiError(status, data), true);
  }
  // One request that changes the record; "network" when no answer came, "stale" when this
  // tab's token is no longer the session's.
  async function send(url, body, okText) {
    if (busy) return false;
    if (!csrf) { $("login-box").hidden = false; say(() => QZ.t("record.login"), true); return false; }
    busy = true;
    const n = ++asked;
    try {
      const { status, data } = await api("POST", url, withGame(body));
      // free before drawing: a tap that comes the moment the new move shows is not ignored
      busy = false;
      if (status === 200) {
        if (fresher(n)) { show(data); selected = null; render(); }
        say(okText);
        return true;
      }
      if (stale(status, data)) return "stale";
      say(() => QZ.apiError(status, data), true);
      if (data.code === "record_changed") await load();
      return false;
    } catch (e) {
      say(() => QZ.t("api.network"), true);
      lastMsg.network = true; // (it stayed under the buttons once the station was back: an outsider)
      return "network";
    } finally { busy = false; }
  }
  // A move goes to the station at once, or, while the station cannot be reached, this tab's
  // token is stale or moves are already waiting, into the outbox after them (the game's order).
  async function play(move, text) {
    if (!view || busy) return false;
    if (outbox.refused) { say(() => QZ.t("record.outbox.first"), true); return false; }
    if (!game) pinned = view.game;
    if (csrf && !outbox.size) {
      const sent = await send(base + "/moves", { move, ply: view.ply, after: lastIccs(view) },
        () => QZ.t("record.played", { move: view.moves.length ? view.moves[view.moves.length - 1].chinese : move }));
      if (sent !== "network" && sent !== "stale") return sent;
      // no answer: stored or not, it is kept; sent again, a stored move is answered as stored
      if (sent === "network") { say(() => QZ.t("record.outbox.kept"), true); lastMsg.network = true; }
    } else if (!csrf) return send(base + "/moves", { move, ply: view.ply });
    outbox.add(view, move, text, lastIccs(view));
    selected = null;
    render();
    flush();
    return true;
  }
  async function undo() {
    if (!view) return;
    if (!game) pinned = view.game;
    if (outbox.takeBack(view.game)) {
      selected = null;
      say(() => QZ.t("record.outbox.taken_back"));
      render();
      return;
    }
    const body = { ply: view.ply, after: lastIccs(view) };
    if (await send(base + "/undo", body, () => QZ.t("record.undone")) === "stale" && await renew())
      await send(base + "/undo", body, () => QZ.t("record.undone"));
  }
  // Is `it` the move `record` holds after it.ply moves, after the move it was entered after?
  // (its answer was lost, and another recorder went on meanwhile: stored, not refused)
  function holds(record, it) {
    const m = record.moves[it.ply];
    const before = it.ply ? record.moves[it.ply - 1].iccs : "";
    return !!m && [m.iccs, m.chinese, m.wxf].includes(it.move) && (it.after == null || it.after === before);
  }
  // The waiting moves, first to last, each with its game, ply and the move before it; a
  // refusal stops the sending (the recorder is told which move and why, and may discard the
  // rest to enter them again).
  async function flush() {
    if (flushing || busy || !csrf || !outbox.size || outbox.refused) return;
    flushing = true;
    let count = 0;
    let renewed = false;
    try {
      while (outbox.size && csrf) {
        const it = outbox.first();
        const n = ++asked;
        const body = { move: it.move, ply: it.ply, game: it.game };
        if (it.after != null) body.after = it.after;
        let answer;
        try { answer = await api("POST", base + "/moves", body); }
        catch (e) { return; } // still away: the next reload tries again
        let { status, data } = answer;
        if (lastMsg && lastMsg.network) say(null); // the station answers
        if (stale(status, data) && !renewed) { renewed = true; if (await renew()) continue; return; }
        if (status === 409 && data.code === "record_changed") {
          try {
            const now = await api("GET", base + "?game=" + encodeURIComponent(it.game));
            if (now.status === 200 && holds(now.data, it)) { status = 200; data = now.data; }
          } catch (e) { return; }
        }
        if (status === 200) {
          outbox.sent(it, data.moves[it.ply] ? data.moves[it.ply].iccs : null);
          count += 1;
          if (view && data.game === view.game && fresher(n)) show(data);
          continue;
        }
        if (stale(status, data)) return; // the login box is open: the moves wait for it
        outbox.refused = { item: it, status, data };
        return;
      }
      if (count) say(() => QZ.t("record.outbox.sent", { n: count }));
    } finally {
      flushing = false;
      render();
    }
  }

  // -- the page ---------------------------------------------------------------------------------
  function say(text, error) {
    lastMsg = text ? { text, error: !!error } : null;
    const el = $("msg");
    el.textContent = lastMsg ? lastMsg.text() : "";
    el.className = "record-msg" + (lastMsg && lastMsg.error ? " err" : "");
  }
  const GLYPH = { K: "帅", A: "仕", B: "相", E: "相", N: "马", H: "马", R: "车", C: "炮", P: "兵",
    k: "将", a: "士", b: "象", e: "象", n: "马", h: "马", r: "车", c: "炮", p: "卒" };
  const FILES = "abcdefghi";
  // FEN ranks run from black's side (rank 9) down to red's (rank 0); files a..i from red's left.
  function pieces(fen) {
    const out = new Map();
    const rows = (fen || "").split(" ")[0].split("/");
    rows.forEach((row, i) => {
      let f = 0;
      for (const ch of row) {
        if (/\d/.test(ch)) f += Number(ch);
        else { out.set(FILES[f] + (9 - i), ch); f += 1; }
      }
    });
    return out;
  }
  function grid() {
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 900 1000");
    svg.setAttribute("aria-hidden", "true");
    const line = (x1, y1, x2, y2) => {
      const l = document.createElementNS(NS, "line");
      for (const [k, v] of Object.entries({ x1, y1, x2, y2 })) l.setAttribute(k, v);
      l.setAttribute("stroke", "#7c4a12");
      l.setAttribute("stroke-width", "3");
      svg.append(l);
    };
    for (let r = 0; r < 10; r++) line(50, 50 + r * 100, 850, 50 + r * 100);
    for (let f = 0; f < 9; f++) {
      if (f === 0 || f === 8) line(50 + f * 100, 50, 50 + f * 100, 950);
      else { line(50 + f * 100, 50, 50 + f * 100, 450); line(50 + f * 100, 550, 50 + f * 100, 950); }
    }
    line(350, 50, 550, 250); line(550, 50, 350, 250); line(350, 750, 550, 950); line(550, 750, 350, 950);
    return svg;
  }
  function legalFrom(square) { return (view && view.legal ? view.legal : []).filter((m) => m.from === square); }
  // The first waiting move found in the station's legal moves: its squares.
  function legalMove(text) {
    const m = (view.legal || []).find((l) => l.iccs === text || l.chinese === text || l.wxf === text);
    return m ? [m.from, m.to] : null;
  }
  // The diagram: the station's position, and the waiting moves this page can place on it.
  function position() {
    const pos = pieces(view ? view.fen : "");
    const over = view ? outbox.overlay(view, pos, legalMove) : { waiting: 0, placed: 0, side: "red" };
    return { pos, ...over };
  }
  function tap(square) {
    if (!view || busy) return;
    const at = position();
    const toMove = at.waiting ? at.side : view.to_move;
    const own = (ch) => ch && (toMove === "red" ? ch === ch.toUpperCase() : ch === ch.toLowerCase());
    const here = at.pos.get(square);
    if (at.waiting) {
      // Moves are waiting: the legal list is the station's position's, not this one's. A tap
      // places a piece by its squares and the station checks the move when it is sent.
      if (at.placed < at.waiting) { say(() => QZ.t("record.outbox.typed")); return; }
      if (selected && !own(here) && selected !== square) {
        play(selected + square, at.pos.get(selected) ? GLYPH[at.pos.get(selected)] + " " + selected + square : "");
        return;
      }
      selected = own(here) ? square : null;
      drawBoard();
      return;
    }
    if (selected) {
      const move = legalFrom(selected).find((m) => m.to === square);
      if (move) { play(move.iccs, move.chinese); return; }
    }
    if (own(here) && legalFrom(square).length) { selected = square; say(null); }
    else if (own(here)) { selected = null; say(() => QZ.t("record.no_move_here"), true); }
    else selected = null;
    drawBoard();
  }
  function drawBoard() {
    const box = $("xq");
    const at = position();
    const pos = at.pos;
    const dests = new Set(selected && !at.waiting ? legalFrom(selected).map((m) => m.to) : []);
    const last = at.last || (view && view.moves.length ? view.moves[view.moves.length - 1].iccs : "");
    const cells = [];
    for (let r = 9; r >= 0; r--) {
      for (let f = 0; f < 9; f++) {
        const sq = FILES[f] + r;
        const ch = pos.get(sq);
        const cls = ["pt"];
        if (ch) cls.push("pc", ch === ch.toUpperCase() ? "r" : "b");
        if (sq === selected) cls.push("sel");
        if (dests.has(sq)) cls.push("dest");
        if (last && (last.slice(0, 2) === sq || last.slice(2, 4) === sq)) cls.push("last");
        const b = QZ.el("button", { type: "button", class: cls.join(" "), "data-sq": sq,
          "aria-label": sq, text: ch ? GLYPH[ch] : "", onclick: () => tap(sq) });
        b.style.left = (100 * (0.5 + f) / 9) + "%";
        b.style.top = (100 * (9.5 - r) / 10) + "%";
        cells.push(b);
      }
    }
    box.replaceChildren(grid(), ...cells);
  }
  function clockText(c) {
    if (!c) return "";
    return QZ.t("record.clock", { used: QZ.fmt(c.used_ms), left: QZ.fmt(c.remaining_ms) });
  }
  function render() {
    QZ.applyI18n();
    $("title").textContent = QZ.t("record.heading", { n: board });
    if (lastMsg) say(lastMsg.text, lastMsg.error);
    renderOutbox();
    if (!view) { drawBoard(); return; }
    const cur = view.current; // the board moved on to its next game: said, with a way there
    $("moved-on").hidden = !cur;
    if (cur) {
      $("moved-on-text").textContent = QZ.t("record.moved_on", { r: cur.round, red: cur.red, black: cur.black, mine: view.round });
      $("moved-on-go").textContent = QZ.t("record.earlier.go", { r: cur.round });
      $("moved-on-go").href = "/record/" + encodeURIComponent(board) + (key ? "?key=" + encodeURIComponent(key) : "");
    }
    $("players").textContent = QZ.t("record.round", { r: view.round }) + " · " +
      QZ.t("record.players", { red: view.red || "—", black: view.black || "—" });
    $("earlier").hidden = !offer;
    if (offer) {
      $("earlier-text").textContent = QZ.t("record.earlier",
        { r: offer.round, red: offer.red, black: offer.black, p: offer.plies, n: offer.presses });
      $("earlier-go").textContent = QZ.t("record.earlier.go", { r: offer.round });
      $("earlier-go").href = "/record/" + encodeURIComponent(board) + "?game=" + encodeURIComponent(offer.game);
    }
    $("current-game").hidden = !game;
    $("current-game").href = "/record/" + encodeURIComponent(board);
    const duty = [];
    duty.push(QZ.t(view.required ? "record.required" : "record.not_required"));
    if (view.responsible) duty.push(QZ.t("record.responsible", { side: QZ.t(view.responsible.side), player: view.responsible.player || "" }));
    $("duty").textContent = duty.join(" · ");
    const p = view.pairing || {};
    const mismatch = p.matched === false && p.presses > 0;
    $("pairing").hidden = !mismatch;
    $("pairing").textContent = mismatch
      ? QZ.t(p.disagreement ? "record.mismatch_at" : "record.mismatch", { moves: p.moves, presses: p.presses, n: p.disagreement || 0 })
      : "";
    // a confirmed result ends the game whatever the diagram says (it said 轮到红方走 after 1-0)
    const over = view.result ? QZ.t("record.result", { result: view.result }) : view.over ? QZ.t("record.over") : "";
    const at = position();
    $("to-move").textContent = over || (!at.waiting
      ? QZ.t("record.to_move", { side: QZ.t(view.to_move) }) + (view.in_check ? " · " + QZ.t("record.check") : "")
      : at.placed === at.waiting ? QZ.t("record.to_move", { side: QZ.t(at.side) }) : "");
    // numbered by 回合 as a score sheet is: red's move opens the number, black's answers it
    let round = 0;
    let side = view.to_move;
    const refused = !!outbox.refused; // (not the game's moves: unnumbered, apart)
    const waiting = outbox.of(view.game).map((it) => {
      const li = QZ.el("li", { class: refused ? "queued refused" : "queued", "data-ply": it.ply + 1, "data-side": side },
        QZ.el("span", { class: "no", text: side === "red" && !refused ? "" + (Math.floor(it.ply / 2) + 1) + "." : "" }),
        QZ.el("span", { class: "mv", translate: "no", text: it.text }),
        QZ.el("span", { class: "clk", text: QZ.t("record.outbox.pending") }));
      side = side === "red" ? "black" : "red";
      return li;
    });
    $("moves").replaceChildren(...view.moves.map((m) => QZ.el("li", { "data-ply": m.ply, "data-iccs": m.iccs, "data-side": m.side },
      QZ.el("span", { class: "no", text: m.side === "red" ? ++round + "." : "" }),
      QZ.el("span", { class: "mv", translate: "no", text: m.chinese }), QZ.el("span", { class: "clk", text: clockText(m.clock) }))),
      ...waiting);
    $("moves").scrollTop = $("moves").scrollHeight; // the last move in view
    $("undo").disabled = !view.moves.length && !waiting.length;
    drawBoard();
  }
  // What the phone keeps that the station has not got: how many, and why it stopped if it did.
  function renderOutbox() {
    const box = $("outbox");
    box.hidden = !outbox.size;
    box.classList.toggle("err", !!outbox.refused);
    $("outbox-drop").hidden = !outbox.refused;
    const r = outbox.refused;
    $("outbox-text").textContent = !outbox.size ? "" : r
      ? QZ.t("record.outbox.refused", { ply: r.item.ply + 1, move: r.item.text, n: outbox.size,
        reason: r.data && r.data.code === "record_changed" // (its "reloaded, try again" misled)
          ? QZ.t("record.outbox.changed", { found: (r.data.args || {}).found }) : QZ.apiError(r.status, r.data) })
      : QZ.t("record.outbox.waiting", { n: outbox.size });
  }

  $("move-send").addEventListener("click", async () => {
    const text = $("move-text").value.trim();
    if (!text) return;
    if (await play(text)) $("move-text").value = "";
  });
  $("move-text").addEventListener("keydown", (e) => { if (e.key === "Enter") $("move-send").click(); });
  $("undo").addEventListener("click", undo);
  $("outbox-drop").addEventListener("click", () => { outbox.drop(); say(null); render(); load(); });
  $("login-submit").addEventListener("click", login);
  $("back").href = "/board/" + encodeURIComponent(board);
  // The station's record as this phone last saw it, until the station answers (a page opened
  // again without it showed nothing of the moves kept: an outsider).
  const kept = outbox.keptView(viewing());
  if (kept && (viewing() || !kept.current)) show(kept);
  render();
  session().then(load);
  // The clock's presses go on while a recorder types: the pairing and times follow.
  setInterval(() => { if (!busy && document.visibilityState !== "hidden") load(); }, 3000);
  // another tab of this board's record sent or dropped the kept moves: this one follows
  window.addEventListener("storage", (e) => { if (e.key === outbox.key) { outbox.reload(); render(); } });
})();
