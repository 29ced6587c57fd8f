// The per-move time chart: seconds used per move for each side, as inline SVG (no library).
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    return el;
  }

  // moves: [{move, side, used_ms}]; draws into `box` (replacing what was there).
  QZ.drawChart = function (box, moves) {
    box.textContent = "";
    if (!moves.length) {
      box.append(QZ.el("p", { class: "empty", text: QZ.t("chart.empty") }));
      return;
    }
    const W = 800, H = 320, L = 52, R = 16, T = 16, B = 40;
    const maxMove = Math.max(...moves.map((m) => m.move), 1);
    const maxS = Math.max(10, ...moves.map((m) => m.used_ms / 1000));
    const step = niceStep(maxS / 5);
    const top = Math.ceil(maxS / step) * step;
    const x = (mv) => L + ((mv - 0.5) / maxMove) * (W - L - R);
    const y = (s) => T + (1 - s / top) * (H - T - B);
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img",
      "aria-label": QZ.t("chart.title") });
    for (let s = 0; s <= top + 1e-9; s += step) {
      root.append(svg("line", { x1: L, x2: W - R, y1: y(s), y2: y(s), class: "grid-line" }));
      root.append(svg("text", { x: L - 6, y: y(s) + 4, class: "axis", "text-anchor": "end" }, String(Math.round(s))));
    }
    const xStep = Math.max(1, niceStep(maxMove / 10));
    for (let mv = xStep; mv <= maxMove; mv += xStep)
      root.append(svg("text", { x: x(mv), y: H - B + 16, class: "axis", "text-anchor": "middle" }, String(mv)));
    root.append(svg("text", { x: W - R, y: H - 4, class: "axis", "text-anchor": "end" }, QZ.t("chart.move")));
    root.append(svg("text", { x: 4, y: T + 4, class: "axis" }, QZ.t("chart.seconds")));
    const barW = Math.max(1, ((W - L - R) / maxMove) * 0.4);
    for (const side of ["red", "black"]) {
      const pts = moves.filter((m) => m.side === side).sort((a, b) => a.move - b.move);
      const dx = side === "red" ? -barW / 2 : barW / 2;
      for (const m of pts) {
        const s = m.used_ms / 1000;
        root.append(svg("rect", { x: x(m.move) + dx - barW / 2, y: y(s), width: barW, height: Math.max(0.5, y(0) - y(s)),
          class: "bar " + side, "data-move": m.move, "data-side": side, "data-used": m.used_ms }));
      }
    }
    box.append(root);
  };

  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    for (const f of [1, 2, 5, 10]) if (raw <= f * p) return f * p;
    return 10 * p;
  }
})();
