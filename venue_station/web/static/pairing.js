// The pairing page: export the TRF of any round, import a TRF, an engine's pairs list or a players list.
// Text is set with textContent only, so a player's name or an error can never become markup.
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {
      title: "编排交换", "to-standings": "成绩排名", "to-arbiter": "裁判台", "to-sheet": "对阵表（打印）", lang: "English",
      "export-title": "导出 TRF（供编排软件）", "round-label": "截至轮次", "round-latest": "最新",
      "absent-label": "下一轮缺席（序号，逗号分隔）", export: "下载 TRF", after: "第{n}轮后",
      "import-title": "导入 TRF、配对表或棋手名单（总裁判）", "login-text": "请先在裁判台以总裁判身份登录。",
      "kind-label": "文件类型", "kind-trf": "TRF（棋手与已编排的轮次）",
      "kind-pairs": "配对表（编排引擎输出）", "pairs-round-label": "配对表轮次",
      "kind-players": "棋手名单 CSV（姓名、单位、等级分、组别）", "done-players": "已导入棋手名单：{n} 名（组别用于分组排名与让二先）",
      "pv.players-csv": "棋手名单 {n} 名",
      "send-label": "导入后发送对局到棋钟", upload: "导入", "entrants-title": "棋手序号",
      "col-rank": "序号", "col-player": "棋手（本站）", "col-name": "TRF 姓名",
      done: "已导入：{players} 名棋手，第{round}轮 {games} 局，轮空/缺席 {byes}",
      moved: "第{round}轮有 {n} 局让开淘汰赛所在台次，改排在第{from}–{to}台",
      "engine-title": "用编排引擎编排下一轮（总裁判）", "engine-label": "编排引擎：",
      "engine-none": "未配置（由技术人员在裁判站配置文件中设置）", propose: "运行引擎",
      "col-board": "台次", "col-red": "红方（先行）", "col-red-points": "积分", "col-black": "黑方",
      "col-black-points": "积分", "approve-send-label": "导入后发送对局到棋钟",
      approve: "批准并导入", discard: "放弃", "proposal-round": "第{n}轮编排建议（{engine}），请核对",
      "bye-cell": "轮空", running: "引擎运行中……", approved: "已导入第{round}轮：{games} 局，轮空/缺席 {byes}",
      discarded: "已放弃编排建议",
      "why-no_engine": "本站未配置编排引擎。", "why-round_open": "上一轮还有对局没有结果，引擎只编排完整一轮之后的下一轮。",
      "why-all_paired": "所有轮次均已编排。", "why-no_proposal": "没有待批准的编排建议，请先运行引擎。",
      "why-stale": "引擎运行后成绩、轮空或棋手已变更，请重新运行引擎。",
      "why-engine_failed": "编排引擎未能给出配对（引擎输出见下）。", "why-other": "操作失败（{status}）。",
      "tournament-title": "赛事变更（总裁判）", "bye-round-label": "轮次", "bye-player-label": "棋手",
      "bye-full": "轮空（计胜）", "bye-half": "轮空（计和）", "bye-zero": "轮空（不计分）", bye: "给轮空",
      "wd-player-label": "棋手", withdraw: "退赛", readmit: "恢复参赛", undo: "撤销上一步", "audit-title": "变更记录",
      "t.done": "已完成：{what}", "t.failed": "未完成：{e}", "t.undone": "已撤销：{what}", withdrawn: "（已退赛）",
      "what.bye": "轮空", "what.withdraw": "退赛", "what.readmit": "恢复参赛", "what.import_pairings": "导入配对表",
      "what.import_trf": "导入 TRF", "what.import_pairs": "导入配对表", "what.other": "变更", "audit.undone": "（已撤销）",
      "what.undo": "撤销：{what}", "audit.round": "第{n}轮", "audit.bye.F": "（得胜分）", "audit.bye.H": "（得和分）", "audit.bye.Z": "（不得分）",
      "err.already_withdrawn": "该棋手已退赛", "err.not_withdrawn": "该棋手未退赛", "err.no_player": "无此棋手",
      "err.player_paired": "该棋手第{round}轮已有对局", "err.bad_round": "轮次有误", "err.nothing_to_undo": "没有可撤销的变更",
      "err.undo_stale": "之后已有其他变更，不能撤销", "err.undo_voided": "该变更作废了结果，不能撤销",
      "err.undo_games_begun": "相关对局已开始，不能撤销",
      apply: "确认导入", cancel: "取消", "replace-round": "替换第{round}轮（{n}个结果将作废）",
      preview: "预览（尚未导入）：{what}", "pv.players": "{n} 名棋手", "pv.new": "其中新棋手 {n} 名",
      "pv.round": "第{round}轮 {games} 局", "pv.byes": "轮空/缺席 {n}", "pv.voided": "将作废 {n} 个结果",
      "pv.unpaired": "{n} 名棋手未配对：{list}", "pv.replaced": "替换第{round}轮 {n} 局",
      "pv.renamed": "改正姓名 {n} 名：{list}", "pv.removed": "移除名单中已没有的未参赛棋手 {n} 名：{list}",
      "err.round_has_results": "第{round}轮已有 {results} 个结果，导入会改动它们",
      "err.round_in_play": "第{round}轮正在进行（{playing} 台）",
      "err.rulings_pending": "第{round}轮还有 {count} 局待裁定（第{boards}台）：请先在裁判台裁定，再导入下一轮",
      "err.players_mismatch": "文件中的棋手与本赛事不符{detail}",
      "err.mismatch_rank": "：序号 {start_rank} 本站为“{kept}”，文件中为“{file}”（已有对局的棋手不能改名；多人改名则像是另一赛事的文件）",
      "err.mismatch_missing": "：{count} 名已有对局的棋手不在文件中（{list}）",
      "err.players_unpaired": "第{round}轮有 {count} 名棋手既未配对也未轮空（{list}）",
      "csv.header": "棋手名单的表头应为 姓名,单位,等级分,组别（或 name,club,rating,tags），姓名在前",
      "csv.fields": "应有 {expected} 列，这一行有 {got} 列", "csv.name": "姓名须为 1 至 64 个字",
      "csv.twice": "棋手“{name}”重复（首见于第{first}行）：同名的两人请加以区分，或删去一行",
      "csv.rating": "等级分“{rating}”不是整数", "csv.tags": "组别每项至多 32 字，合计 255 字",
      "csv.empty": "文件是空的", "csv.encoding": "无法识别文件编码：请另存为 UTF-8 或 GBK 的 CSV",
      "err.player_withdrawn": "棋手“{player}”已退赛，不能编排",
      choose: "选择文件", "no-chosen": "未选择文件", "entrants-empty": "尚无棋手序号（导入 TRF 后显示）",
      "no-file": "请选择文件", failed: "导入失败：{e}", working: "正在导入…",
      "err.generic": "出错了（HTTP {status}）", "err.bad_trf": "文件格式有误", "err.bad_request": "请求有误",
      "err.unauthenticated": "请先在裁判台登录", "err.forbidden": "只有总裁判可以导入",
      "err.board_held": "第{round}轮用了淘汰赛所在的台次（{boards}）：请改用数字台次", "err.csrf": "页面已过期，请刷新后重试", "err.too_large": "文件太大", "err.not_found": "找不到",
      "err.network": "无法连接站点", "err.line": "（第{line}行）", "err.columns": "（第{line}行，第{a}–{b}列）",
    },
    en: {
      title: "Pairing exchange", "to-standings": "Standings", "to-arbiter": "Arbiter", "to-sheet": "Pairings sheet (print)", lang: "中文",
      "export-title": "Export the TRF (for the pairing program)", "round-label": "After round",
      "round-latest": "latest", "absent-label": "Absent next round (start ranks, comma separated)",
      export: "Download TRF", after: "after round {n}",
      "import-title": "Import a TRF, a pairs list or a players list (chief arbiter)",
      "login-text": "Log in on the arbiter page with the chief arbiter's account first.",
      "kind-label": "File", "kind-trf": "TRF (players and a paired round)",
      "kind-pairs": "Pairs list (engine output)", "pairs-round-label": "Round of the pairs list",
      "kind-players": "Players CSV (name, club, rating, groups)", "done-players": "Players list imported: {n} players (groups for the group lists and 让二先)",
      "pv.players-csv": "players list of {n}",
      "send-label": "Send the games to the clocks", upload: "Import", "entrants-title": "Start ranks",
      "col-rank": "Start rank", "col-player": "Player (station)", "col-name": "Name in the TRF",
      done: "Imported: {players} players, round {round}: {games} games, byes/absent {byes}",
      moved: "round {round}: {n} game(s) moved off the knockout's boards, to boards {from}–{to}",
      "engine-title": "Pair the next round with the engine (chief arbiter)", "engine-label": "Pairing engine: ",
      "engine-none": "none configured ([pairing] in station.toml)", propose: "Run the engine",
      "col-board": "Board", "col-red": "Red (moves first)", "col-red-points": "Points", "col-black": "Black",
      "col-black-points": "Points", "approve-send-label": "Send the games to the clocks",
      approve: "Approve and import", discard: "Discard", "proposal-round": "Proposed pairings for round {n} ({engine}): review",
      "bye-cell": "bye", running: "The engine is running…", approved: "Imported round {round}: {games} games, byes/absent {byes}",
      discarded: "Proposal discarded",
      "why-no_engine": "No pairing engine is configured on this station.",
      "why-round_open": "The last round still has games without a result; the engine pairs after a complete round.",
      "why-all_paired": "Every round is paired.", "why-no_proposal": "No proposal to approve: run the engine first.",
      "why-stale": "Results, byes or players changed since the engine ran: run it again.",
      "why-engine_failed": "The engine gave no pairing (its output below).", "why-other": "Failed ({status}).",
      "tournament-title": "Changes to the event (chief arbiter)", "bye-round-label": "Round", "bye-player-label": "Player",
      "bye-full": "bye (a win)", "bye-half": "bye (a draw)", "bye-zero": "bye (no points)", bye: "Give the bye",
      "wd-player-label": "Player", withdraw: "Withdraw", readmit: "Re-admit", undo: "Undo the last change", "audit-title": "Changes",
      "t.done": "Done: {what}", "t.failed": "Not done: {e}", "t.undone": "Undone: {what}", withdrawn: " (withdrawn)",
      "what.bye": "bye", "what.withdraw": "withdrawal", "what.readmit": "re-admission", "what.import_pairings": "pairings import",
      "what.import_trf": "TRF import", "what.import_pairs": "pairs list import", "what.other": "change", "audit.undone": " (undone)",
      "what.undo": "undo: {what}", "audit.round": "round {n}", "audit.bye.F": " (a win's points)", "audit.bye.H": " (a draw's points)", "audit.bye.Z": " (no points)",
      "err.already_withdrawn": "the player has already withdrawn", "err.not_withdrawn": "the player has not withdrawn",
      "err.no_player": "no such player", "err.player_paired": "the player has a game in round {round}",
      "err.bad_round": "a wrong round", "err.nothing_to_undo": "nothing to undo",
      "err.undo_stale": "later changes came after it; it cannot be undone",
      "err.undo_voided": "it voided results; it cannot be undone", "err.undo_games_begun": "its games have begun; it cannot be undone",
      apply: "Import it", cancel: "Cancel", "replace-round": "Replace round {round} ({n} result(s) will be voided)",
      preview: "Preview (nothing imported yet): {what}", "pv.players": "{n} players", "pv.new": "{n} of them new",
      "pv.round": "round {round}: {games} games", "pv.byes": "byes/absent {n}", "pv.voided": "{n} result(s) will be voided",
      "pv.unpaired": "{n} players unpaired: {list}", "pv.replaced": "round {round}: {n} games replaced",
      "pv.renamed": "{n} name(s) put right: {list}", "pv.removed": "{n} player(s) no longer in the list and never played, removed: {list}",
      "err.round_has_results": "round {round} already has {results} result(s); the import would change them",
      "err.round_in_play": "round {round} is being played ({playing} boards)",
      "err.rulings_pending": "round {round} still has {count} game(s) waiting for a ruling (board(s) {boards}): rule them on the arbiter's page, then import the next round",
      "err.players_mismatch": "the file's players do not match this event's{detail}",
      "err.mismatch_rank": ": start rank {start_rank} is \u201c{kept}\u201d here and \u201c{file}\u201d in the file (a player who has played keeps his name; many names changed look like another event's file)",
      "err.mismatch_missing": ": {count} players with games are not in the file ({list})",
      "err.players_unpaired": "round {round}: {count} players neither paired nor given a bye ({list})",
      "csv.header": "the players list's header must be name,club,rating,tags (or 姓名,单位,等级分,组别), the name first",
      "csv.fields": "expected {expected} columns, this row has {got}", "csv.name": "a name is 1 to 64 characters",
      "csv.twice": "player “{name}” listed twice (first on line {first}): tell the two apart, or delete a row",
      "csv.rating": "rating “{rating}” is not a whole number", "csv.tags": "groups: each at most 32 characters, 255 in all",
      "csv.empty": "the file is empty", "csv.encoding": "the file's encoding is not known: save it as a UTF-8 or GBK CSV",
      "err.player_withdrawn": "{player} has withdrawn and cannot be paired",
      choose: "Choose a file", "no-chosen": "no file chosen", "entrants-empty": "No start ranks yet (they come with a TRF)",
      "no-file": "Choose a file first", failed: "Import failed: {e}", working: "Importing…",
      "err.generic": "something went wrong (HTTP {status})", "err.bad_trf": "the file is not a valid TRF or pairs list",
      "err.bad_request": "the request is wrong", "err.unauthenticated": "log in on the arbiter page first",
      "err.forbidden": "only the chief arbiter may import", "err.board_held": "round {round} uses the knockout's board(s) ({boards}): number the boards", "err.csrf": "the page is out of date; reload it",
      "err.too_large": "the file is too large", "err.not_found": "not found", "err.network": "cannot reach the station",
      "err.line": " (line {line})", "err.columns": " (line {line}, columns {a}–{b})",
    },
  };
  let lang = QZP.initialLang();
  const t = QZP.words(TEXT, () => lang);
  const $ = (id) => document.getElementById(id);
  let csrf = null;

  function applyText() {
    document.documentElement.lang = lang;
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
      if (code === "players_mismatch")
        args.detail = args.start_rank !== undefined ? t("err.mismatch_rank", args) : args.count !== undefined ? t("err.mismatch_missing", args) : "";
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
    el.textContent = [t("done", { players: body.players ?? "—", round: body.round ?? "—", games: body.games ?? 0, byes: body.byes ?? 0 }), ...movedText(body), ...namesText(body)].join(lang === "en" ? "; " : "；");
  }
  // The names a players file put right and the players it dropped (who never played): named.
  function namesText(b) {
    const list = (xs) => xs.slice(0, 10).join(lang === "en" ? ", " : "、") + (xs.length > 10 ? "…" : "");
    const out = [];
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
    parts.push(...movedText(b), ...namesText(b));
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
      const who = args.player ? " · " + args.player + kind : "";
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
    $("engine-status").textContent = TEXT[lang]["why-" + why] ? t("why-" + why) : t("why-other", { status: r.status });
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
    $("engine-status").textContent = t("running");
    engineAction("/api/pairing/propose", (body) => { proposal = body; $("engine-status").textContent = ""; showProposal(); });
  });
  $("approve").addEventListener("click", () => {
    const q = new URLSearchParams({ send: $("approve-send").checked ? "1" : "0" });
    engineAction("/api/pairing/approve?" + q, (body) => {
      proposal = null;
      showProposal();
      $("engine-status").textContent = [t("approved", { round: body.round, games: body.games, byes: body.byes }), ...movedText(body)].join(lang === "en" ? "; " : "；");
      loadEntrants();
    });
  });
  $("discard").addEventListener("click", () => {
    engineAction("/api/pairing/discard", () => { proposal = null; showProposal(); $("engine-status").textContent = t("discarded"); });
  });

  $("lang").addEventListener("click", () => {
    lang = QZP.switchLang(lang);
    applyText();
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
