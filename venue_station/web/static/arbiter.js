// The arbiter's station: login, the live alert list (with sound), the boards, every action.
// Every action goes through the API with the session cookie and the CSRF token; its reply or
// its time-out is shown in the log.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const cards = new Map();
  const alerts = new Map();
  let csrf = null;
  let selected = null;
  let bigCard = null;
  let panel = null; // the chosen board's forms (board_actions.js), once made
  const boardEvents = new Map(); // board -> newest-first events
  const lastPause = new Map(); // board -> side on move when it was last paused

  QZ.applyI18n();
  QZ.langButton($("lang"));
  QZ.onLang.push(() => {
    for (const c of cards.values()) c.render();
    if (bigCard) bigCard.render();
    if (panel) panel.sync();
    renderAlerts();
    renderHistory();
    fouls.render();
    renderLog();
    refreshSpares();
    fillReasons();
  });

  const unlockAudio = QZ.sound.unlock, beep = QZ.sound.beep; // sound.js

  // -- API ------------------------------------------------------------------------------------
  async function api(method, url, body) {
    const headers = { "Content-Type": "application/json" };
    if (csrf) headers["X-CSRF-Token"] = csrf;
    const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin" });
    let data = {};
    try { data = await r.json(); } catch (e) { /* an empty or non-JSON body */ }
    if (r.status === 401 && url !== "/api/auth/login") showLogin(csrf !== null);
    return { status: r.status, data };
  }

  // The page's log of what the arbiter did and what came of it (actlog.js).
  const actions = QZ.actionLog(() => $("log"));
  const { log, replaceLog, refusals } = actions;
  const renderLog = actions.render;

  // A result a later round was paired from is changed on a second go (409 paired_from says
  // so): the same command on the same board within PAIRED_MS carries after_pairing, once.
  const PAIRED_MS = 15000, pairedOk = new Map(); // "board cmd" -> until (ms)
  // Send, show "sent…", then replace it by the reply or the time-out.
  async function act(what, method, url, body) {
    const pending = log(what, "sent");
    let outcome = "error", detail = null;
    const m = /^\/api\/boards\/([^/]+)\/cmd$/.exec(url), again = m && decodeURIComponent(m[1]) + " " + body.cmd;
    if (again && pairedOk.get(again) > Date.now()) body = { ...body, after_pairing: true };
    try {
      const { status, data } = await api(method, url, body);
      if (again && status === 200) pairedOk.delete(again);
      if (again && status === 409 && data.code === "paired_from") pairedOk.set(again, Date.now() + PAIRED_MS);
      const cmd = body && typeof body.cmd === "string" ? body.cmd : "";
      const summary = () => (data.summary && data.board == null ? QZ.summaryText(cmd, data) : "");
      if (status === 200 && (data.ok === undefined || data.ok)) { outcome = "ok"; if (data.summary && data.board == null) detail = summary; }
      else if (status === 504) { outcome = "timeout"; detail = () => summary() || refusals(data) || QZ.apiError(status, data); }
      else if (data.outcome === "rejected" || status === 409) {
        outcome = "refused";
        detail = () => {
          if (data.code && QZ.has("api." + data.code)) return QZ.apiError(status, data);
          if (data.code && QZ.has("code." + data.code)) return QZ.replyText(data);
          return summary() || refusals(data) || QZ.apiError(status, data);
        };
      } else detail = () => QZ.apiError(status, data);
      replaceLog(pending, what, outcome, detail);
      return { ok: outcome === "ok", status, data };
    } catch (e) {
      replaceLog(pending, what, "error", () => QZ.t("api.network"));
      return { ok: false, status: 0, data: {} };
    }
  }
  QZ.station = { api, act }; // for the knockout section (knockout.js)
  const boardCmd = (board, cmd, args, what) =>
    act(what || (() => QZ.t("board", { n: board }) + " " + QZ.tOr(cmd, "ev.other")), "POST", "/api/boards/" + encodeURIComponent(board) + "/cmd", { cmd, args: args || {} });
  const venueCmd = (cmd, args, what) => act(what, "POST", "/api/venue/cmd", { cmd, args: args || {} });

  // -- login ----------------------------------------------------------------------------------
  // `ended`: the page was logged in and the station no longer knows its session (it expired,
  // or the station lost it): say so, not a bare form (an outsider deputy stared at one).
  function showLogin(ended = false) {
    if (ended) $("login-error").textContent = QZ.t("login.ended");
    // the stream of the login that ended is an anonymous one now: the next login opens its own
    if (stream) { stream.close(); stream = null; }
    csrf = null;
    $("station").hidden = true;
    $("logout").hidden = true;
    $("user").textContent = "";
    $("goto").hidden = true;
    $("login").hidden = false;
  }
  let shownBefore = false; // logged in again on this page: an alert it never saw beeps
  async function showStation(session) {
    const again = shownBefore;
    shownBefore = true;
    csrf = session.csrf;
    // what this account's role cannot do is not offered (style.css; the server refuses it
    // anyway): a deputy on a phone saw every chief-only control and was refused when tapping
    document.body.dataset.role = session.role || "";
    const note = $("role-note");  // a viewer loses the board's actions too: said (a reviewer)
    note.dataset.i18n = session.role === "viewer" ? "role.note.viewer" : "role.note";
    note.textContent = QZ.t(note.dataset.i18n);
    $("user").textContent = session.user;
    $("login").hidden = true;
    $("logout").hidden = false;
    $("station").hidden = false;
    $("goto").hidden = false;
    await Promise.all([loadAlerts(again), loadReasons(), loadRound()]);
    startStream();
    if (QZ.onStation) QZ.onStation(); // the knockout section (knockout.js)
  }
  $("login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    unlockAudio();
    $("login-error").textContent = "";
    const { status, data } = await api("POST", "/api/auth/login", { username: $("username").value, password: $("password").value });
    if (status === 200) { $("password").value = ""; await showStation(data); }
    else if (status === 401) $("login-error").textContent = QZ.t("login.bad");
    else $("login-error").textContent = QZ.t("login.error", { e: QZ.apiError(status, data) });
  });
  $("logout").addEventListener("click", async () => { await api("POST", "/api/auth/logout"); showLogin(); });

  // -- alerts ---------------------------------------------------------------------------------
  // Only an open or acknowledged alert waits for the arbiter; every other status (confirmed,
  // dismissed, closed by itself when its cause went away, …) is settled.
  const SETTLED = { includes: (status) => status !== "open" && status !== "acked" };
  // Whether ruling the alert decides anything (a proposal, a move limit's draw, a missing
  // record's foul); the rest only inform, and one tap on 知悉 puts them away for good: they no
  // longer mark their board in later rounds. The station's rule is rulings.decides
  // (tests/web/test_informing_alerts.py pins the two together).
  const DECIDING = ["foul_pending", "forfeit_pending", "flag", "late", "shutdown", "move_limit", "record_missing"];
  function decides(a) {
    if (DECIDING.includes(a.kind)) return true;
    const d = a.detail || {};
    return a.kind === "warning" && (d.status === "pending" || d.reason === "press_before_flag");
  }
  QZ.alertDecides = decides;
  const settled = (a) => SETTLED.includes(a.status) || (a.status === "acked" && !decides(a));
  // `beepNew`: an open alert the page did not know yet beeps, as one from the stream would
  // (read again at each hello: raised while the page was cut off, or before its stream).
  async function loadAlerts(beepNew = false) {
    const { status, data } = await api("GET", "/api/alerts?limit=200" + ($("show-all").checked ? "" : "&status=active"));
    if (status !== 200) return;
    let fresh = false;
    for (const a of data.alerts) {
      if (beepNew && !alerts.has(a.id) && a.status === "open") fresh = true;
      alerts.set(a.id, a);
    }
    renderAlerts();
    markBoards();
    if (fresh) beep();
  }
  $("show-all").addEventListener("change", () => { loadAlerts(); renderAlerts(); });
  // One alert changed: replace or insert only its row (a busy round raises dozens at once).
  function onAlert(a) {
    const isNew = !alerts.has(a.id);
    alerts.set(a.id, a);
    if (isNew && a.status === "open") beep();
    const list = $("alerts");
    const old = list.querySelector(`li[data-id="${a.id}"]`);
    if (old) old.remove();
    if ($("show-all").checked || !settled(a)) {
      const row = alertRow(a);
      let next = list.firstElementChild;
      while (next && newer(alerts.get(Number(next.dataset.id)), a)) next = next.nextElementSibling;
      list.insertBefore(row, next);
    }
    renderCount();
    markBoards();
  }
  const newer = (x, y) => !!x && (x.ts > y.ts || (x.ts === y.ts && x.id > y.id));
  // Every card says how many open alerts its board has; the "needs attention" filter shows
  // only the marked ones.
  function markBoards() {
    const open = new Map();
    for (const a of alerts.values())
      if (!settled(a) && a.board) open.set(a.board, (open.get(a.board) || 0) + 1);
    for (const [b, c] of cards) c.mark({ alerts: open.get(b) || 0 });
    if (bigCard) bigCard.mark({ alerts: open.get(selected) || 0 });
  }
  function renderCount() {
    $("alerts-empty").hidden = $("alerts").children.length > 0;
    const open = [...alerts.values()].filter((a) => a.status === "open").length;
    $("alert-count").textContent = open ? String(open) : "";
    document.title = (open ? "(" + open + ") " : "") + QZ.t("arbiter.title"); // a tab in the background says it too
  }
  // One beep is easily missed in a noisy hall: an alert waiting for a ruling, not even
  // acknowledged (知悉), beeps again every REMIND_MS while the page is logged in (an outsider).
  const REMIND_MS = 30000;
  setInterval(() => { if (csrf && [...alerts.values()].some((a) => a.status === "open" && decides(a))) beep(); }, REMIND_MS);
  function renderAlerts() {
    const list = $("alerts");
    list.textContent = "";
    const showAll = $("show-all").checked;
    const shown = [...alerts.values()].filter((a) => showAll || !settled(a))
      .sort((a, b) => b.ts - a.ts || b.id - a.id);
    for (const a of shown) list.append(alertRow(a));
    renderCount();
  }
  function alertRow(a) {
    const e = QZ.el;
    const what = QZ.alertWhat(a, cards.has(a.board) ? cards.get(a.board).view.state : null);
    const row = e("li", { class: "alert status-" + a.status + (decides(a) ? " decides" : " informs"), "data-id": a.id, "data-kind": a.kind, "data-status": a.status,
      "data-board": a.board, "data-game": a.game },
      e("div", { class: "alert-head" },
        e("strong", { class: "kind", text: QZ.tOr("kind." + a.kind, "kind.warning") }),
        e("button", { type: "button", class: "link", text: what.join(" · "), onclick: () => select(a.board) }),
        e("time", { text: QZ.time(a.ts) }),
        // an open alert says nothing of its state (its red edge and buttons say it): the head
        // keeps to one line on a laptop, so three whole alerts stay in view
        e("span", { class: "state", text: a.status === "open" ? "" : a.status === "cleared"
          ? QZ.tOr("cleared." + ((a.detail && a.detail.cleared) || ""), "status.cleared")
          : QZ.tOr("status." + a.status, "status.other") + (a.by ? " · " + QZ.byWho(a.by) : "") })));
    if (!settled(a)) {
      const buttons = e("div", { class: "alert-actions" });
      for (const action of decides(a) ? ["ack", "confirm", "dismiss"] : ["ack"]) {
        if (action === "ack" && a.status !== "open") continue;
        buttons.append(e("button", { type: "button", class: "needs-arbiter", "data-action": action, text: QZ.t(action),
          onclick: () => rule(a, action) }));
      }
      row.append(buttons);
    }
    return row;
  }
  async function rule(a, action) {
    const r = await act(() => QZ.tOr("kind." + a.kind, "kind.warning") + " " + QZ.t("board", { n: a.board }) + " → " + QZ.t(action),
      "POST", "/api/alerts/" + a.id, { action });
    if (r.data && r.data.alert) onAlert(r.data.alert);
  }

  // -- boards ---------------------------------------------------------------------------------
  function card(board) {
    let c = cards.get(board);
    if (!c) {
      c = new QZ.Card(board, { link: false, onClick: select, marks: true });
      cards.set(board, c);
      const sorted = [...cards.keys()].sort(QZ.boardKey);
      const next = sorted[sorted.indexOf(board) + 1];
      $("boards").insertBefore(c.el, next ? cards.get(next).el : null);
      refreshSpares();
      markBoards();
    }
    return c;
  }
  function update(board, part) {
    card(board).update(part);
    if (board === selected && bigCard) { bigCard.update(part); panel.sync(); fouls.sync(); }
  }
  function refreshSpares() {
    const sel = $("spare-board");
    const keep = sel.value;
    sel.textContent = "";
    for (const b of [...cards.keys()].sort(QZ.boardKey)) {
      if (b === selected) continue;
      sel.append(QZ.el("option", { value: b, text: QZ.t("board", { n: b }) }));
    }
    if (keep) sel.value = keep;
  }
  async function select(board) {
    selected = board;
    for (const [b, c] of cards) c.el.classList.toggle("selected", b === board);
    $("board-panel").hidden = false;
    document.body.classList.add("has-board");
    $("board-detail").dataset.board = board;
    bigCard = new QZ.Card(board, { link: false, marks: true });
    bigCard.update(card(board).view);
    $("board-card").replaceChildren(bigCard.el);
    panel.sync();
    const all = new Map(cards);
    all.set("__big", bigCard);
    animated = all;
    refreshSpares();
    markBoards();
    // On a phone the panel is below the alerts: bring it into view.
    if (window.matchMedia("(max-width: 900px)").matches) $("board-panel").scrollIntoView({ block: "start" });
    await loadBoard(board);
  }
  async function loadBoard(board) {
    const { status, data } = await api("GET", "/api/boards/" + encodeURIComponent(board));
    if (status === 200 && board === selected) {
      boardEvents.set(board, data.events || []);
      update(board, { state: data.state, status: data.status });
      renderHistory();
      fouls.load().catch(() => {});
    }
  }
  function renderHistory() {
    const list = $("board-history");
    list.textContent = "";
    for (const ev of (boardEvents.get(selected) || []).slice(0, 50)) {
      const text = QZ.describeEvent(ev);
      list.append(QZ.el("li", { "data-type": ev.type }, QZ.el("time", { text: QZ.time(ev.ts) }), " #" + ev.seq + " ", text));
    }
  }

  function closeBoard() {
    selected = null;
    bigCard = null;
    animated = cards;
    $("board-panel").hidden = true;
    document.body.classList.remove("has-board");
    for (const c of cards.values()) c.el.classList.remove("selected");
  }
  $("board-close").addEventListener("click", closeBoard);
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && selected) closeBoard(); });

  // Walking the hall: a board by its number, and only the boards that need the arbiter.
  $("goto").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const n = $("goto-board").value.trim();
    const none = $("goto-none");
    if (!cards.has(n)) { none.textContent = QZ.t("goto.none", { n }); none.hidden = false; return; }
    none.hidden = true;
    $("goto-board").value = "";
    cards.get(n).el.scrollIntoView({ block: "nearest" });
    select(n);
  });
  const noneText = () => { $("boards").dataset.none = QZ.t("attention.none"); };
  noneText();
  QZ.onLang.push(noneText);
  $("attention-only").addEventListener("change", () => {
    $("boards").classList.toggle("attention-only", $("attention-only").checked);
  });

  // The exports of the round being played (or the last one) and of the selected game.
  async function loadRound() {
    const { status, data } = await api("GET", "/api/round");
    const round = status === 200 && data && data.round ? data.round : 1;
    $("x-results").href = "/api/export/rounds/" + round + "/results.csv";
    $("x-pgn").href = "/api/export/rounds/" + round + "/games.pgn";
  }

  // -- the board's actions (board_actions.js) --------------------------------------------------
  panel = QZ.boardActions({ selected: () => selected, card, api, boardCmd, act, log });
  $("f-count").elements.limit.addEventListener("input", (ev) => { ev.target.dataset.typed = "1"; });
  const fouls = QZ.foulList({ selected: () => selected, card, api, boardCmd });

  // The profile's reasons (GET /api/regulation/reasons) fill the three choices, in the
  // page's language (refilled on the switch, the choice kept).
  let reasons = null;
  async function loadReasons() {
    reasons = await QZ.loadReasons();
    fillReasons();
    renderHistory();
    renderAlerts();
  }
  function fillReasons() {
    if (!reasons) return;
    $("ko").hidden = reasons.knockout === false; // Wulong has no knockout: no 淘汰赛 section
    // the move count's limit: the profile's 自然限着 until the arbiter types another
    const limit = $("f-count").elements.limit;
    if (!limit.dataset.typed && reasons.move_limit) limit.value = reasons.move_limit;
    for (const select of document.querySelectorAll("select[data-kind]")) {
      const chosen = select.value;
      const keep = [...select.options].filter((o) => o.value === "arbiter");
      select.replaceChildren(...keep);
      for (const r of reasons[select.dataset.kind] || []) {
        const words = QZ.lang === "en" ? r.en : r.zh;
        const count = r.count ? QZ.t("reason.count", { n: r.count }) : "";
        select.append(QZ.el("option", { value: r.code, title: words, "data-count": r.count || null, text: words + count }));
      }
      if (chosen) select.value = chosen;
    }
  }

  // Two taps for what touches many boards or moves a game: the first arms, the second sends.
  function twoTaps(button, run) {
    let armed = null;
    button.addEventListener("click", (ev) => {
      ev.preventDefault();
      // A double click's second click (its click count 2) is the same gesture, not the second
      // tap the arming asks for: the whole venue's clocks are not started by one double click.
      if (ev.detail > 1) return;
      // armed, the button says what the next tap does (a quick double tap armed it silently)
      const label = () => (button.dataset.i18n ? QZ.t(button.dataset.i18n) : button.textContent);
      const disarm = () => { armed = null; button.classList.remove("armed"); delete button.dataset.armed; button.textContent = label(); };
      if (!armed) {
        button.classList.add("armed");
        button.dataset.armed = "1";
        button.textContent = QZ.t("tap_again", { what: label() });
        armed = setTimeout(disarm, 5000);
        return;
      }
      clearTimeout(armed);
      disarm();
      run();
    });
  }
  twoTaps($("start-round"), () => {
    const text = $("start-at").value;
    // The chosen time is read on this tablet's clock: send it on the station's.
    const args = text ? { at: Math.round(new Date(text).getTime() + QZ.clock.offset) } : {};
    venueCmd("start", args, () => QZ.t("start_round") + (text ? " @ " + text.replace("T", " ") : ""))
      .then((r) => { if (r.ok) $("start-at").value = ""; }); // not the next round's start too
  });
  twoTaps($("pause-all"), () => venueCmd("pause", {}, () => QZ.t("pause_all")));
  twoTaps($("resume-all"), () => venueCmd("resume", {}, () => QZ.t("resume_all")));
  twoTaps($("f-spare").querySelector("button"), () => moveToSpare(selected, $("spare-board").value));

  // Who settled an alert: an account, or (never a raw code) the board's own event or the station

  // A broken clock: pause it, then give its game with its exact times to the spare board.
  async function moveToSpare(broken, spare) {
    if (!broken || !spare || broken === spare) return;
    const what = () => QZ.t("spare") + " " + broken + " → " + spare;
    let st = card(broken).view.state;
    // a board whose clock was never seen: its game as the station would set it, from the start
    const paired = !st && card(broken).view.paired;
    if (paired) { await boardCmd(spare, "set_game", paired, what); return; }
    if (!st || !st.game) { log(what, "error", () => QZ.t("no_game")); return; }
    // A board that cannot answer (its Pi dead, gone silent): its times as its card shows them
    // now, said to be an estimate for the arbiter to check before the spare starts.
    const answers = card(broken).el.dataset.online === "online";
    let running = null; // the side on move, as the board last said (a dead board's estimate)
    if (st.phase === "running" && !answers) {
      running = st.running;
      const left = QZ.remaining(st, running, card(broken).asOf(QZ.clock.now()));
      st = { ...st, phase: "paused", [running + "_ms"]: left };
      log(() => QZ.t("board", { n: broken }), "error", () => QZ.t("spare.estimated"));
    } else if (st.phase === "running") {
      const r = await boardCmd(broken, "pause", {}, () => QZ.t("board", { n: broken }) + " " + QZ.t("pause"));
      if (!r.ok) return;
      st = await pausedState(broken);
      if (!st) { log(what, "error", () => QZ.t("no_paused")); return; }
    }
    const moves = st.moves || { red: 0, black: 0 };
    // Red moves first, so equal counts mean red is on move; a recorded pause says it exactly.
    const onMove = running || lastPause.get(broken) || (moves.red > moves.black ? "black" : "red");
    const args = { game: st.game, tc: st.tc, red: st.red || null, black: st.black || null,
      red_ms: st.red_ms, black_ms: st.black_ms, moves: { red: moves.red, black: moves.black }, on_move: onMove };
    await boardCmd(spare, "set_game", args, what);
  }
  async function pausedState(board) {
    for (let i = 0; i < 40; i++) {
      const st = card(board).view.state;
      if (st && st.phase !== "running") return st;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    return null;
  }

  // -- live -------------------------------------------------------------------------------------
  let stream = null;
  let hellos = 0;
  let animated = cards;
  function startStream() {
    if (stream) return;
    stream = QZ.stream({
      hello(d) {
        $("venue").textContent = d.station ? (d.station.title || d.station.venue) : "";
        for (const v of d.boards || []) update(v.board, { state: v.state, status: v.status, paired: v.paired || null });
        // hello carries no alert and no event: what came before this stream (or while the
        // page was cut off: a laptop asleep, a phone off the wifi) is read now.
        // A read the network fails (cut off again): nothing to say, the next hello reads.
        loadAlerts(true).catch(() => {});
        if (hellos++ && selected) loadBoard(selected).catch(() => {});
      },
      state(d) { update(d.board, { state: d.state }); },
      status(d) { update(d.board, { status: d.status }); },
      alert(d) { onAlert(d.alert); },
      event(d) {
        const ev = d.event;
        if (ev.type === "paused" && ev.data && ev.data.side_on_move) lastPause.set(d.board, ev.data.side_on_move);
        const list = boardEvents.get(d.board);
        if (list) {
          list.unshift(ev);
          if (list.length > 100) list.pop();
          if (d.board === selected) renderHistory();
        }
        if (d.board === selected && ev.type === "foul") fouls.load().catch(() => {});
      },
    });
  }
  (function frame() {
    const now = QZ.clock.now();
    for (const c of animated.values()) c.tick(now);
    requestAnimationFrame(frame);
  })();

  // -- start: already logged in (a reload) or not ----------------------------------------------
  (async function () {
    const { status, data } = await api("GET", "/api/auth/session");
    if (status === 200) await showStation(data);
    else showLogin();
  })();
})();
