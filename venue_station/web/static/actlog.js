// The arbiter page's log of actions (arbiter.js): what was sent and what came of it, newest
// first, at most 30 lines. It keeps what happened, not its words: `what` and `detail` are
// functions of the language, so a switch re-renders every line in the new one.
"use strict";
(function () {
  QZ.actionLog = function (list) {
    const lines = []; // newest first
    function line(entry) {
      const key = { ok: entry.detail ? "reply.done" : "reply.ok", refused: "reply.refused", timeout: "reply.timeout", error: "reply.error", sent: "sent" }[entry.outcome];
      const what = entry.what();
      const text = entry.outcome === "sent" ? what + ": " + QZ.t("sent") : QZ.t(key, { what, e: entry.detail ? entry.detail() : "" });
      return QZ.el("li", { class: "log-" + entry.outcome, "data-outcome": entry.outcome }, QZ.el("time", { text: QZ.time(entry.ts) }), " ", text);
    }
    function render() { list().replaceChildren(...lines.map(line)); }
    function log(what, outcome, detail) {
      const entry = { ts: Date.now(), what, outcome, detail: detail || null };
      lines.unshift(entry);
      if (lines.length > 30) lines.pop();
      render();
      return entry;
    }
    function replaceLog(entry, what, outcome, detail) {
      const i = lines.indexOf(entry);
      if (i >= 0) lines.splice(i, 1);
      log(what, outcome, detail);
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
    return { log, replaceLog, refusals, render };
  };
})();
