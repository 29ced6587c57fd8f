// The pairing page: export the TRF of any round, import a TRF or an engine's pairs list.
// Text is set with textContent only, so a player's name or an error can never become markup.
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {
      title: "编排交换", "to-standings": "成绩排名", "to-arbiter": "裁判台", lang: "English",
      "export-title": "导出 TRF（供编排软件）", "round-label": "截至轮次", "round-latest": "最新",
      "absent-label": "下一轮缺席（序号，逗号分隔）", export: "下载 TRF", after: "第{n}轮后",
      "import-title": "导入 TRF 或配对表（总裁判）", "login-text": "请先在裁判台以总裁判身份登录。",
      "kind-label": "文件类型", "kind-trf": "TRF（棋手与已编排的轮次）",
      "kind-pairs": "配对表（编排引擎输出）", "pairs-round-label": "配对表轮次",
      "send-label": "导入后发送对局到棋钟", upload: "导入", "entrants-title": "棋手序号",
      "col-rank": "序号", "col-player": "棋手（本站）", "col-name": "TRF 姓名",
      done: "已导入：{players} 名棋手，第{round}轮 {games} 局，轮空/缺席 {byes}",
      "no-file": "请选择文件", failed: "导入失败：{e}",
      "engine-title": "用编排引擎编排下一轮（总裁判）", "engine-label": "编排引擎：",
      "engine-none": "未配置（station.toml 的 [pairing]）", propose: "运行引擎",
      "col-board": "台次", "col-red": "红方（先行）", "col-red-points": "积分", "col-black": "黑方",
      "col-black-points": "积分", "approve-send-label": "导入后发送对局到棋钟",
      approve: "批准并导入", discard: "放弃", "proposal-round": "第{n}轮编排建议（{engine}），请核对",
      bye: "轮空", running: "引擎运行中……", approved: "已导入第{round}轮：{games} 局，轮空/缺席 {byes}",
      discarded: "已放弃编排建议",
      "why-no_engine": "本站未配置编排引擎。", "why-round_open": "上一轮还有对局没有结果，引擎只编排完整一轮之后的下一轮。",
      "why-all_paired": "所有轮次均已编排。", "why-no_proposal": "没有待批准的编排建议，请先运行引擎。",
      "why-stale": "引擎运行后成绩、轮空或棋手已变更，请重新运行引擎。",
      "why-engine_failed": "编排引擎未能给出配对（引擎输出见下）。", "why-other": "操作失败（{status}）。",
    },
    en: {
      title: "Pairing exchange", "to-standings": "Standings", "to-arbiter": "Arbiter", lang: "中文",
      "export-title": "Export the TRF (for the pairing program)", "round-label": "After round",
      "round-latest": "latest", "absent-label": "Absent next round (start ranks, comma separated)",
      export: "Download TRF", after: "after round {n}",
      "import-title": "Import a TRF or a pairs list (chief arbiter)",
      "login-text": "Log in on the arbiter page with the chief arbiter's account first.",
      "kind-label": "File", "kind-trf": "TRF (players and a paired round)",
      "kind-pairs": "Pairs list (engine output)", "pairs-round-label": "Round of the pairs list",
      "send-label": "Send the games to the clocks", upload: "Import", "entrants-title": "Start ranks",
      "col-rank": "Start rank", "col-player": "Player (station)", "col-name": "Name in the TRF",
      done: "Imported: {players} players, round {round}: {games} games, byes/absent {byes}",
      "no-file": "Choose a file first", failed: "Import failed: {e}",
      "engine-title": "Pair the next round with the engine (chief arbiter)", "engine-label": "Pairing engine: ",
      "engine-none": "none configured ([pairing] in station.toml)", propose: "Run the engine",
      "col-board": "Board", "col-red": "Red (moves first)", "col-red-points": "Points", "col-black": "Black",
      "col-black-points": "Points", "approve-send-label": "Send the games to the clocks",
      approve: "Approve and import", discard: "Discard", "proposal-round": "Proposed pairings for round {n} ({engine}): review",
      bye: "bye", running: "The engine is running…", approved: "Imported round {round}: {games} games, byes/absent {byes}",
      discarded: "Proposal discarded",
      "why-no_engine": "No pairing engine is configured on this station.",
      "why-round_open": "The last round still has games without a result; the engine pairs after a complete round.",
      "why-all_paired": "Every round is paired.", "why-no_proposal": "No proposal to approve: run the engine first.",
      "why-stale": "Results, byes or players changed since the engine ran: run it again.",
      "why-engine_failed": "The engine gave no pairing (its output below).", "why-other": "Failed ({status}).",
    },
  };
  const params = new URLSearchParams(location.search);
  let saved = "";
  try { saved = localStorage.getItem("qz.lang") || ""; } catch (e) { /* private mode */ }
  let lang = (params.get("lang") || saved).toLowerCase().startsWith("en") ? "en" : "zh-CN";
  const t = (key, vars) => {
    let s = TEXT[lang][key] || key;
    for (const [k, v] of Object.entries(vars || {})) s = s.split("{" + k + "}").join(String(v));
    return s;
  };
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
    for (let n = 0; n <= rounds; n++) {
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
    for (const e of (await r.json()).entrants) {
      const tr = document.createElement("tr");
      for (const v of [e.start_rank, e.player, e.name]) {
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

  async function upload() {
    const file = $("file").files[0];
    if (!file) { $("result").textContent = t("no-file"); return; }
    const q = new URLSearchParams({ send: $("send").checked ? "1" : "0" });
    if ($("kind").value === "pairs" && $("pairs-round").value.trim()) q.set("round", $("pairs-round").value.trim());
    const path = $("kind").value === "pairs" ? "/api/pairs" : "/api/trf";
    const r = await fetch(path + "?" + q, { method: "POST", body: await file.arrayBuffer(), headers: { "X-CSRF-Token": csrf || "" } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) {
      $("result").textContent = t("failed", { e: body.error || body.message || r.status });
      return;
    }
    $("result").textContent = t("done", { players: body.players ?? "—", round: body.round ?? "—", games: body.games ?? 0, byes: body.byes ?? 0 });
    loadEntrants();
  }

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
      const black = b.black ? b.black + " " + b.black_player : t("bye");
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
      $("engine-status").textContent = t("approved", { round: body.round, games: body.games, byes: body.byes });
      loadEntrants();
    });
  });
  $("discard").addEventListener("click", () => {
    engineAction("/api/pairing/discard", () => { proposal = null; showProposal(); $("engine-status").textContent = t("discarded"); });
  });

  $("lang").addEventListener("click", () => {
    lang = lang === "en" ? "zh-CN" : "en";
    try { localStorage.setItem("qz.lang", lang); } catch (e) { /* private mode */ }
    applyText();
    showProposal();
  });
  $("round").addEventListener("change", exportHref);
  $("absent").addEventListener("input", exportHref);
  $("upload").addEventListener("click", upload);
  loadRounds().then(applyText);
  applyText();
  session();
  loadEntrants();
  loadProposal();
})();
