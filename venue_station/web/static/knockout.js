// The knockout section of the arbiter's station (Meishan: after the profile's round the top 4
// play 1v4 and 2v3, colours by lot; a drawn game goes to one armageddon whose colour the slow
// game's black chooses; then the final and the third-place game). The chief starts it, sees the
// bracket, makes the armageddon's colour choice and confirms each game onto its board; the
// result is entered on the board as any game's (录入结果), the station takes it from there.
// Every action goes through arbiter.js's `act` (QZ.station), so its reply shows in the log.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const e = QZ.el;
  let state = null; // the last GET /api/knockout
  let timer = null;
  let shown = ""; // the state last drawn (a poll that changed nothing leaves the section alone)
  const typed = new Map(); // game id -> the board typed in its row, kept over a redraw

  const STAGES = { semi_final: "ko.stage.semi_final", final: "ko.stage.final", third_place: "ko.stage.third_place" };
  function stageText(g) {
    const s = QZ.t(STAGES[g.stage] || "ko.stage.other");
    const n = g.id.startsWith("ko-sf1") ? " 1" : g.id.startsWith("ko-sf2") ? " 2" : "";
    return s + n + (g.tiebreak ? " · " + QZ.t("ko.armageddon") : "");
  }
  // "30m+5s" in the page's words (30分+5秒 / 30′+5″); anything else as "—"
  function tcText(tc) {
    const m = /^(\d+)m\+(\d+)s$/.exec(tc || "");
    return m ? QZ.t("ko.tc", { m: m[1], s: m[2] }) : "—";
  }
  function resultText(g) {
    if (g.result === "draw" && g.draw_winner) return QZ.t("ko.draw_wins", { side: QZ.t(g.draw_winner) });
    if (g.result === "draw") return QZ.t("draw");
    return QZ.t("ko.winner", { side: QZ.t(g.result) });
  }

  async function load() {
    let reply;
    try { reply = await QZ.station.api("GET", "/api/knockout"); } catch (err) { return; } // away: next poll
    const { status, data } = reply;
    if (status !== 200) return;
    state = data;
    if (JSON.stringify(data) !== shown) render();
  }
  function poll() {
    if (timer) return;
    load();
    timer = setInterval(() => { if (!$("station").hidden) load(); }, 1500);
  }
  QZ.onStation = poll;
  QZ.onLang.push(render);

  function render() {
    const s = state;
    shown = JSON.stringify(s);
    $("ko").dataset.started = s && s.started ? "1" : "0";
    $("ko").dataset.finished = s && s.finished ? "1" : "0";
    if (!s) return;
    $("ko-start-form").hidden = Boolean(s.started);
    $("ko-games").hidden = !s.started;
    if (!s.started) {
      $("ko-state").textContent = QZ.t("ko.not_started");
      $("ko-top").replaceChildren();
      $("ko-choices").replaceChildren();
      $("ko-rows").replaceChildren();
      $("ko-places").replaceChildren();
      return;
    }
    $("ko-state").textContent = QZ.t(s.finished ? "ko.finished" : "ko.running", { r: s.after_round });
    $("ko-top").replaceChildren(...s.top.map((p) => e("li", { "data-player": p, text: p })));
    $("ko-choices").replaceChildren(...s.pending_choices.map(choiceRow));
    const waiting = new Set(s.proposed.map((g) => g.id));
    const rows = s.games.map((g) => gameRow(g, waiting.has(g.id) ? s.proposed.find((p) => p.id === g.id) : null));
    for (const p of s.proposed) if (!s.games.some((g) => g.id === p.id)) rows.push(gameRow(p, p));
    $("ko-rows").replaceChildren(...rows);
    $("ko-places").replaceChildren(...s.placings.map((p) =>
      e("li", { "data-place": p.place, "data-player": p.player, text: QZ.t("ko.place", { n: p.place, who: p.player }) })));
  }

  function choiceRow(c) {
    const li = e("li", { "data-game": c.game, "data-chooser": c.chooser },
      QZ.t("ko.choose", { who: c.chooser, other: c.opponent }), " ");
    for (const side of ["red", "black"]) {
      li.append(e("button", { type: "button", "data-side": side, text: QZ.t("ko.takes", { side: QZ.t(side) }),
        onclick: () => choose(c, side) }), " ");
    }
    return li;
  }
  async function choose(c, side) {
    const r = await QZ.station.act(() => QZ.t("ko.choice.log", { who: c.chooser, side: QZ.t(side) }),
      "POST", "/api/knockout/choices/" + encodeURIComponent(c.game), { side });
    if (r.ok && r.data.started) { state = r.data; render(); }
  }

  // One game: stage, players, time control, board, state; a game still to play has a board
  // field and 确认上台 (the tie-break's board is its slow game's, already filled in; a game
  // confirmed already may be sent again, to another board). The row carries the game's values
  // as the API gives them (data-*), for a test or a script to read.
  function gameRow(g, proposed) {
    const st = g.result ? "done" : proposed && !proposed.confirmed ? "proposed" : "playing";
    const tr = e("tr", { "data-game": g.id, "data-state": st,
      "data-red": g.red, "data-black": g.black, "data-tc": g.tc, "data-tiebreak": g.tiebreak ? "1" : "0",
      "data-board": (proposed ? proposed.board : g.board) || "", "data-result": g.result || "" },
      e("td", { text: stageText(g) }), e("td", { text: g.red }), e("td", { text: g.black }),
      e("td", { text: tcText(g.tc) }));
    if (proposed) {
      const input = e("input", { name: "board", inputmode: "numeric", size: "4", autocomplete: "off",
        "aria-label": QZ.t("ko.col.board"), value: typed.has(g.id) ? typed.get(g.id) : proposed.board || "",
        oninput: () => typed.set(g.id, input.value) });
      tr.append(e("td", {}, input), e("td", { text: QZ.t(proposed.confirmed ? "ko.state.playing" : "ko.state.proposed") }),
        e("td", {}, e("button", { type: "button", "data-action": "confirm", text: QZ.t(proposed.confirmed ? "ko.resend" : "ko.confirm"),
          onclick: () => confirm(g, input.value.trim()) })));
    } else {
      tr.append(e("td", { text: g.board ? QZ.t("board", { n: g.board }) : "—" }),
        e("td", { class: "ko-result", text: g.result ? resultText(g) : QZ.t("ko.state.playing") }), e("td"));
    }
    return tr;
  }
  async function confirm(g, board) {
    const where = board ? " → " + QZ.t("board", { n: board }) : " " + QZ.t("ko.confirm");
    await QZ.station.act(() => stageText(g) + where, "POST",
      "/api/knockout/games/" + encodeURIComponent(g.id) + "/confirm", board ? { board } : {});
    typed.delete(g.id);
    load();
  }

  $("ko-start-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("ko-seed").value.trim();
    const body = text === "" ? {} : { seed: Number(text) };
    const r = await QZ.station.act(() => QZ.t("ko.start"), "POST", "/api/knockout/start", body);
    if (r.ok && r.data.started) { state = r.data; render(); } else load();
  });
  // the chief starts it, or another arbiter did: the polls keep the section up to date
  if (!$("station").hidden) poll();
})();
