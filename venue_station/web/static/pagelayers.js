// The hall screen's page layers (issue 30): the page on the screen (#grid) and, stacked in the
// same place and covered by it, the next page (#grid-next), built a few cards an animation
// frame before its turn. The turn swaps the two layers' z-index: both are painted already, so
// no card is styled, laid out or painted in that frame (drawing 40 cards at once took 115–313
// ms on a CPU slowed 4×, docs/benchmarks.md). On a fitted screen each card sits in a slot (the
// grid's cell): chromium never lays out a grid item on its own, but a card with `contain:
// strict` inside a slot is a layout boundary, so a tick lays out that card alone.
"use strict";
(function () {
  const QZ = window.QZ;
  QZ.BUILD_PER_FRAME = 2; // cards made ready in the next layer per animation frame
  const GAP = 6; // px between cards (style.css, body.fit .grid)

  QZ.PageLayers = class {
    constructor(shown, next, fit) {
      this.shown = shown;
      this.next = next;
      this.fit = fit;
      this.sizes = new Map(); // layer -> the "n|w×h" its columns were fitted for
      this.job = null; // the next page being built: {cards, holders, ready, i, frame}
      next.hidden = !fit;
    }

    // The element a card sits in: on a fitted screen its slot, else the card itself.
    holder(card) {
      if (!this.fit) return card.el;
      if (!card.slot) card.slot = QZ.el("div", { class: "slot" }, card.el);
      return card.slot;
    }

    // The page on the screen holds exactly `cards`, now (a load, a resize, new boards).
    place(cards) {
      this.stop();
      const wanted = cards.map((c) => this.holder(c));
      const current = [...this.shown.children];
      if (wanted.length !== current.length || wanted.some((el, i) => el !== current[i])) this.shown.replaceChildren(...wanted);
      if (this.fit) this.fitTo(this.shown, cards.length);
    }

    // The column count that gives `n` cards the largest digits in the layer (screen.js).
    fitTo(layer, n) {
      const key = n + "|" + layer.clientWidth + "x" + layer.clientHeight;
      if (this.sizes.get(layer) === key) return;
      this.sizes.set(layer, key);
      const g = QZ.fitGrid(Math.max(1, n), layer.clientWidth, layer.clientHeight, GAP);
      layer.style.setProperty("--cols", g.cols);
      layer.style.setProperty("--rows", g.rows);
      layer.dataset.cols = g.cols;
      layer.dataset.rows = g.rows;
    }

    // Build the next page in the covered layer, BUILD_PER_FRAME cards an animation frame;
    // `ready(card)` is called as each card goes in (the caller shows it and draws its time).
    build(cards, ready) {
      this.stop();
      if (this.fit) this.fitTo(this.next, cards.length);
      this.job = { cards, holders: cards.map((c) => this.holder(c)), ready, i: 0, frame: 0 };
      const keep = new Set(this.job.holders);
      // What the layer still holds of an earlier page is covered: it goes in one step.
      for (const el of [...this.next.children]) if (!keep.has(el)) el.remove();
      const job = this.job;
      const step = () => {
        job.frame = this.advance(QZ.BUILD_PER_FRAME) ? 0 : requestAnimationFrame(step);
      };
      this.job.frame = requestAnimationFrame(step);
    }

    // Put up to `count` more cards of the job in place; true when the page is complete (the job
    // is kept: the turn finds its page built).
    advance(count) {
      const job = this.job;
      while (job.i < job.holders.length && count-- > 0) {
        const el = job.holders[job.i], at = this.next.children[job.i];
        if (at !== el) this.next.insertBefore(el, at || null);
        job.ready(job.cards[job.i]);
        job.i += 1;
      }
      return job.i >= job.holders.length;
    }

    stop() {
      if (this.job && this.job.frame) cancelAnimationFrame(this.job.frame);
      this.job = null;
    }

    // The turn: the next layer (finished now if its build has not) becomes the page on the
    // screen; the old one goes below it, its cards left there (not ticking) until the next build.
    turn(cards, ready) {
      const job = this.job;
      const same = job && job.cards.length === cards.length && job.cards.every((c, i) => c === cards[i]);
      if (!same) this.build(cards, ready);
      this.advance(Infinity);
      this.stop();
      [this.shown, this.next] = [this.next, this.shown];
      this.shown.id = "grid";
      this.next.id = "grid-next";
      this.shown.classList.remove("next");
      this.next.classList.add("next");
      this.shown.removeAttribute("aria-hidden");
      this.next.setAttribute("aria-hidden", "true");
    }
  };
})();
