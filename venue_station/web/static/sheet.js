// The chief's QR sheet (录谱, /record/sheet): for every board of the round that must be recorded,
// the players, who records and a QR code of the board's record link (the station draws it:
// GET /api/record-keys/qr.svg; the link is this station's address as this browser sees it).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const round = new URLSearchParams(location.search).get("round");
  let keys = null; // GET /api/record-keys
  let lastMsg = null; // () => text, so a language switch re-renders it

  QZ.applyI18n();
  QZ.langButton($("lang"));
  QZ.onLang.push(render);
  $("print").addEventListener("click", () => window.print());

  async function api(method, url, body) {
    const r = await fetch(url, { method, credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body) });
    let data = {};
    try { data = await r.json(); } catch (e) { /* an empty body */ }
    return { status: r.status, data };
  }
  function say(text, err) {
    lastMsg = text;
    $("msg").textContent = text ? text() : "";
    $("msg").classList.toggle("err", !!err);
  }
  async function start() {
    const { status, data } = await api("GET", "/api/auth/session");
    if (status !== 200) { refuse("sheet.login"); return; }
    if (data.role !== "chief" && data.role !== "admin") { refuse("sheet.need_chief"); return; }
    await load();
  }
  function refuse(key, vars) {
    keys = null;
    $("sheet").hidden = true;
    $("print").hidden = true;
    $("login-box").hidden = false;
    say(() => QZ.t(key, vars), true);
  }
  async function load() {
    const { status, data } = await api("GET", "/api/record-keys" + (round ? "?round=" + encodeURIComponent(round) : ""));
    if (status === 401 || status === 403) { refuse(status === 401 ? "sheet.login" : "sheet.need_chief"); return; }
    if (status !== 200) { say(() => QZ.apiError(status, data), true); return; }
    keys = data;
    $("login-box").hidden = true;
    say(null);
    render();
  }
  async function login() {
    const { status, data } = await api("POST", "/api/auth/login",
      { username: $("username").value, password: $("password").value });
    if (status === 200) await start();
    else say(() => QZ.apiError(status, data), true);
  }
  $("login-submit").addEventListener("click", login);
  $("password").addEventListener("keydown", (e) => { if (e.key === "Enter") login(); });

  function card(k) {
    const qr = "/api/record-keys/qr.svg?board=" + encodeURIComponent(k.board) +
      (keys.round ? "&round=" + keys.round : "");
    const who = k.responsible
      ? QZ.t("record.responsible", { side: QZ.t(k.responsible.side), player: k.responsible.player })
      : null;
    return QZ.el("article", { class: "sheet-card", "data-board": k.board },
      QZ.el("div", {},
        QZ.el("h2", { text: QZ.t("board", { n: k.board }) }),
        QZ.el("p", { text: QZ.t("record.players", { red: k.red, black: k.black }) }),
        QZ.el("p", { class: "sheet-duty", text: QZ.t("sheet.duty") }),
        who ? QZ.el("p", { text: who }) : null),
      QZ.el("img", { class: "sheet-qr", src: qr, alt: QZ.t("sheet.qr_alt", { n: k.board }) }));
  }
  function render() {
    if (lastMsg) $("msg").textContent = lastMsg();
    if (!keys) return;
    const due = keys.keys.filter((k) => k.required);
    $("heading").textContent = keys.round ? QZ.t("sheet.heading", { n: keys.round }) : QZ.t("sheet.no_round");
    const cards = $("cards");
    // the QR images stay: only the words change on a language switch
    const old = new Map([...cards.querySelectorAll(".sheet-card")].map((c) => [c.dataset.board, c]));
    cards.replaceChildren(...due.map((k) => {
      const fresh = card(k);
      const was = old.get(k.board);
      if (was) {
        const img = was.querySelector("img");
        img.alt = fresh.querySelector("img").alt;
        fresh.replaceChild(img, fresh.querySelector("img"));
      }
      return fresh;
    }));
    if (keys.round && !due.length) say(() => QZ.t("sheet.none", { n: keys.round }));
    $("sheet").hidden = false;
    $("print").hidden = !due.length;
  }
  start();
})();
