// The hall screen's page layers (issue 30): the page on the screen (#grid) and, stacked in the
// same place and covered by it, the next page (#grid-next), built a card or two an animation
// frame before its turn. The turn swaps the two layers' z-index: both are painted already, so
// no card is styled, laid out or painted in that frame (drawing 40 cards at once took 115–313
// ms on a CPU slowed 4×, docs/benchmarks.md). After the turn the old page is taken out of the
// covered layer the same way, a few cards a frame, so in between turns nothing is drawn twice.
// On a fitted screen each card sits in a slot (the grid's cell): chromium never lays out a grid
// item on its own, but a card with `contain: strict` inside a slot is a layout boundary, so a
// tick lays out that card alone.
"use strict";
(function () {
  const QZ = window.QZ;
  const GAP = 6; // px between cards (style.css, body.fit .grid)
  const REMOVE_PER_FRAME = 4; // cards of the old page taken out of the covered layer a frame
  const FRAME_MS = 50; // a frame's spacing assumed when pacing a build to its deadline
  const SPARE_MS = 300; // a build aims to be complete this long before its turn

  QZ.PageLayers = class {
    constructor(shown, next, fit) {
      this.shown = shown;
      this.next = next;
      this.fit = fit;
      this.sizes = new Map(); // layer -> the "n|w×h" its columns were fitted for
      this.job = null; // the next page being built: {cards, holders, ready, deadline, i}
      this.frame = 0; // the animation frame of the work loop, 0 when it is not running
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
      this.job = null;
      const wanted = cards.map((c) => this.holder(c));
      const current = [...this.shown.children];
      if (wanted.length !== current.length || wanted.some((el, i) => el !== current[i])) this.shown.replaceChildren(...wanted);
      if (this.fit) this.fitTo(this.shown, cards.length);
      this.work();
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

    // Build the next page in the covered layer by `deadline` (performance.now()), paced over
    // the frames until then; `ready(card)` is called as each card goes in (the caller shows it
    // and draws its time).
    build(cards, ready, deadline) {
      if (this.fit) this.fitTo(this.next, cards.length);
      this.job = { cards, holders: cards.map((c) => this.holder(c)), ready, deadline, i: 0 };
      this.work();
    }

    // The loop of animation frames: first what the covered layer holds that the job does not
    // want (an earlier page), then the job's cards, paced to its deadline.
    work() {
      if (this.frame) return;
      const step = () => {
        this.frame = 0;
        const keep = new Set(this.job ? this.job.holders : []);
        const stale = [...this.next.children].filter((el) => !keep.has(el)).slice(0, REMOVE_PER_FRAME);
        for (const el of stale) el.remove();
        const job = this.job;
        if (!stale.length && job) {
          const left = job.holders.length - job.i;
          const frames = Math.max(1, (job.deadline - SPARE_MS - performance.now()) / FRAME_MS);
          this.advance(Math.max(1, Math.ceil(left / frames)));
        }
        if (stale.length || (job && job.i < job.holders.length)) this.frame = requestAnimationFrame(step);
      };
      this.frame = requestAnimationFrame(step);
    }

    // Put up to `count` more cards of the job in place.
    advance(count) {
      const job = this.job;
      while (job.i < job.holders.length && count-- > 0) {
        const el = job.holders[job.i], at = this.next.children[job.i];
        if (at !== el) this.next.insertBefore(el, at || null);
        job.ready(job.cards[job.i]);
        job.i += 1;
      }
    }

    // The turn: the next layer (finished now if its build has not) becomes the page on the
    // screen; the old page goes below it and is taken out a few cards a frame.
    turn(cards, ready) {
      const job = this.job;
      const same = job && job.cards.length === cards.length && job.cards.every((c, i) => c === cards[i]);
      if (!same) this.build(cards, ready, 0);
      for (const el of [...this.next.children]) if (!this.job.holders.includes(el)) el.remove();
      this.advance(Infinity);
      this.job = null;
      [this.shown, this.next] = [this.next, this.shown];
      this.shown.id = "grid";
      this.next.id = "grid-next";
      this.shown.classList.remove("next");
      this.next.classList.add("next");
      this.shown.removeAttribute("aria-hidden");
      this.next.setAttribute("aria-hidden", "true");
      this.work();
    }
  };
})();
