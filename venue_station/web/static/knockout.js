// The knockout section of the arbiter's station (Meishan: after the profile's round the top 4
// play 1v4 and 2v3, colours by lot; a drawn game goes to one armageddon whose colour the slow
// game's black chooses; then the final and the third-place game). The chief starts it, sees the
// bracket, makes the armageddon's colour choice and confirms each game onto its board; the
// result is entered on the board as any game's (录入结果), the station takes it from there.
// Every action goes through arbiter.js's `act` (QZ.station), so its reply shows in the log.
// 开始淘汰赛 takes two taps (the first arms it for 5 s, as the venue-wide actions do); the
// station refuses it until every game of the rounds before it is decided, and says why.
// A board that refuses a game's set-up leaves the game where it was, with the refusal shown on
// its row, to be assigned again.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const e = QZ.el;
  let state = null; // the last GET /api/knockout
  let timer = null;
  let shown = ""; // the state last drawn (a poll that changed nothing leaves the section alone)
  const typed = new Map(); // game id -> the board typed in its row, kept over a redraw
  const refused = new Map(); // game id -> the text of the last board's refusal (a function of the language)
  let startRefused = null; // why the station refused the start: {ts, code, text: a function of the language}

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
      if (startRefused) {
        $("ko-state").append(e("br"), e("span", { class: "ko-refused", "data-code": startRefused.code },
          e("time", { text: QZ.time(startRefused.ts) }), " ", startRefused.text()));
        if (startRefused.pick) $("ko-state").append(pickRow(startRefused.pick));
      }
      $("ko-top").replaceChildren();
      $("ko-choices").replaceChildren();
      $("ko-rows").replaceChildren();
      $("ko-places").replaceChildren();
      return;
    }
    $("ko-state").textContent = QZ.t(s.finished ? "ko.finished" : "ko.running", { r: s.after_round });
    // a game whose board's result changed after the games that came of it were under way: the
    // knockout keeps what it recorded, and says so until the chief settles it
    for (const c of s.conflicts || []) {
      const g = s.games.find((x) => x.id === c.game) || { id: c.game, stage: "other" };
      const now = c.now ? resultText({ ...g, result: c.now }) : QZ.t("ko.no_result");
      $("ko-state").append(e("br"), e("span", { class: "ko-conflict", "data-game": c.game,
        text: QZ.t("ko.conflict", { game: stageText(g), now, was: resultText({ ...g, result: c.recorded }) }) }));
    }
    $("ko-top").replaceChildren(...s.top.map((p) => e("li", { "data-player": p, text: p })));
    $("ko-choices").replaceChildren(...s.pending_choices.map(choiceRow));
    const waiting = new Set(s.proposed.map((g) => g.id));
    const rows = s.games.map((g) => gameRow(g, waiting.has(g.id) ? s.proposed.find((p) => p.id === g.id) : null));
    for (const p of s.proposed) if (!s.games.some((g) => g.id === p.id)) rows.push(gameRow(p, p));
    $("ko-rows").replaceChildren(...rows);
    $("ko-places").replaceChildren(...s.placings.map((p) =>
      e("li", { "data-place": p.place, "data-player": p.player, text: QZ.t("ko.place", { n: p.place, who: p.player }) })));
  }

  // The 4th place shared: the chief picks who goes on, in order, among the tied players; the
  // players above them are in already. The next 开始淘汰赛 sends the four.
  function pickRow(pick) {
    const row = e("span", { class: "ko-pick" }, e("br"),
      QZ.t("ko.pick", { n: pick.need, from: pick.above.length + 1 }), " ");
    for (const name of pick.shared) {
      const at = pick.picked.indexOf(name);
      row.append(e("button", { type: "button", class: "needs-chief", "data-player": name, "aria-pressed": String(at >= 0),
        text: at >= 0 ? (pick.above.length + at + 1) + ". " + name : name,
        onclick: () => {
          const i = pick.picked.indexOf(name);
          if (i >= 0) pick.picked.splice(i, 1); else if (pick.picked.length < pick.need) pick.picked.push(name);
          render();
        } }), " ");
    }
    return row;
  }

  function choiceRow(c) {
    const li = e("li", { "data-game": c.game, "data-chooser": c.chooser },
      QZ.t("ko.choose", { who: c.chooser, other: c.opponent }), " ");
    for (const side of ["red", "black"]) {
      li.append(e("button", { type: "button", class: "needs-chief", "data-side": side, text: QZ.t("ko.takes", { side: QZ.t(side) }),
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
    const note = proposed && refused.has(g.id) ? refused.get(g.id) : null;
    const tr = e("tr", { "data-game": g.id, "data-state": st, "data-refused": note ? "1" : null,
      "data-red": g.red, "data-black": g.black, "data-tc": g.tc, "data-tiebreak": g.tiebreak ? "1" : "0",
      "data-board": (proposed ? proposed.board : g.board) || "", "data-result": g.result || "" },
      e("td", { text: stageText(g) }), e("td", { text: g.red }), e("td", { text: g.black }),
      e("td", { text: tcText(g.tc) }));
    if (proposed) {
      const input = e("input", { name: "board", inputmode: "numeric", size: "4", autocomplete: "off",
        "aria-label": QZ.t("ko.col.board"), value: typed.has(g.id) ? typed.get(g.id) : proposed.board || "",
        oninput: () => typed.set(g.id, input.value) });
      const state = e("td", { text: QZ.t(proposed.confirmed ? "ko.state.playing" : "ko.state.proposed") });
      if (note) state.append(e("br"), e("span", { class: "ko-refused", text: note() }));
      tr.append(e("td", {}, input), state,
        e("td", {}, e("button", { type: "button", class: "needs-chief", "data-action": "confirm", text: QZ.t(proposed.confirmed ? "ko.resend" : "ko.confirm"),
          onclick: () => confirm(g, input.value.trim()) })));
    } else {
      // a game played: its clock log as PGN, as a Swiss game's (the records of the top boards)
      const pgn = g.board ? e("a", { href: "/api/export/games/" + encodeURIComponent(g.id) + "/clock.pgn",
        download: "", class: "ko-pgn", text: "PGN" }) : "";
      tr.append(e("td", { text: g.board ? QZ.t("board", { n: g.board }) : "—" }),
        e("td", { class: "ko-result", text: g.result ? resultText(g) : QZ.t("ko.state.playing") }), e("td", {}, pgn));
    }
    return tr;
  }
  // A board that refused the game (409 with the board's reply): the station kept the game where
  // it was; the row says which board refused and why, and keeps the board typed.
  async function confirm(g, board) {
    const where = board ? " → " + QZ.t("board", { n: board }) : " " + QZ.t("ko.confirm");
    const r = await QZ.station.act(() => stageText(g) + where, "POST",
      "/api/knockout/games/" + encodeURIComponent(g.id) + "/confirm", board ? { board } : {});
    const cmd = r.data && r.data.command;
    if (r.status === 409 && cmd && cmd.outcome === "rejected") {
      const to = cmd.board || board;
      refused.set(g.id, () => QZ.t("ko.refused", { b: QZ.t("board", { n: to }), e: QZ.replyText(cmd) }));
    } else {
      refused.delete(g.id);
      if (r.ok) typed.delete(g.id);
    }
    shown = ""; // the row's note changed: draw it even if the knockout did not
    load();
  }

  // Two taps, as for the venue-wide actions (arbiter.js): the first arms the button for 5 s,
  // the second sends. The form's submit (the button, or Enter in the seed field) is the tap.
  // A double click is one tap: a second tap within DOUBLE_MS of the first does not send.
  const startButton = $("ko-start");
  const DOUBLE_MS = 500;
  let armed = null, armedAt = 0;
  function disarm() {
    clearTimeout(armed);
    armed = null;
    startButton.classList.remove("armed");
    delete startButton.dataset.armed;
    startButton.textContent = QZ.t("ko.start");
  }
  QZ.onLang.push(() => { if (armed) startButton.textContent = QZ.t("ko.start.again"); });
  $("ko-start-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (!armed) {
      startButton.classList.add("armed");
      startButton.dataset.armed = "1";
      startButton.textContent = QZ.t("ko.start.again");
      armed = setTimeout(disarm, 5000);
      armedAt = Date.now();
      return;
    }
    if (Date.now() - armedAt < DOUBLE_MS) return;
    disarm();
    const text = $("ko-seed").value.trim();
    const body = text === "" ? {} : { seed: Number(text) };
    const pick = startRefused && startRefused.pick;
    if (pick && pick.picked.length === pick.need) body.top = [...pick.above, ...pick.picked];
    const r = await QZ.station.act(() => QZ.t("ko.start"), "POST", "/api/knockout/start", body);
    // why not, kept beside the button (with its time: the rounds go on) until the next try
    startRefused = !r.ok && r.status === 409 && r.data && r.data.code
      ? { ts: Date.now(), code: r.data.code, text: () => QZ.apiError(r.status, r.data) } : null;
    const args = (r.data && r.data.args) || {};
    if (startRefused && startRefused.code === "knockout_fourth_shared" && Array.isArray(args.above)) {
      const need = 4 - args.above.length;
      startRefused.pick = { above: args.above, shared: args.players, need,
        picked: pick && pick.need === need ? pick.picked.filter((p) => args.players.includes(p)) : [] };
    }
    if (r.ok && r.data.started) { state = r.data; render(); } else { shown = ""; load(); }
  });
  // the chief starts it, or another arbiter did: the polls keep the section up to date
  if (!$("station").hidden) poll();
})();
