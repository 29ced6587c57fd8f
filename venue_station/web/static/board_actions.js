// The arbiter page's board actions (arbiter.js): the clock buttons and the forms of the chosen
// board's panel — a time, a result, a forfeit, a move count, a foul — each sent once per tap.
// ``page``: { selected() → the chosen board, card(board), api, boardCmd, act, log } of arbiter.js.
"use strict";
(function () {
  const QZ = window.QZ;
  const $ = (id) => document.getElementById(id);
  QZ.boardActions = function (page) {
    const { boardCmd, act, log } = page;
    for (const button of document.querySelectorAll("[data-cmd]")) {
      button.addEventListener("click", () => {
        const b = page.selected();
        if (!b) return;
        const c = button.dataset.cmd;
        once(b + " " + c, () => {
          if (c === "arbiter_on" || c === "arbiter_off")
            return boardCmd(b, "arbiter_mode", { on: c === "arbiter_on" }, () => QZ.t("board", { n: b }) + " " + QZ.t(c));
          return boardCmd(b, c, {}, () => QZ.t("board", { n: b }) + " " + QZ.t(c));
        }, 0);
      });
    }
    // One board's action sends once per tap: the same action on the same board is let go while
    // it is on its way, and a form's (a foul, a result, a time) a moment after too (SETTLE_MS),
    // so a double click (or an impatient second tap) cannot send it twice — a second foul is a
    // second offence, and a game's second foul can lose it. The clock buttons (start, pause, …)
    // wait only for their answer: a second one is answered "already …", and the next game's
    // start may follow at once. The panel's buttons serve every board: another board's action
    // (board 1 paused, then board 2) goes at once.
    const SETTLE_MS = 800;
    const sending = new Set();
    function once(key, run, settleMs) {
      if (sending.has(key)) return;
      sending.add(key);
      Promise.resolve().then(run).catch(() => {})
        .finally(() => setTimeout(() => sending.delete(key), settleMs));
    }
    function form(id, handler) {
      const f = $(id);
      f.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const b = page.selected();
        // the same act: the same board's same game, the same values (a value put right, or the
        // next game's result, is another act and goes at once)
        const st = b && page.card(b).view.state;
        const data = new FormData(f);
        // the button's own word too: 替换结果 after a refusal is the next act, not a repeat
        const word = f.querySelector("button[type=submit]").textContent;
        const key = JSON.stringify([b, id, st && st.game, [...data.entries()], word]);
        if (b) once(key, () => handler(data, b), SETTLE_MS);
      });
    }
    // Five minutes or more either way takes a second tap that says what it does (−32 min went
    // through on one tap: an outsider deputy); a double click's second click is not that tap.
    const LARGE_S = 300;
    let armed = null;
    const adjustButton = $("f-adjust").querySelector("button");
    function disarm() {
      if (armed) clearTimeout(armed.timer);
      armed = null;
      adjustButton.classList.remove("armed");
      delete adjustButton.dataset.armed;
      adjustButton.textContent = QZ.t("adjust");
    }
    // a double click's second click (click count 2) is the same gesture: it submits nothing
    adjustButton.addEventListener("click", (ev) => { if (ev.detail > 1 && armed) ev.preventDefault(); });
    form("f-adjust", (f, b) => {
      const seconds = Number(f.get("seconds"));
      const side = f.get("side");
      if (!(f.get("seconds") || "").trim() || !Number.isFinite(seconds) || seconds === 0 || Math.abs(seconds) > 36000) {
        log(() => QZ.t("board", { n: b }) + " " + QZ.t("adjust") + " " + QZ.t(side), "error", () => QZ.t("adjust.seconds"));
        return;
      }
      const what = () => QZ.t("board", { n: b }) + " " + QZ.t("adjust") + " " + QZ.t(side) + " " + QZ.t("seconds.short", { s: (seconds > 0 ? "+" : "") + seconds });
      const key = JSON.stringify([b, side, seconds]);
      if (Math.abs(seconds) >= LARGE_S && !(armed && armed.key === key)) {
        disarm();
        armed = { key, timer: setTimeout(disarm, 5000) };
        adjustButton.classList.add("armed");
        adjustButton.dataset.armed = "1";
        adjustButton.textContent = QZ.t("tap_again", { what: what() });
        return;
      }
      disarm();
      return boardCmd(b, "adjust", { side, delta_ms: Math.round(seconds * 1000) }, what);
    });
    // A reason is the profile's code (chosen, never typed); the note beside is free text.
    function withNote(args, f) {
      const note = (f.get("note") || "").trim();
      return note ? { ...args, note } : args;
    }
    // A board whose game has a result that stands (its clock's state says so) offers 替换结果
    // from the start, beside the result it would replace: an outsider chief's correction was
    // refused once before the button changed. A result the page did not know of yet is still
    // refused (already_decided); the button then offers to replace it, and the next tap sends
    // the result with "replace".
    let replaceOn = null;
    const standing = (b) => {
      const st = b ? page.card(b).view.state : null;
      return st && st.result && typeof st.result === "object" ? st.result : null;
    };
    function showResult() {
      const b = page.selected();
      const stands = standing(b);
      const button = $("f-result").querySelector("button");
      const word = stands || replaceOn === b ? "result.replace" : "result";
      button.dataset.i18n = word; // a language switch keeps the word
      button.textContent = QZ.t(word);
      const line = $("result-standing");
      line.hidden = !stands;
      line.textContent = stands ? QZ.t("result.standing", { result: QZ.score(stands) +
        (stands.reason ? " · " + QZ.reason(stands.reason) : "") }) : "";
    }
    form("f-result", async (f, b) => {
      const winner = f.get("winner") || null;
      const replace = replaceOn === b || !!standing(b);
      const what = () => QZ.t("board", { n: b }) + " " + QZ.t(replace ? "result.replace" : "result") + " " + (winner ? QZ.t(winner) : QZ.t("draw"));
      const body = { cmd: "result", args: withNote({ winner, reason: f.get("reason") || "arbiter" }, f) };
      if (replace) body.replace = true;
      replaceOn = null;
      const r = await act(what, "POST", "/api/boards/" + encodeURIComponent(b) + "/cmd", body);
      if (r.status === 409 && r.data && r.data.code === "already_decided" && !replace) replaceOn = b;
      showResult();
    });
    // 立即判负: the other side wins; both sides (both absent at 15 minutes) is the 0:0 double forfeit.
    form("f-forfeit", (f, b) => {
      const side = f.get("side"), reason = f.get("reason");
      if (!reason) return;
      const args = side === "both" ? { winner: null, reason: "double_forfeit" }
        : { winner: side === "red" ? "black" : "red", reason };
      return boardCmd(b, "result", withNote(args, f),
        () => QZ.t("board", { n: b }) + " " + QZ.t("forfeit") + " " + QZ.t(side === "both" ? "forfeit.both" : side) + " · " + QZ.reason(args.reason));
    });
    form("f-count", (f, b) => {
      // the claimant (提出方): a game record then leaves out its checks per the profile
      const args = { limit: Number(f.get("limit")) || null };
      if (f.get("claimant")) args.claimant = f.get("claimant");
      return boardCmd(b, "move_count", args, () => QZ.t("board", { n: b }) + " " + QZ.t("move_count"));
    });
    form("f-foul", (f, b) => {
      if (!f.get("reason")) return;
      const side = f.get("side");
      return boardCmd(b, "foul", withNote({ side, reason: f.get("reason") }, f), () => QZ.t("board", { n: b }) + " " + QZ.t("foul") + " " + QZ.t(side));
    });

    // A flag stopped the selected game and no result stands: what the arbiter can do next
    // (docs/station.md step 5); once the flag is dismissed, the adjustment is for its side.
    let flagHintShown = "";
    function showFlagHint() {
      const hint = $("flag-hint");
      const b = page.selected();
      const st = b ? page.card(b).view.state : null;
      const side = st && st.phase === "finished" && st.flag && !st.result ? st.flag : null;
      const pending = !!side && (st.pending || []).some((p) => p.reason === "flag");
      const key = side ? (pending ? "flaghint.pending" : "flaghint.dismissed") : "";
      hint.hidden = !key;
      hint.textContent = key ? QZ.t(key, { side: QZ.t(side) }) : "";
      const shown = key && b + "|" + key;
      if (key && !pending && shown !== flagHintShown) $("f-adjust").elements.side.value = side;
      flagHintShown = shown;
    }
    // the selected board's panel after its state changed (or another board was chosen)
    const back = QZ.resultBack(page); // 撤销结果 (result_back.js)
    return { sync() { showFlagHint(); showResult(); back.sync(); } };
  };
})();
