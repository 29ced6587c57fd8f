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
      choose: "选择文件", "no-chosen": "未选择文件", "entrants-empty": "尚无棋手序号（导入 TRF 后显示）",
      "no-file": "请选择文件", failed: "导入失败：{e}", working: "正在导入…",
      "err.generic": "出错了（HTTP {status}）", "err.bad_trf": "文件格式有误", "err.bad_request": "请求有误",
      "err.unauthenticated": "请先在裁判台登录", "err.forbidden": "只有总裁判可以导入",
      "err.csrf": "页面已过期，请刷新后重试", "err.too_large": "文件太大", "err.not_found": "找不到",
      "err.network": "无法连接站点", "err.line": "（第{line}行）", "err.columns": "（第{line}行，第{a}–{b}列）",
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
      choose: "Choose a file", "no-chosen": "no file chosen", "entrants-empty": "No start ranks yet (they come with a TRF)",
      "no-file": "Choose a file first", failed: "Import failed: {e}", working: "Importing…",
      "err.generic": "something went wrong (HTTP {status})", "err.bad_trf": "the file is not a valid TRF or pairs list",
      "err.bad_request": "the request is wrong", "err.unauthenticated": "log in on the arbiter page first",
      "err.forbidden": "only the chief arbiter may import", "err.csrf": "the page is out of date; reload it",
      "err.too_large": "the file is too large", "err.not_found": "not found", "err.network": "cannot reach the station",
      "err.line": " (line {line})", "err.columns": " (line {line}, columns {a}–{b})",
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
    for (const e of list) {
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
      let e = code && TEXT[lang]["err." + code] ? t("err." + code) : t("err.generic", { status: last.status });
      if (typeof b.line === "number")
        e += Array.isArray(b.columns) ? t("err.columns", { line: b.line, a: b.columns[0], b: b.columns[1] }) : t("err.line", { line: b.line });
      el.textContent = t("failed", { e });
      return;
    }
    const body = last.body;
    el.textContent = t("done", { players: body.players ?? "—", round: body.round ?? "—", games: body.games ?? 0, byes: body.byes ?? 0 });
  }

  async function upload() {
    const file = $("file").files[0];
    if (!file) { last = { key: "no-file", error: true }; showResult(); return; }
    last = { key: "working" };
    showResult();
    const q = new URLSearchParams({ send: $("send").checked ? "1" : "0" });
    if ($("kind").value === "pairs" && $("pairs-round").value.trim()) q.set("round", $("pairs-round").value.trim());
    const path = $("kind").value === "pairs" ? "/api/pairs" : "/api/trf";
    let r;
    try {
      r = await fetch(path + "?" + q, { method: "POST", body: await file.arrayBuffer(), headers: { "X-CSRF-Token": csrf || "" } });
    } catch (e) { last = { key: "err.network", error: true }; showResult(); return; }
    const body = await r.json().catch(() => ({}));
    last = r.ok ? { body } : { error: true, status: r.status, body };
    showResult();
    if (r.ok) loadEntrants();
  }

  $("lang").addEventListener("click", () => {
    lang = lang === "en" ? "zh-CN" : "en";
    try { localStorage.setItem("qz.lang", lang); } catch (e) { /* private mode */ }
    const url = new URL(location.href);
    url.searchParams.set("lang", lang === "en" ? "en" : "zh");
    history.replaceState(null, "", url);
    applyText();
    showResult();
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
  session();
  loadEntrants();
})();
