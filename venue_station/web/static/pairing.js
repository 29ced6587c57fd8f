// The pairing page: export the TRF of any round, import a TRF, an engine's pairs list or a players list.
// Text is set with textContent only, so a player's name or an error can never become markup.
"use strict";
(function () {
  const TEXT = window.QZ.pairingText; // (pairing_words.js)
  let lang = QZP.initialLang();
  const t = QZP.words(TEXT, () => lang);
  const $ = (id) => document.getElementById(id);
  let csrf = null;

  // The engine's last word, said again in the other language on a switch (an outsider read
  // its Chinese status on the English page).
  let engineSaid = null;
  function sayEngine(text) {
    engineSaid = text;
    $("engine-status").textContent = text ? text() : "";
  }
  function applyText() {
    document.documentElement.lang = lang;
    if (engineSaid) $("engine-status").textContent = engineSaid();
    document.title = (lang === "en" ? "qizhong · " : "棋钟 · ") + t("title");
    for (const id of Object.keys(TEXT[lang])) {
      const el = $(id);
      if (el) el.textContent = t(id);
    }
    for (const opt of $("round").querySelectorAll("option[data-n]")) opt.textContent = t("after", { n: opt.dataset.n });
  }

  function exportHref() {
    const q = new URLSearchParams();
    if ($("round").value) q.set("round", $("round").value);
    if ($("absent").value.trim()) q.set("absent", $("absent").value.trim());
    const s = q.toString();
    $("export").href = "/api/export/tournament.trf" + (s ? "?" + s : "");
  }

  async function loadRounds() {
    const r = await fetch("/api/station");
    const info = r.ok ? await r.json() : {};
    const rounds = info.rounds || 9;
    for (let n = 1; n <= rounds; n++) {
      const opt = document.createElement("option");
      opt.value = String(n);
      opt.dataset.n = String(n);
      $("round").append(opt);
    }
  }

  async function loadEntrants() {
    const r = await fetch("/api/trf/entrants");
    if (!r.ok) return;
    const body = $("entrants");
    body.replaceChildren();
    const list = (await r.json()).entrants;
    $("entrants-empty").hidden = list.length > 0;
    const keys = $("player-keys");
    keys.replaceChildren();
    for (const e of list) {
      const opt = document.createElement("option");
      opt.value = e.player;
      keys.append(opt);
    }
    for (const e of list) {
      const tr = document.createElement("tr");
      if (e.withdrawn) tr.dataset.withdrawn = "1";
      for (const v of [e.start_rank, e.player + (e.withdrawn ? t("withdrawn") : ""), e.name]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.append(td);
      }
      body.append(tr);
    }
  }

  async function session() {
    const r = await fetch("/api/auth/session");
    csrf = r.ok ? (await r.json()).csrf : null;
    $("login-needed").hidden = csrf !== null;
  }

  // The result line: what was imported, or why not, in the page's language (by the code the
  // station sends, its line and columns; its English sentence is kept out of the page).
  let last = null;
  function showResult() {
    const el = $("result");
    el.classList.toggle("error", !!(last && last.error));
    if (!last) { el.textContent = ""; return; }
    if (last.key) { el.textContent = t(last.key); return; }
    if (last.error) {
      const b = last.body || {};
      const code = b.code || { 401: "unauthenticated", 403: "forbidden", 404: "not_found", 413: "too_large" }[last.status];
      const args = { ...(b.args || {}) };
      for (const [k, v] of Object.entries(args)) if (Array.isArray(v)) args[k] = v.slice(0, 10).join(lang === "en" ? ", " : "、");
      if (code === "players_mismatch") // why, by its cause (one sentence said two reasons at once)
        args.detail = TEXT[lang]["err.mismatch_" + args.cause] ? t("err.mismatch_" + args.cause, args)
          : args.start_rank !== undefined ? t("err.mismatch_rank", args) : args.count !== undefined ? t("err.mismatch_missing", args) : "";
      if (code === "players_stale") args.list = [args.renamed, args.removed].filter(Boolean).join(lang === "en" ? ", " : "、");
      let e = code && TEXT[lang]["err." + code] ? t("err." + code, args) : t("err.generic", { status: last.status });
      if (code === "bad_csv" && args.reason && TEXT[lang]["csv." + args.reason]) e = t("csv." + args.reason, args); // why, in words
      if (typeof b.line === "number")
        e += Array.isArray(b.columns) ? t("err.columns", { line: b.line, a: b.columns[0], b: b.columns[1] }) : t("err.line", { line: b.line });
      el.textContent = t("failed", { e });
      return;
    }
    const body = last.body;
    if (last.preview) { el.textContent = t("preview", { what: previewText(body) }); return; }
    if (last.players) { el.textContent = t("done-players", { n: body.imported ?? 0 }); return; }
    const done = body.round ? t("done", { players: body.players ?? "—", round: body.round, games: body.games ?? 0, byes: body.byes ?? 0 })
      : t("done-list", { players: body.players ?? "—" }); // a players file: no round (it said 第—轮 0 局)
    el.textContent = [done, ...movedText(body), ...namesText(body), ...rematchText(body)].join(lang === "en" ? "; " : "；");
  }
  // Players paired again (a Swiss pairs nobody twice): a warning, named, before and after.
  function rematchText(b) {
    if (!Array.isArray(b.rematches) || !b.rematches.length) return [];
    const sep = lang === "en" ? ", " : "、";
    const list = b.rematches.slice(0, 5).map((r) => t("pv.rematch", { ...r, met: r.met.join(sep) })).join(sep);
    return [t("pv.rematches", { n: b.rematches.length, list: list + (b.rematches.length > 5 ? "…" : "") })];
  }
  // The names a players file put right and the players it dropped (who never played): named.
  function namesText(b) {
    const list = (xs) => xs.slice(0, 10).join(lang === "en" ? ", " : "、") + (xs.length > 10 ? "…" : "");
    const out = Array.isArray(b.gaps) && b.gaps.length ? [t("pv.gaps", { list: list(b.gaps.map(String)), n: b.players })]
      : b.renumbered ? [t("pv.renumbered")] : [];
    if (Array.isArray(b.renamed) && b.renamed.length)
      out.push(t("pv.renamed", { n: b.renamed.length, list: list(b.renamed.map((r) => r.from + " → " + r.to)) }));
    if (Array.isArray(b.removed) && b.removed.length)
      out.push(t("pv.removed", { n: b.removed.length, list: list(b.removed) }));
    return out;
  }
  // A round played beside the knockout keeps off its boards (Meishan's rounds 8–9): said.
  function movedText(b) {
    return Object.entries(b.moved_boards || {}).map(([round, moved]) => {
      const to = Object.values(moved).map(Number);
      return t("moved", { round, n: to.length, from: Math.min(...to), to: Math.max(...to) });
    });
  }

  // What a dry run says the import would do, in words.
  function previewText(b) {
    const parts = [];
    if (typeof b.players === "number") parts.push(t("pv.players", { n: b.players }));
    if (plan && plan.path === "/api/players") parts.push(t("pv.players-csv", { n: b.imported ?? 0 }));
    if (Array.isArray(b.new_players) && b.new_players.length) // named: a list imported again adds, it does not replace
      parts.push(t("pv.new", { n: b.new_players.length }) + (plan && plan.path === "/api/players" ? "（" + b.new_players.slice(0, 10).join(lang === "en" ? ", " : "、") + (b.new_players.length > 10 ? "…" : "") + "）" : ""));
    if (b.round) parts.push(t("pv.round", { round: b.round, games: b.games ?? b.imported ?? 0 }));
    if (typeof b.byes === "number") parts.push(t("pv.byes", { n: b.byes }));
    for (const [round, n] of Object.entries(b.replaced_games || {})) if (n) parts.push(t("pv.replaced", { round, n }));
    if (Array.isArray(b.voided_results) && b.voided_results.length) parts.push(t("pv.voided", { n: b.voided_results.length }));
    parts.push(...movedText(b), ...namesText(b), ...rematchText(b));
    if (Array.isArray(b.unpaired) && b.unpaired.length)
      parts.push(t("pv.unpaired", { n: b.unpaired.length, list: b.unpaired.slice(0, 10).join(lang === "en" ? ", " : "、") }));
    return parts.join(lang === "en" ? ", " : "，");
  }

  // An import is first asked as a dry run (the station says what it would change); the chief
  // then imports it, or — when the round already has results or is being played — chooses to
  // replace that round (its results are voided, and kept). A station that knows no dry run
  // imports at once: its answer is then shown as the import's.
  let plan = null; // { path, query, data, replaceRound }
  function choices() {
    $("apply").hidden = !(plan && plan.previewed);
    $("cancel").hidden = !plan;
    const offer = plan && plan.offer;
    $("replace").hidden = !offer;
    if (offer) $("replace").textContent = t("replace-round", offer);
    $("apply").textContent = t("apply");
    $("cancel").textContent = t("cancel");
  }
  // One request at a time: a double click on "approve" imported the file twice.
  let sending = false;
  async function send(dryRun) {
    if (sending) return;
    sending = true;
    try { await sendNow(dryRun); } finally { sending = false; }
  }
  async function sendNow(dryRun) {
    const q = new URLSearchParams(plan.query);
    if (dryRun) q.set("dry_run", "1");
    if (plan.replaceRound) q.set("replace_round", String(plan.replaceRound));
    let r;
    try {
      r = await fetch(plan.path + "?" + q, { method: "POST", body: plan.data, headers: { "X-CSRF-Token": csrf || "" } });
    } catch (e) { last = { key: "err.network", error: true }; plan = null; showResult(); choices(); return; }
    const body = await r.json().catch(() => ({}));
    const offerCode = body.code === "round_has_results" || body.code === "round_in_play";
    if (r.ok && body.dry_run === true) {
      last = { preview: true, body };
      plan.previewed = true;
      plan.offer = null;
    } else if (r.ok) {
      last = { body, players: plan.path === "/api/players" };
      plan = null;
      loadEntrants();
      loadAudit(); // the change log names the import at once (it waited for a reload)
    } else {
      last = { error: true, status: r.status, body };
      if (offerCode && body.args && body.args.round) {
        plan.previewed = false;
        plan.offer = { round: body.args.round, n: body.args.results ?? 0 };
      } else plan = null;
    }
    showResult();
    choices();
  }
  async function upload() {
    const file = $("file").files[0];
    if (!file) { last = { key: "no-file", error: true }; plan = null; showResult(); choices(); return; }
    last = { key: "working" };
    showResult();
    const query = new URLSearchParams({ send: $("send").checked ? "1" : "0" });
    if ($("kind").value === "pairs" && $("pairs-round").value.trim()) query.set("round", $("pairs-round").value.trim());
    const path = { pairs: "/api/pairs", players: "/api/players" }[$("kind").value] || "/api/trf";
    plan = { path, query: query.toString(), data: await file.arrayBuffer(), replaceRound: null };
    await send(true);
  }
  $("apply").addEventListener("click", () => { if (plan) send(false); });
  $("replace").addEventListener("click", () => {
    if (!plan || !plan.offer) return;
    plan.replaceRound = plan.offer.round;
    send(true);
  });
  // The event's changes (the station's /api/tournament routes): a bye, a withdrawal, a
  // re-admission, and undoing the last change; shown only where the station offers them.
  let audit = [];
  let tLast = null;
  const whatText = (what) => t(TEXT[lang]["what." + what] ? "what." + what : "what.other");
  function showTournament() {
    const el = $("t-result");
    el.classList.toggle("error", !!(tLast && tLast.error));
    if (!tLast) el.textContent = "";
    else if (tLast.error) {
      const b = tLast.body || {};
      const code = b.code;
      const e = code && TEXT[lang]["err." + code] ? t("err." + code, b.args || {}) : t("err.generic", { status: tLast.status });
      el.textContent = t("t.failed", { e });
    } else el.textContent = t(tLast.undo ? "t.undone" : "t.done", { what: whatText(tLast.what) });
    const list = $("audit");
    list.replaceChildren();
    for (const a of audit.slice(0, 20)) {
      const li = document.createElement("li");
      const when = new Date(a.at_ms).toLocaleString(lang === "en" ? "en-GB" : "zh-CN", { hour12: false });
      // what it was, in words: an undo names what it undid, a bye its round and kind, an import
      // its rounds (an outsider organiser read 变更 for an undo and 轮空 without the round)
      const args = a.args || {};
      const what = a.what === "undo" ? t("what.undo", { what: whatText(args.what) }) : whatText(a.what);
      const rounds = Array.isArray(args.rounds) ? args.rounds : args.round ? [args.round] : [];
      const where = rounds.length ? " · " + rounds.map((n) => t("audit.round", { n })).join(lang === "en" ? ", " : "、") : "";
      const kind = a.what === "bye" && args.kind ? t("audit.bye." + ({ full: "F", half: "H", zero: "Z" }[args.kind] || "Z")) : "";
      const who = (args.player ? " · " + args.player + kind : "") +
        ["renamed", "removed", "added"].filter((k) => args[k]).map((k) => " · " + t("audit." + k, { n: args[k] })).join("");
      li.textContent = when + " · " + (a.user || "") + " · " + what + where + who + (a.undone ? t("audit.undone") : "");
      list.append(li);
    }
  }
  async function loadAudit() {
    try {
      const r = await fetch("/api/tournament/audit");
      if (!r.ok) return;
      audit = (await r.json()).audit || [];
      $("tournament").hidden = false;
      showTournament();
    } catch (e) { /* a station without the routes: the section stays hidden */ }
  }
  async function change(path, body, what) {
    let r;
    try {
      r = await fetch(path, { method: "POST", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf || "" } });
    } catch (e) { tLast = { error: true, status: 0, body: { code: "network" } }; showTournament(); return; }
    const reply = await r.json().catch(() => ({}));
    tLast = r.ok ? { what: what || reply.what, undo: path.endsWith("/undo") } : { error: true, status: r.status, body: reply };
    await loadAudit();
    showTournament();
    loadEntrants();
  }
  $("bye").addEventListener("click", () => change("/api/tournament/bye",
    { round: Number($("bye-round").value), player: $("bye-player").value.trim(), kind: $("bye-kind").value }, "bye"));
  $("withdraw").addEventListener("click", () => change("/api/tournament/withdraw", { player: $("wd-player").value.trim() }, "withdraw"));
  $("readmit").addEventListener("click", () => change("/api/tournament/readmit", { player: $("wd-player").value.trim() }, "readmit"));
  $("undo").addEventListener("click", () => change("/api/tournament/undo", {}, null));
  $("cancel").addEventListener("click", () => { plan = null; last = null; showResult(); choices(); });

  // A round imported unsent (the chief checked it first) goes to the clocks from here: the
  // docs said 发送 and no page had it (an outsider chief). Refused while a game of an earlier
  // round waits for a ruling, in the import's words.
  let sentSaid = null;
  $("send-round").addEventListener("click", async () => {
    const n = Number($("send-round-no").value.trim());
    sentSaid = () => t("err.bad_round");
    if (Number.isInteger(n) && n >= 1) {
      let r = null;
      try { r = await fetch("/api/rounds/" + n + "/set_games", { method: "POST", headers: { "X-CSRF-Token": csrf || "" } }); } catch (e) { /* below */ }
      const b = r ? await r.json().catch(() => ({})) : {};
      const sep = () => (lang === "en" ? ", " : "、");
      const replies = Object.entries(b.set_game || {}), missed = replies.filter(([, x]) => !x.ok).map(([board]) => board);
      sentSaid = !r ? () => t("err.network") : !r.ok ? () => (b.code && TEXT[lang]["err." + b.code] ? t("err." + b.code, b.args || {}) : t("err.generic", { status: r.status }))
        : () => t("sent", { round: n, n: replies.length - missed.length, total: replies.length }) + (missed.length ? t("sent.missed", { list: missed.join(sep()) }) : "");
    }
    $("send-round-result").textContent = sentSaid();
  });

  let proposal = null;
  let engineName = null;

  function showProposal() {
    $("engine-name").textContent = engineName || t("engine-none");
    $("propose").disabled = !engineName;
    $("proposal").hidden = !proposal;
    if (!proposal) return;
    $("proposal-title").textContent = t("proposal-round", { n: proposal.round, engine: proposal.engine });
    const body = $("proposal-boards");
    body.replaceChildren();
    for (const b of proposal.boards) {
      const tr = document.createElement("tr");
      const black = b.black ? b.black + " " + b.black_player : t("bye-cell");
      for (const v of [b.board, b.white + " " + b.red_player, b.red_points, black, b.black ? b.black_points : ""]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.append(td);
      }
      body.append(tr);
    }
  }

  function engineFailed(r, body) {
    const why = (body && body.reason) || "other";
    sayEngine(() => (TEXT[lang]["why-" + why] ? t("why-" + why) : t("why-other", { status: r.status })));
    const detail = why === "engine_failed" ? (body.error || "") : "";
    $("engine-detail").textContent = detail;
    $("engine-detail").hidden = !detail;
  }

  async function loadProposal() {
    const r = await fetch("/api/pairing/proposal");
    if (!r.ok) return;
    const body = await r.json();
    engineName = body.engine;
    proposal = body.proposal;
    showProposal();
  }

  async function engineAction(path, done) {
    $("engine-detail").hidden = true;
    const r = await fetch(path, { method: "POST", headers: { "X-CSRF-Token": csrf || "" } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) { engineFailed(r, body); return; }
    done(body);
  }

  $("propose").addEventListener("click", () => {
    sayEngine(() => t("running"));
    engineAction("/api/pairing/propose", (body) => { proposal = body; sayEngine(null); showProposal(); });
  });
  $("approve").addEventListener("click", () => {
    const q = new URLSearchParams({ send: $("approve-send").checked ? "1" : "0" });
    engineAction("/api/pairing/approve?" + q, (body) => {
      proposal = null;
      showProposal();
      sayEngine(() => [t("approved", { round: body.round, games: body.games, byes: body.byes }), ...movedText(body)].join(lang === "en" ? "; " : "；"));
      loadEntrants();
    });
  });
  $("discard").addEventListener("click", () => {
    engineAction("/api/pairing/discard", () => { proposal = null; showProposal(); sayEngine(() => t("discarded")); });
  });

  $("lang").addEventListener("click", () => {
    lang = QZP.switchLang(lang);
    applyText();
    if (sentSaid) $("send-round-result").textContent = sentSaid();
    showProposal();
    showResult();
    choices();
    showTournament();
  });
  $("round").addEventListener("change", exportHref);
  $("absent").addEventListener("input", exportHref);
  $("upload").addEventListener("click", upload);
  $("file").addEventListener("change", () => {
    const file = $("file").files[0];
    $("file-name").textContent = file ? file.name : "";
    $("no-chosen").hidden = !!file;
  });
  loadRounds().then(applyText);
  applyText();
  session().then(loadAudit);
  loadEntrants();
  loadProposal();
})();
