// An alert's row in words (arbiter.js): what it concerns and who settled it — never a code.
"use strict";
(function () {
  const QZ = window.QZ;
  // What a move limit or an early draw was counted on: the game record (the claimant's checks
  // left out per the profile) or the clock's presses (docs/records.md).
  function countText(d) {
    const n = typeof d.counted === "number" ? d.counted : d.full_moves;
    if (typeof n !== "number") return QZ.t("count.by_presses");
    if (d.count !== "record") return QZ.t("count.presses", { n });
    return d.uncounted_checks ? QZ.t("count.record_checks", { n, u: d.uncounted_checks }) : QZ.t("count.record", { n });
  }
  // The alert's board(s), round, side, player, reason …; `state`: its board's state now.
  QZ.alertWhat = function (a, state) {
    const d = a.detail || {};
    // One node's outage is one alert naming all its boards (detail.boards).
    const many = Array.isArray(d.boards) && d.boards.length > 1 ? d.boards : null;
    const venueWide = a.board === "*" || a.board === "-"; // the station's own (第*台: an outsider)
    const what = [venueWide ? QZ.t("alert.venue_wide") : many ? QZ.t("boards.list", { list: many.join(QZ.lang === "en" ? ", " : "、") }) : QZ.t("board", { n: a.board })];
    if (typeof d.round === "number") what.unshift(QZ.t("round", { n: d.round })); // 缺录: which round's
    if (a.side) what.push(QZ.t(a.side));
    // the side's player, while the board still has that game (a flag, a lateness: who it is)
    const st = a.side ? state : null;
    if (st && st.game === a.game && st[a.side] && !d.player) what.push(st[a.side]);
    if (d.player) what.push(d.player); // the responsible player (录谱)
    if (d.reason) what.push(QZ.reason(d.reason));
    if (typeof d.offset_ms === "number") what.push(d.offset_ms + " ms");
    if (d.count) what.push(countText(d)); // record or presses
    if ((a.kind === "identity_clash" || a.kind === "seq_clash") && d.node) what.push(d.node);
    return what;
  };
  QZ.byWho = (by) => by === "board" || by === "station" ? QZ.t("by." + by) : by;
})();
