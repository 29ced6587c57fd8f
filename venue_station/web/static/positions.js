// The hall screen's top boards' game records (issue 29): for the first `count` boards of the
// screen that have a recorded move, a compact diagram (xq.js: Chinese glyphs, red at the
// bottom, the last move marked) and the last move in Chinese notation (WXF in English). Fed by
// the SSE `record` events; a diagram is written only when its record changed, and nothing here
// touches the cards.
"use strict";
(function () {
  const QZ = window.QZ;

  QZ.Positions = class {
    constructor(box, count) {
      this.box = box;
      this.count = count;
      this.top = [];
      this.items = new Map(); // board -> {el, head, xq, last, view, key}
      this.games = new Map(); // board -> the game on its clock
    }

    // The screen's boards in order: the first `count` are its top boards.
    boards(list) {
      const top = list.slice(0, this.count);
      if (top.join(",") === this.top.join(",")) return;
      const fresh = top.filter((b) => !this.top.includes(b));
      this.top = top;
      for (const [b, it] of this.items) if (!top.includes(b)) { it.el.remove(); this.items.delete(b); }
      this.order();
      for (const b of fresh) this.fetch(b);
    }

    // The stream is connected again: what was recorded while the screen was cut off is read.
    refresh() { for (const b of this.top) this.fetch(b); }

    // A board's clock plays `game`: a top board's record is read again when it changes.
    game(board, game) {
      if (!game || this.games.get(board) === game) return;
      const had = this.games.has(board);
      this.games.set(board, game);
      if (had && this.top.includes(board)) this.fetch(board);
    }

    async fetch(board) {
      const game = this.games.get(board);
      const url = "/api/records/" + encodeURIComponent(board) + (game ? "?game=" + encodeURIComponent(game) : "");
      try {
        const r = await fetch(url);
        if (r.ok) this.record(await r.json());
      } catch (e) { /* the stream's next record event draws it */ }
    }

    // A record view (GET /api/records/{board} or the `record` event).
    record(d) {
      if (!d || !this.top.includes(d.board) || !Array.isArray(d.moves)) return;
      const game = this.games.get(d.board);
      if (game && d.game !== game) return;
      let it = this.items.get(d.board);
      // A read answered after a newer record came on the stream: keep the newer one.
      if (it && it.view && it.view.game === d.game && d.updated_ms < it.view.updated_ms) return;
      if (!d.moves.length) {
        if (it && !it.el.hidden) { it.el.hidden = true; it.key = ""; this.showBox(); }
        return;
      }
      if (!it) { it = this.make(d.board); this.items.set(d.board, it); this.order(); }
      const key = d.game + "|" + d.moves.length + "|" + d.fen;
      if (key === it.key) return;
      it.view = d;
      it.key = key;
      this.draw(it);
      if (it.el.hidden) { it.el.hidden = false; this.showBox(); }
    }

    make(board) {
      const head = QZ.el("h3", {});
      const xq = QZ.el("div", { class: "xq" });
      QZ.xqCells(xq);
      const last = QZ.el("p", { class: "last-move", translate: "no" });
      const el = QZ.el("section", { class: "pos", "data-board": board, hidden: "" }, head, xq, last);
      return { el, head, xq, last, view: null, key: "" };
    }

    draw(it) {
      const v = it.view;
      const m = v.moves[v.moves.length - 1];
      const head = QZ.t("pos.head", { n: v.board });
      if (it.head.textContent !== head) it.head.textContent = head;
      QZ.xqDraw(it.xq, v.fen, m && m.iccs);
      const text = QZ.xqMove(m);
      if (it.last.textContent !== text) it.last.textContent = text;
      const side = m && m.side === "black" ? "last-move black" : "last-move red";
      if (it.last.className !== side) it.last.className = side;
      it.el.dataset.ply = String(v.moves.length);
    }

    // The language changed: every shown diagram again.
    redraw() { for (const it of this.items.values()) if (it.view) this.draw(it); }

    order() {
      const wanted = this.top.filter((b) => this.items.has(b)).map((b) => this.items.get(b).el);
      const current = [...this.box.children];
      if (wanted.length !== current.length || wanted.some((el, i) => el !== current[i])) this.box.replaceChildren(...wanted);
      this.showBox();
    }

    showBox() {
      const any = [...this.items.values()].some((it) => !it.el.hidden);
      if (this.box.hidden === any) this.box.hidden = !any;
    }
  };
})();
