// The arbiter page's log of actions (arbiter.js): what was sent and what came of it, newest
// first, at most 30 lines. It keeps what happened, not its words: `what` and `detail` are
// functions of the language, so a switch re-renders every line in the new one. The answered
// lines are kept in this browser (localStorage, 12 h) in the words of both languages: a reload
// or a restarted laptop still shows what the arbiter did (it emptied on reload).
"use strict";
(function () {
  const KEPT = "qz.actlog", KEEP_MS = 12 * 3600 * 1000;
  QZ.actionLog = function (list) {
    const lines = kept(); // newest first
    function kept() {
      try {
        const old = JSON.parse(localStorage.getItem(KEPT) || "[]");
        return old.filter((e) => e && Date.now() - e.ts < KEEP_MS && e.text && typeof e.text.en === "string")
          .slice(0, 30).map((e) => ({ ts: e.ts, outcome: e.outcome, text: e.text }));
      } catch (e) { return []; }
    }
    function keep() {
      try {
        const done = lines.filter((e) => e.outcome !== "sent").map((e) => ({ ts: e.ts, outcome: e.outcome, text: e.text || both(e) }));
        localStorage.setItem(KEPT, JSON.stringify(done));
      } catch (e) { /* private mode, or full: the page's own list still shows them */ }
    }
    // a line's words in both languages, kept once it is answered
    function both(entry) {
      const shown = QZ.lang, out = {};
      try {
        for (const lang of ["zh-CN", "en"]) { QZ.lang = lang; out[lang === "en" ? "en" : "zh"] = words(entry); }
      } finally { QZ.lang = shown; }
      return out;
    }
    function words(entry) {
      if (entry.text) return QZ.lang === "en" ? entry.text.en : entry.text.zh;
      const key = { ok: entry.detail ? "reply.done" : "reply.ok", refused: "reply.refused", timeout: "reply.timeout", error: "reply.error", sent: "sent" }[entry.outcome];
      const what = entry.what();
      return entry.outcome === "sent" ? what + ": " + QZ.t("sent") : QZ.t(key, { what, e: entry.detail ? entry.detail() : "" });
    }
    function line(entry) {
      return QZ.el("li", { class: "log-" + entry.outcome, "data-outcome": entry.outcome }, QZ.el("time", { text: QZ.time(entry.ts) }), " ", words(entry));
    }
    function render() {
      list().replaceChildren(...lines.map(line));
      const box = document.getElementById("toast");
      if (box && shown) box.textContent = words(shown); // a language switch re-words it too
    }
    function log(what, outcome, detail) {
      const entry = { ts: Date.now(), what, outcome, detail: detail || null };
      lines.unshift(entry);
      if (lines.length > 30) lines.pop();
      render();
      if (outcome !== "sent") keep();
      return entry;
    }
    function replaceLog(entry, what, outcome, detail) {
      const i = lines.indexOf(entry);
      if (i >= 0) lines.splice(i, 1);
      toast(log(what, outcome, detail));
    }
    // The answer also shows where the thumb is, for a few seconds: on a phone the log sits below
    // the alert list, off screen once the list is scrolled (an outsider deputy). It takes no
    // taps (pointer-events: none): nothing under it is ever hidden from a tap.
    let hide = null, shown = null;
    function toast(entry) {
      shown = entry;
      let box = document.getElementById("toast");
      if (!box) {
        box = QZ.el("div", { id: "toast", class: "toast", role: "status", "aria-live": "polite" });
        document.body.append(box);
      }
      box.textContent = words(entry);
      box.dataset.outcome = entry.outcome;
      box.hidden = false;
      clearTimeout(hide);
      hide = setTimeout(() => { box.hidden = true; }, entry.outcome === "ok" ? 3000 : 8000);
    }
    // The boards that refused or did not answer, each by its code in words.
    function refusals(data) {
      const replies = data.replies || (data.command && data.command.replies) || {};
      const parts = Object.entries(replies).filter(([, r]) => r && !r.ok)
        .map(([b, r]) => QZ.t("refused.detail", { b: QZ.t("board", { n: b }), e: QZ.replyText(r) }));
      const missing = data.missing || (data.command && data.command.missing) || [];
      for (const b of missing) parts.push(QZ.t("refused.detail", { b: QZ.t("board", { n: b }), e: QZ.t("code.no_reply") }));
      return parts.join("; ");
    }
    render(); // what this browser kept from before a reload
    return { log, replaceLog, refusals, render };
  };
})();
