// The record page's outbox (录谱): the moves entered while the station cannot be reached (a
// hall's Wi-Fi comes and goes) are kept on the phone — in localStorage, so a reloaded page or a
// browser that was closed keeps them too — and sent in their order once the station answers.
// Each keeps its game and the number of moves it was entered after: it never lands on the
// board's next game, nor after moves it never saw (the station refuses it, record_changed,
// and the sending stops with the reason on screen). The station reads every move as always:
// a move this page placed on the diagram by its squares alone is checked when it is sent.
"use strict";
(function () {
  const QZ = window.QZ;
  const valid = (it) => it && typeof it.game === "string" && Number.isInteger(it.ply) &&
    typeof it.move === "string" && it.move.length > 0 && it.move.length <= 32 &&
    (it.after == null || /^([a-i][0-9][a-i][0-9])?$/.test(it.after));
  const same = (a, b) => a.game === b.game && a.ply === b.ply && a.move === b.move;
  // ICCS (h2e2, H2-E2): a move whose squares are known without the rules.
  const ICCS = /^([a-i])([0-9])-?([a-i])([0-9])$/i;

  QZ.RecordOutbox = class {
    constructor(board) {
      this.key = "qz.record.outbox." + board;
      this.viewKey = "qz.record.view." + board;
      this.items = this.read();
      this.refused = null; // {item, status, data}: the move the station refused; sending stops
    }
    read() {
      try {
        const items = JSON.parse(localStorage.getItem(this.key) || "[]");
        return Array.isArray(items) ? items.filter(valid) : [];
      } catch (e) { return []; }
    }
    save() {
      try {
        if (this.items.length) localStorage.setItem(this.key, JSON.stringify(this.items));
        else localStorage.removeItem(this.key);
      } catch (e) { /* private mode or a full store: the list in memory still holds them */ }
    }
    // Keep `move` for `view`'s game, after the stored moves and those already waiting. The
    // first one keeps the last move the phone saw (`after`, ICCS): a record whose moves were
    // changed meanwhile refuses it, though its count be the same. Each next one learns its
    // `after` when the one before it is stored (`sent`).
    add(view, move, text, after) {
      this.items = this.read(); // (another tab of this board may have sent or kept some)
      const mine = this.of(view.game);
      const ply = mine.length ? mine[mine.length - 1].ply + 1 : view.ply;
      this.items.push({ game: view.game, ply, move, text: text || move, after: mine.length ? null : after });
      this.save();
    }
    of(game) { return this.items.filter((it) => it.game === game); }
    get size() { return this.items.length; }
    first() { return this.items[0] || null; }
    // `it` reached the station (its stored ICCS, the next one's `after`): that very entry
    // goes, as the list stands now — another tab of the board may have sent it first, and a
    // blind shift dropped the move behind it (a reviewer).
    sent(it, iccs) {
      this.items = this.read();
      const at = this.items.findIndex((x) => same(x, it));
      if (at >= 0) this.items.splice(at, 1);
      const next = this.items[Math.max(at, 0)];
      if (next && next.game === it.game && next.after == null && iccs) next.after = iccs;
      this.refused = null;
      this.save();
    }
    // The list as another tab left it; a refusal stands only while its move is still kept.
    reload() {
      this.items = this.read();
      if (this.refused && !this.items.some((x) => same(x, this.refused.item))) this.refused = null;
    }
    // The last record the station showed, for a page opened again while it cannot be reached.
    keepView(view) {
      try { localStorage.setItem(this.viewKey, JSON.stringify(view)); } catch (e) { /* full */ }
    }
    keptView(game) {
      try {
        const view = JSON.parse(localStorage.getItem(this.viewKey) || "null");
        const ok = view && typeof view.game === "string" && Array.isArray(view.moves) && typeof view.fen === "string";
        return ok && (!game || view.game === game) ? view : null;
      } catch (e) { return null; }
    }
    // Take back the last move waiting for `game` (an undo that never reaches the station).
    takeBack(game) {
      this.reload();
      for (let i = this.items.length - 1; i >= 0; i--) {
        if (this.items[i].game !== game) continue;
        const [gone] = this.items.splice(i, 1);
        // the refused move taken back: the rest may go (it stayed refused with the 放弃 button
        // hidden once the list was empty: a reviewer)
        if (this.refused && same(gone, this.refused.item)) this.refused = null;
        this.save();
        return true;
      }
      return false;
    }
    drop() { this.items = []; this.refused = null; this.save(); }

    // The position `pieces` (square -> FEN letter) after the waiting moves of `game` whose
    // squares are known (tapped, or typed in ICCS, or the first one found in the station's
    // list of legal moves); `placed` says how many of them, `side` who moves next, `last` the
    // last one placed (ICCS).
    static squaresOf(move) {
      const m = ICCS.exec(move.trim());
      return m ? [m[1].toLowerCase() + m[2], m[3].toLowerCase() + m[4]] : null;
    }
    overlay(view, pieces, legalMove) {
      const waiting = this.refused ? [] : this.of(view.game); // (refused: they are not the game)
      let side = view.to_move;
      let placed = 0;
      let last = null;
      for (const it of waiting) {
        const sq = QZ.RecordOutbox.squaresOf(it.move) || (placed === 0 ? legalMove(it.move) : null);
        if (!sq || !pieces.has(sq[0])) break;
        pieces.set(sq[1], pieces.get(sq[0]));
        pieces.delete(sq[0]);
        placed += 1;
        last = sq[0] + sq[1];
        side = side === "red" ? "black" : "red";
      }
      return { waiting: waiting.length, placed, side, last };
    }
  };
})();
