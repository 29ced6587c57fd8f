// The records section of the arbiter's station (录谱, issue 29): every board of a round that
// must be recorded (the profile's [recording]: Meishan the top 2, Wulong the top 10 and every
// board with a master), the player who must record it (the winner; red on a draw) and where
// the record stands: due / recorded / late / missing / allowed. When the next round starts, a
// missing record raises the pending not_recording foul in the alert list (确认 / 驳回 there);
// where the regulation gives the chief that power (Meishan) the chief may allow a later or no
// record here. Every action goes through arbiter.js's `act` (QZ.station), its reply in the log.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const e = QZ.el;
  let view = null; // the last GET /api/record-duties
  let shown = "";
  let round = null; // the round the arbiter chose (null: follow the latest started)
  let timer = null;

  async function load() {
    const q = round === null ? "" : "?round=" + round;
    let reply;
    try { reply = await QZ.station.api("GET", "/api/record-duties" + q); } catch (err) { return; } // away: next poll
    const { status, data } = reply;
    if (status !== 200) return;
    view = data;
    if (JSON.stringify(data) !== shown) render();
  }
  function poll() {
    if (timer) return;
    load();
    timer = setInterval(() => { if (!$("station").hidden) load(); }, 2000);
  }
  const before = QZ.onStation; // knockout.js's
  QZ.onStation = () => { if (before) before(); poll(); };
  QZ.onLang.push(render);
  function step(by) {
    const now = round !== null ? round : view && view.round;
    if (now && now + by >= 1) { round = now + by; load(); }
  }
  $("duty-prev").addEventListener("click", () => step(-1));
  $("duty-next").addEventListener("click", () => step(1));

  function because(d, rule) {
    if (d.because === "top") return QZ.t("duty.because.top", { n: rule.top_boards });
    const tags = rule.player_tags.map((t) => QZ.tOr("tag." + t, "duty.because.tagged"));
    return QZ.t("duty.because.tag", { tags: tags.join(QZ.lang === "en" ? ", " : "、") });
  }
  function stateText(d) {
    let text = QZ.t("duty.state." + d.state);
    if (d.alert) text += " · " + QZ.t("duty.alert", { s: QZ.tOr("status." + d.alert.status, "status.other") });
    if (d.consent) text += " · " + QZ.t("duty.consent.by", { who: d.consent.by || "" });
    return text;
  }

  // The record against the clock's presses (never merged): said when they differ and
  // something is recorded (a row with nothing recorded says so by its state).
  function pairingText(d) {
    const p = d.pairing;
    if (!p || !d.plies || p.verdict === "matched") return "";
    let text = p.verdict === "differs" ? QZ.t("duty.pairing.differs")
      : QZ.t("duty.pairing." + p.verdict, { d: Math.abs(p.moves - p.presses) });
    if (p.disagreement) text += QZ.t("duty.pairing.from", { n: p.disagreement });
    return text;
  }

  function render() {
    const v = view;
    shown = JSON.stringify(v);
    if (!v) return;
    $("duty-round").textContent = v.round ? QZ.t("duty.round", { r: v.round }) : "";
    $("duty").dataset.round = v.round || "";
    const rows = v.duties || [];
    $("duty-table").hidden = rows.length === 0;
    if (!v.rule) $("duty-state").textContent = QZ.t("duty.no_rule");
    else if (!v.round) $("duty-state").textContent = QZ.t("duty.no_round");
    else if (!rows.length) $("duty-state").textContent = QZ.t("duty.none");
    else $("duty-state").textContent = v.grace_ends_ms
      ? QZ.t("duty.grace.ended", { t: QZ.time(v.grace_ends_ms) }) : QZ.t("duty.grace.open");
    $("duty-rows").replaceChildren(...rows.map((d) => row(d, v)));
    // the round's records in one file, once any is recorded (the same as the public export)
    $("duty-pgn-round").hidden = !rows.some((d) => d.plies > 0);
    if (v.round) $("duty-pgn-round").href = "/api/export/rounds/" + v.round + "/records.pgn";
  }

  // One game: board, players, why it must be recorded, who records it, moves recorded of the
  // clock's presses, the state; the chief's consent where the regulation gives it. The row
  // carries the API's values (data-*), for a test or a script to read.
  function row(d, v) {
    const who = d.responsible;
    const tr = e("tr", { "data-game": d.game, "data-board": d.board, "data-state": d.state,
      "data-responsible": who ? who.player : "", "data-side": who ? who.side : "",
      "data-alert": d.alert ? d.alert.status : "", "data-pairing": d.pairing ? d.pairing.verdict : "" },
      e("td", { text: QZ.t("board", { n: d.board }) }), e("td", { text: d.red }), e("td", { text: d.black }),
      e("td", { text: because(d, v.rule) }),
      e("td", { text: who ? who.player + " (" + QZ.t(who.side) + ")" : QZ.t("duty.no_result") }),
      e("td", { text: QZ.t("duty.moves", { p: d.plies, n: d.presses }) },
        pairingText(d) ? e("span", { class: "duty-pairing", text: " · " + pairingText(d) }) : null),
      e("td", { class: "duty-state", text: stateText(d) },
        d.plies ? e("a", { class: "duty-pgn", download: true, text: " " + QZ.t("duty.pgn"),
          href: "/api/export/games/" + encodeURIComponent(d.game) + "/record.pgn" }) : null));
    const cell = e("td");
    const ruled = d.alert && !["open", "acked"].includes(d.alert.status);
    if (v.rule.chief_consent && !ruled) {
      if (!d.consent && d.state !== "recorded")
        cell.append(e("button", { type: "button", class: "needs-chief", "data-action": "consent", text: QZ.t("duty.consent"),
          onclick: () => consent(d, true) }));
      else if (d.consent && !v.grace_ends_ms)
        cell.append(e("button", { type: "button", class: "needs-chief", "data-action": "revoke", text: QZ.t("duty.revoke"),
          onclick: () => consent(d, false) }));
    }
    tr.append(cell);
    return tr;
  }
  async function consent(d, allow) {
    await QZ.station.act(() => QZ.t("board", { n: d.board }) + " " + QZ.t(allow ? "duty.consent" : "duty.revoke"),
      "POST", "/api/record-duties/" + encodeURIComponent(d.game) + "/consent", { allow });
    load();
  }
  if (!$("station").hidden) poll();
})();
