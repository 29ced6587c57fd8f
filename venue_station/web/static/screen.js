// A hall screen's choices from its address: which boards (?boards=1-40,45,A1), paging
// (?page_s=20&per_page=40), and the grid that fits a page of cards to the screen.
// The same grammar is checked in Python for the roster (broker_config/screens.py).
"use strict";
(function () {
  const QZ = window.QZ;
  const ID = /^[A-Za-z0-9_-]{1,32}$/;
  const RANGE = /^(\d{1,4})-(\d{1,4})$/;
  // Bounds (docs/web.md): 64 items, 1000 boards a range, the whole spec 512 characters.
  const MAX_ITEMS = 64, MAX_SPAN = 1000, MAX_SPEC = 512;

  // "1-40,45,A1" -> {has(board), count} or {error: {item, reason}}. Numbers compare as
  // numbers ("007" is board 7 in a range), other ids exactly.
  QZ.parseBoards = function (spec) {
    if (spec.length > MAX_SPEC) return { error: { item: 0, reason: "too_long" } };
    const items = spec.split(",").map((s) => s.trim());
    if (items.length > MAX_ITEMS) return { error: { item: MAX_ITEMS + 1, reason: "too_many" } };
    const ranges = [], ids = new Set();
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      const m = RANGE.exec(item);
      if (m) {
        const lo = Number(m[1]), hi = Number(m[2]);
        if (hi < lo) return { error: { item: i + 1, text: item, reason: "backwards" } };
        if (hi - lo + 1 > MAX_SPAN) return { error: { item: i + 1, text: item, reason: "too_wide" } };
        ranges.push([lo, hi]);
      } else if (ID.test(item)) {
        ids.add(item);
      } else {
        return { error: { item: i + 1, text: item, reason: "bad_item" } };
      }
    }
    return {
      has(board) {
        if (ids.has(board)) return true;
        if (!/^\d+$/.test(board)) return false;
        const n = Number(board);
        return ranges.some(([lo, hi]) => lo <= n && n <= hi);
      },
    };
  };

  // A whole number from the address within [low, high], else the fallback (and a warning).
  QZ.intParam = function (params, name, low, high, fallback, problems) {
    const raw = params.get(name);
    if (raw === null || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < low || n > high) {
      problems.push(QZ.t("screen.bad_param", { name, value: raw, low, high }));
      return fallback;
    }
    return n;
  };

  // The card's time digits are min(TIME_W × width, TIME_H × height) (style.css, body.fit):
  // pick the column count that makes them largest for n cards in a w × h area.
  const TIME_W = 0.17, TIME_H = 0.40, CARD_PAD_W = 16, CARD_PAD_H = 10; // padding + border
  QZ.fitGrid = function (n, width, height, gap) {
    let best = { cols: 1, rows: Math.max(1, n), digits: 0 };
    for (let cols = 1; cols <= Math.max(1, n); cols++) {
      const rows = Math.ceil(n / cols);
      const cw = (width - gap * (cols + 1)) / cols - CARD_PAD_W;
      const ch = (height - gap * (rows + 1)) / rows - CARD_PAD_H;
      const digits = Math.min(TIME_W * cw, TIME_H * ch);
      if (digits > best.digits + 0.01) best = { cols, rows, digits };
    }
    return best;
  };

  // Pages of at most `size` boards, in board order.
  QZ.pages = function (boards, size) {
    const out = [];
    for (let i = 0; i < boards.length; i += size) out.push(boards.slice(i, i + size));
    return out.length ? out : [[]];
  };
})();
