// Shared by the pages: language, the station's clock, the SSE stream, a board card.
// No framework and no build: plain DOM, and text always set with textContent (never HTML),
// so a player's name can never become markup.
"use strict";
(function () {
  const QZ = (window.QZ = {});

  // -- language ---------------------------------------------------------------------------
  const LANGS = ["zh-CN", "en"];
  function pickLang() {
    const q = new URLSearchParams(location.search).get("lang");
    if (q) {
      const lang = q.toLowerCase().startsWith("en") ? "en" : "zh-CN";
      try { localStorage.setItem("qz.lang", lang); } catch (e) { /* private mode */ }
      return lang;
    }
    let saved = null;
    try { saved = localStorage.getItem("qz.lang"); } catch (e) { /* private mode */ }
    return LANGS.includes(saved) ? saved : "zh-CN";
  }
  QZ.lang = pickLang();
  QZ.t = function (key, vars) {
    const table = window.QZ_TEXT[QZ.lang] || window.QZ_TEXT["zh-CN"];
    let text = key in table ? table[key] : window.QZ_TEXT["zh-CN"][key] || key;
    for (const [k, v] of Object.entries(vars || {})) text = text.split("{" + k + "}").join(String(v));
    return text;
  };
  QZ.has = (key) => key in (window.QZ_TEXT[QZ.lang] || {}) || key in window.QZ_TEXT["zh-CN"];
  // A key's text, or the fallback key's when the first is unknown (a code the page has no words
  // for yet is never shown raw).
  QZ.tOr = (key, fallback, vars) => QZ.t(QZ.has(key) ? key : fallback, vars);
  // A reason code of the wire (board_pause, power_switch, …) in words: the page's own table,
  // then the profile's words (GET /api/regulation/reasons, QZ.loadReasons), then "another reason".
  QZ.reasonWords = {};
  QZ.reason = function (code) {
    if (QZ.has("reason." + code)) return QZ.t("reason." + code);
    const words = QZ.reasonWords[code];
    if (words) return QZ.lang === "en" ? words.en : words.zh;
    return QZ.t("reason.unknown");
  };
  QZ.loadReasons = async function () {
    try {
      const r = await fetch("/api/regulation/reasons");
      if (!r.ok) return null;
      const data = await r.json();
      for (const list of Object.values(data || {}))
        if (Array.isArray(list)) for (const x of list) if (x && x.code) QZ.reasonWords[x.code] = x;
      return data;
    } catch (e) { return null; }
  };

  // A board event as a sentence (the board page's and the arbiter's history).
  QZ.describeEvent = function (ev) {
    const d = ev.data || {};
    const side = d.side ? QZ.t(d.side) : "";
    const reason = d.reason ? QZ.reason(d.reason) : "";
    const status = ["pending", "confirmed", "dismissed"].includes(d.status) ? d.status : "confirmed";
    switch (ev.type) {
      case "ready": return d.red && d.black ? QZ.t("ev.ready", { red: d.red, black: d.black }) : QZ.t("ev.ready.anon");
      case "started": return QZ.t("ev.started");
      case "move": return QZ.t("event.move", { side, n: d.move, s: ((d.used_ms || 0) / 1000).toFixed(1) });
      case "paused":
        if (d.by === "arbiter") return QZ.t("ev.paused.arbiter");
        return d.side_on_move ? QZ.t("ev.paused.side", { side: QZ.t(d.side_on_move) }) : QZ.t("ev.paused.board");
      case "resumed": return QZ.t("ev.resumed");
      case "flag": return QZ.t("ev.flag", { side });
      case "foul": return QZ.t("ev.foul." + status, { side, reason, count: d.count || 0 });
      case "forfeit": return QZ.t("ev.forfeit." + status, { side, reason });
      case "shutdown":
        return QZ.t(d.authorised ? "ev.shutdown.allowed" : "ev.shutdown",
          { s: Math.round((d.duration_ms || 0) / 1000), cause: QZ.reason(d.cause) });
      case "late": return QZ.t("ev.late", { side });
      case "adjusted": {
        const s = Math.round((d.delta_ms || 0) / 100) / 10;
        if (d.by === "board") return QZ.t("ev.adjusted.board", { side, s: (s > 0 ? "+" : "") + s });
        return s >= 0 ? QZ.t("ev.adjusted.add", { side, s }) : QZ.t("ev.adjusted.take", { side, s: -s });
      }
      case "result": { // (双方判负（双方判负）: the reason said again when it is the outcome)
        const outcome = QZ.outcome(d);
        return QZ.t("ev.result." + status, { outcome, reason }).replace(outcome === reason ? /[（(][^（(]*[)）]$/ : /$^/, "");
      }
      case "move_count": return QZ.t(d.status === "reached" ? "ev.move_count.reached" : "ev.move_count.started", { limit: d.limit });
      case "warning": {
        const text = QZ.t("ev.warning." + status, { reason });
        return side ? QZ.t("ev.warning.side", { side, text }) : text;
      }
      default: return QZ.t("ev.other");
    }
  };
  // Who won, in words; and the short score of a card (1-0, 0-1, ½-½, 0:0).
  QZ.outcome = function (r) {
    if (r.winner === "red" || r.winner === "black") return QZ.t("outcome." + r.winner);
    return QZ.t(r.reason === "double_forfeit" ? "outcome.double_forfeit" : "outcome.draw");
  };
  QZ.score = function (r) {
    if (r.winner === "red") return "1-0";
    if (r.winner === "black") return "0-1";
    return r.reason === "double_forfeit" ? "0:0" : "½-½";
  };

  // A board's refusal in words: its code (and arguments) when the reply carries one, else a
  // generic sentence; the board's own English stays out of the page.
  QZ.replyText = function (reply) {
    if (!reply || !reply.code) return QZ.t("code.unknown");
    return QZ.tOr("code." + reply.code, "code.unknown", QZ.words(reply.args));
  };
  // A reply's arguments in words: a phase or a ruling status by its name, lists joined.
  QZ.words = function (args) {
    const out = {};
    for (const [k, v] of Object.entries(args || {})) {
      if (k === "phase" && QZ.has("phase." + v)) out[k] = QZ.t("phase." + v);
      else if (k === "status" && QZ.has("status." + v)) out[k] = QZ.t("status." + v);
      else if (k === "side" && (v === "red" || v === "black")) out[k] = QZ.t(v);
      else if (k === "by") out[k] = !v ? "" : " · " + (v === "board" || v === "station" ? QZ.t("by." + v) : v); // who ruled
      else if (Array.isArray(v)) out[k] = v.join(QZ.lang === "en" ? ", " : "、");
      else out[k] = v;
    }
    return out;
  };
  // A venue command's per-board outcomes in the arbiter's words ("38 台已暂停 · 2 台无需操作").
  QZ.summaryText = function (cmd, data) {
    const sum = data.summary || {};
    const boards = Array.isArray(data.boards) ? data.boards : [];
    const named = (outcome) => boards.filter((b) => b.outcome === outcome)
      .map((b) => QZ.t("board", { n: b.board }) + (outcome === "refused" ? " " + QZ.replyText(b) : ""));
    const parts = [QZ.tOr("summary.done." + cmd, "summary.done", { n: sum.done || 0 })];
    if (sum.not_needed) parts.push(QZ.t("summary.not_needed", { n: sum.not_needed }));
    for (const outcome of ["refused", "no_answer"]) {
      if (!sum[outcome]) continue;
      const list = named(outcome).slice(0, 12);
      parts.push(QZ.t("summary." + outcome, { n: sum[outcome] }) + (list.length ? QZ.t("summary.boards", { list: list.join(QZ.lang === "en" ? ", " : "、") }) : ""));
    }
    // the round's boards whose clock was never seen: the command did not reach them
    const unseen = Array.isArray(data.unseen) ? data.unseen : [];
    if (unseen.length) parts.push(QZ.t("summary.unseen", { n: unseen.length, list: unseen.slice(0, 12).map((b) => QZ.t("board", { n: b })).join(QZ.lang === "en" ? ", " : "、") }));
    return parts.join(" · ");
  };
  // An API error in words, by the code the station sends (``code``), else by the HTTP status.
  QZ.apiError = function (status, data) {
    data = data || {};
    const byStatus = { 401: "unauthenticated", 403: "forbidden", 404: "not_found", 409: "refused",
      413: "too_large", 429: "rate_limited", 503: "busy", 504: "timeout" };
    const code = data.code || byStatus[status];
    const vars = { status, by: "", ...QZ.words(data.args) };
    let text = code ? QZ.tOr("api." + code, "api.generic", vars) : QZ.t("api.generic", vars);
    if (typeof data.line === "number") text += QZ.t("api.line", { line: data.line });
    return text;
  };
  QZ.applyI18n = function (root) {
    document.documentElement.lang = QZ.lang;
    for (const el of (root || document).querySelectorAll("[data-i18n]")) el.textContent = QZ.t(el.dataset.i18n);
    for (const el of (root || document).querySelectorAll("[data-i18n-placeholder]"))
      el.placeholder = QZ.t(el.dataset.i18nPlaceholder);
    const title = document.querySelector("title[data-i18n]");
    if (title) document.title = title.textContent;
  };
  QZ.onLang = [];
  QZ.setLang = function (lang) {
    QZ.lang = lang;
    try { localStorage.setItem("qz.lang", lang); } catch (e) { /* private mode */ }
    const url = new URL(location.href);
    url.searchParams.set("lang", lang === "en" ? "en" : "zh");
    history.replaceState(null, "", url);
    QZ.applyI18n();
    for (const f of QZ.onLang) f();
  };
  QZ.langButton = function (button) {
    button.addEventListener("click", () => QZ.setLang(QZ.lang === "en" ? "zh-CN" : "en"));
  };

  // -- DOM --------------------------------------------------------------------------------
  QZ.el = function (tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) el.append(c);
    return el;
  };

  // An element's text, written only when it differs, into the element's one text node (its
  // data changes; no new node): a card's tick is then one text change, laid out and painted
  // within the card (docs/benchmarks.md, the hall screen under CPU throttling).
  QZ.setText = function (el, text) {
    const node = el.firstChild;
    if (node && node.nodeType === 3 && !node.nextSibling) {
      if (node.data !== text) node.data = text;
    } else if (el.textContent !== text) {
      el.textContent = text;
    }
  };
  // An attribute (or a dataset entry) set only when it changes: the same value written again
  // is still a DOM mutation, and may send the card through style recalculation.
  QZ.setAttr = function (el, name, value) {
    if (value === null) { if (el.hasAttribute(name)) el.removeAttribute(name); }
    else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  };
  QZ.setHidden = function (el, hidden) { if (el.hidden !== hidden) el.hidden = hidden; };

  // -- the station's clock ------------------------------------------------------------------
  // Every SSE message carries the station's wall clock (station_ts) when it was sent. A sample
  // station_ts - now_here = offset - delay <= offset, so the largest recent sample is the best
  // estimate of how far the station's clock is ahead of this screen's.
  const samples = [];
  QZ.clock = {
    offset: 0,
    known: false,
    sample(stationTs) {
      if (typeof stationTs !== "number") return;
      samples.push(stationTs - Date.now());
      if (samples.length > 30) samples.shift();
      this.offset = Math.max(...samples);
      this.known = true;
    },
    now() { return Date.now() + this.offset; },
  };

  // Remaining ms of one side of a snapshot at station time `now`: only the running side moves.
  QZ.remaining = function (state, side, now) {
    if (!state || state.phase === "idle" || !state.game) return null;
    const ms = state[side + "_ms"];
    if (typeof ms !== "number") return null;
    // window.QZ_STALE (banner.js): the station time since when it has lost the boards; the
    // running clock is shown as it stood then, not run on.
    if (window.QZ_STALE) now = Math.min(now, window.QZ_STALE);
    if (state.phase === "running" && state.running === side && !state.flag)
      // never more than the snapshot says: a snapshot dated after `now` (a page clock a little
      // behind, or a stale page's stop time before a late snapshot) has used nothing yet
      return Math.max(0, ms - Math.max(0, now - state.ts));
    return ms;
  };

  QZ.hhmmss = function (ms) {
    return new Date(ms).toLocaleTimeString(QZ.lang === "en" ? "en-GB" : "zh-CN", { hour12: false });
  };

  QZ.fmt = function (ms) {
    if (ms === null || ms === undefined) return "--:--";
    ms = Math.max(0, ms);
    if (ms < 10000) {
      const tenths = Math.floor(ms / 100);
      return "0:0" + Math.floor(tenths / 10) + "." + (tenths % 10);
    }
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const mm = h ? String(m).padStart(2, "0") : String(m);
    return (h ? h + ":" : "") + mm + ":" + String(sec).padStart(2, "0");
  };
  // One formatter a language (toLocaleTimeString builds one a call: ~0.5 ms on this machine).
  const timeFormats = {};
  QZ.time = function (wallMs) {
    const locale = QZ.lang === "en" ? "en-GB" : "zh-CN";
    const format = timeFormats[locale] || (timeFormats[locale] = new Intl.DateTimeFormat(locale,
      { hour12: false, hour: "numeric", minute: "numeric", second: "numeric" }));
    return format.format(new Date(wallMs));
  };
  QZ.boardKey = function (a, b) {
    const na = Number(a), nb = Number(b);
    if (!isNaN(na) && !isNaN(nb)) return na - nb;
    return String(a).localeCompare(String(b));
  };

  // A knockout game's stage by its id (ko-sf1, ko-f, ko-3; "-tb": its armageddon), else null.
  QZ.koLabel = function (game) {
    const m = /^ko-(sf([12])|f|3)(-tb)?$/.exec(game || "");
    if (!m) return null;
    const stage = m[2] ? "semi_final" : m[1] === "f" ? "final" : "third_place";
    return QZ.t("ko.stage." + stage) + (m[2] ? " " + m[2] : "") + (m[3] ? " · " + QZ.t("ko.armageddon") : "");
  };

  // -- a board card -------------------------------------------------------------------------
  // Built once, then update(view) when a snapshot/status arrives and tick(now) every frame.
  QZ.Card = class {
    constructor(board, { link = true, onClick = null, marks = false } = {}) {
      this.board = board;
      this.view = { board, state: null, status: null };
      this.shown = true;
      this.stale = false;
      const e = QZ.el;
      this.no = e("span", { class: "no" });
      this.badge = e("span", { class: "badge" });
      this.game = e("span", { class: "game" });
      this.result = e("span", { class: "result" });
      this.attn = e("span", { class: "attn" });
      this.attention = { alerts: 0 };
      this.marks = marks;
      this.missing = false;
      this.sides = {};
      for (const side of ["red", "black"]) {
        const name = e("span", { class: "name" });
        const time = e("span", { class: "time", "data-side": side });
        const marks = e("span", { class: "marks" });
        const row = e("div", { class: "side " + side }, e("span", { class: "dot" }), name, time, marks);
        this.sides[side] = { row, name, time, marks, text: null, marksKey: null };
      }
      this.el = e(
        link ? "a" : "div",
        { class: "card", "data-board": board, href: link ? "/board/" + encodeURIComponent(board) : null },
        e("div", { class: "head" }, this.no, this.game, this.result, this.attn, this.badge),
        this.sides.red.row,
        this.sides.black.row,
      );
      if (onClick) this.el.addEventListener("click", (ev) => { ev.preventDefault(); onClick(board); });
      this.render();
    }
    // Open alerts and pending decisions of this board (the arbiter's page counts them).
    mark(attention) {
      this.attention = { ...this.attention, ...attention };
      this.render();
    }
    update(part) {
      Object.assign(this.view, part);
      this.render();
      QZ.wake();
    }
    // A card off the screen (another page, scrolled away) keeps its view but draws nothing;
    // it is drawn once when it comes back.
    show(shown) {
      if (shown === this.shown) return;
      this.shown = shown;
      if (shown && this.stale) this.render();
      if (shown) QZ.wake();
    }
    render() {
      if (!this.shown) { this.stale = true; return; }
      this.stale = false;
      // Every write below happens only when its value changed (QZ.setText, QZ.setAttr): a
      // snapshot that moves one clock leaves the rest of the card untouched.
      const st = this.view.state, status = this.view.status;
      QZ.setText(this.no, QZ.t("board", { n: this.board }));
      const ko = st && QZ.koLabel(st.game); // a knockout game says what it is (和棋黑胜 above all)
      // A finished game shows its result where people look: the score and why.
      const result = st && st.result && typeof st.result === "object" ? st.result : null;
      // A flag stopped the clock and no result stands: not over — the loss is to rule, or (a
      // loss dismissed or taken back) the side's time to give (it said 结束: an outsider deputy)
      const open = !!(st && st.phase === "finished" && st.flag && !result);
      const phase = !open ? "phase." + (st && st.phase) : (st.pending || []).some((p) => p.reason === "flag") ? "phase.flag_pending" : "phase.needs_time";
      QZ.setText(this.game, st && st.phase ? (ko ? ko + " · " : "") + QZ.tOr(phase, "ev.other") + (st.arbiter_mode ? " · " + QZ.t("arbiter_mode") : "") : "");
      QZ.setText(this.result, result ? QZ.score(result) + (result.reason ? " · " + QZ.reason(result.reason) : "") : "");
      QZ.setHidden(this.result, !result);
      QZ.setAttr(this.el, "data-result", result ? QZ.score(result) : "");
      // The arbiter's marks: open alerts and decisions waiting on this board.
      // (an open alert and the board's pending proposal are often the same decision)
      const pending = this.marks && st && Array.isArray(st.pending) ? st.pending.length : 0;
      const need = Math.max(this.attention.alerts, pending);
      QZ.setText(this.attn, need ? QZ.t("attention.count", { n: need }) : "");
      QZ.setAttr(this.attn, "title", need ? QZ.t("attention") : "");
      QZ.setHidden(this.attn, !need);
      QZ.setAttr(this.el, "data-attention", need ? String(need) : null);
      // A board online by its status but silent past the station's bound (a node gone
      // without its will): unknown since its last message, its clock not run on past it.
      const silent = status && status.state === "online" && status.silent_since_ms;
      // While the station cannot see the boards (banner.js: window.QZ_STALE, the broker lost or
      // the station unreachable) no board is known to be anything: unknown since then.
      const blind = (this.blind = window.QZ_STALE || null);
      const online = this.missing ? "missing" : blind && status ? "blind" : silent ? "silent" : status ? status.state : "unknown";
      QZ.setAttr(this.el, "data-online", online);
      // What 只看需处理 keeps: an alert or a decision waiting, and a game that waits for the
      // arbiter though nothing is to be ruled — paused (held), its clock failing, its board
      // not online (an outsider acknowledged a node's restart and the filter left no board)
      const playing = st && !result && (st.phase === "running" || st.phase === "paused");
      // (a board of the round whose clock was never seen waits for the technician)
      const waits = open || (!st && !!this.view.paired) || (playing && (st.phase === "paused" || !!st.clock_fault || online !== "online"));
      QZ.setAttr(this.el, "data-needs", need || waits ? "1" : null);
      QZ.setAttr(this.el, "data-phase", st ? st.phase : "none");
      // A board online whose clock face fails (state.clock_fault) says so, with the reason.
      const fault = st && st.clock_fault;
      QZ.setText(this.badge, online === "online" ? (fault ? QZ.t("clock_fault") : "")
        : online === "silent" ? QZ.t("silent_since", { t: QZ.hhmmss(silent) })
        : online === "blind" ? QZ.t("blind_since", { t: QZ.hhmmss(blind) })
        : QZ.t(online === "lost" ? "lost" : online === "offline" ? "offline" : online === "missing" ? "no_such_board" : "unknown"));
      QZ.setAttr(this.badge, "class", "badge" + (online === "online" && !fault ? "" : " off"));
      QZ.setAttr(this.badge, "title", fault || ""); // the face's own words, for a technician (on hover only)
      for (const side of ["red", "black"]) {
        const s = this.sides[side];
        const paired = !st && this.view.paired; // a clock never seen: its game's players
        const player = st && st[side] ? st[side] : paired ? paired[side] : QZ.t(side);
        QZ.setText(s.name, player);
        // a flag that decided nothing (dismissed, another result entered) is not shown beside
        // the result that stands
        const flagged = !!(st && st.flag === side && (!result || result.reason === "flag"));
        s.row.classList.toggle("running", !!(st && st.phase === "running" && st.running === side));
        s.row.classList.toggle("flagged", flagged);
        // 让二先: the receiver of a handicap game (Wulong) makes its first moves in a row
        const handicap = st && st.handicap && st.handicap.receiver === side ? st.handicap : null;
        const fouls = st && st.fouls ? st.fouls[side] : 0;
        // The marks are built again only when they change (a flag, a handicap, a foul).
        const marks = [flagged, handicap && handicap.moves, fouls, QZ.lang].join("|");
        if (marks !== s.marksKey) {
          s.marksKey = marks;
          s.marks.textContent = "";
          if (flagged) s.marks.append(QZ.el("span", { class: "flag-mark", text: "⚑ " + QZ.t("flag") }));
          if (handicap) s.marks.append(QZ.el("span", { class: "handicap-mark", "data-moves": handicap.moves, text: QZ.t("handicap", { n: QZ.lang === "en" ? handicap.moves : "〇一二三四五六七八九十"[handicap.moves] }), title: QZ.t("handicap.title", { n: handicap.moves }) }));
          if (fouls) s.marks.append(QZ.el("span", { class: "foul-mark", "data-fouls": fouls, text: QZ.t("fouls", { n: fouls }) }));
        }
        s.text = null; // the time is worked out again on the next tick (written if it changed)
      }
      this.el.classList.toggle("has-flag", !!(st && st.flag && (!result || result.reason === "flag")));
      this.tick(QZ.clock.now()); // the times with the names (a tie-break card showed the slow game's 30:04)
    }
    // Touches the DOM only when a shown text changes (whole seconds; tenths under 10 s).
    // data-ms is the remaining time at the instant the shown text was last written.
    tick(now) {
      if (!this.shown) return;
      if ((window.QZ_STALE || null) !== this.blind) this.render(); // lost or seen again
      const st = this.view.state;
      now = this.asOf(now);
      for (const side of ["red", "black"]) {
        const s = this.sides[side];
        const ms = QZ.remaining(st, side, now);
        const text = QZ.fmt(ms);
        if (text !== s.text) {
          if (s.time.textContent !== text) {
            QZ.setText(s.time, text);
            s.time.dataset.ms = ms === null ? "" : String(Math.round(ms));
          }
          s.text = text;
          s.row.classList.toggle("low", ms !== null && ms < 60000);
          s.row.classList.toggle("critical", ms !== null && ms < 10000);
        }
      }
    }
    // The instant the card's clock is shown as of: now, or its last message when silent; for a
    // board whose node is gone (offline, lost) the last message before it went, else its
    // state's own instant — a node restarted brings the clock back from there, not run on.
    asOf(now) {
      const status = this.view.status;
      if (!status) return now;
      const st = this.view.state;
      const since = status.state === "online" ? status.silent_since_ms
        : status.away_since_ms || (st && st.ts);
      return since ? Math.min(now, since) : now;
    }
    // Milliseconds from `now` until the running side's shown text changes (Infinity: never).
    nextChange(now) {
      const st = this.view.state;
      if (!this.shown || !st || st.phase !== "running" || st.flag || !st.running) return Infinity;
      if (this.asOf(now) !== now) return Infinity; // a silent board's clock stands
      const ms = QZ.remaining(st, st.running, now);
      if (ms === null || ms <= 0) return Infinity;
      const unit = ms < 10000 ? 100 : 1000;
      return ms - Math.floor(ms / unit) * unit + 1;
    }
  };

  // The pages' cards are drawn by timers set for the next instant a shown value changes, not
  // every animation frame: with 40 running boards that is about 40 small writes a second
  // instead of 80 writes 60 times a second. A new snapshot or a card shown wakes the loops.
  // Changes due within this many ms of the first are drawn in one frame, each at most this
  // late (never early: a shown time is never less than the player has).
  QZ.DRAW_SLACK_MS = 50;
  const loops = [];
  let woken = false;
  QZ.wake = function () {
    if (woken) return;
    woken = true;
    setTimeout(() => { woken = false; for (const loop of loops) loop(); }, 0);
  };
  // `others`: more things drawn in the same frames, each with tick(now) and nextChange(now)
  // (the hall screen's clock and round line).
  QZ.animate = function (cards, others = []) {
    let timer = null;
    function run() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const now = QZ.clock.now();
      let next = Infinity;
      for (const card of cards.values()) {
        card.tick(now);
        next = Math.min(next, card.nextChange(now));
      }
      for (const other of others) {
        other.tick(now);
        next = Math.min(next, other.nextChange(now));
      }
      if (next < Infinity) timer = setTimeout(run, next + QZ.DRAW_SLACK_MS);
    }
    loops.push(run);
    run();
    return run;
  };
})();
