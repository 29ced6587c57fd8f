// A xiangqi position drawn from the station's FEN (issue 29): 90 cells, red at the bottom,
// Chinese glyphs (the WXF letters in English), the last move's squares marked. No rules here:
// the station sends the position and the notation. Used by the board page and the hall screen.
"use strict";
(function () {
  const QZ = window.QZ;
  const GLYPHS = { K: "帅", A: "仕", B: "相", N: "马", R: "车", C: "炮", P: "兵",
                   k: "将", a: "士", b: "象", n: "马", r: "车", c: "炮", p: "卒" };
  const LETTERS = { K: "K", A: "A", B: "E", N: "H", R: "R", C: "C", P: "P" };
  const FILES = "abcdefghi";

  // The 90 cells of a diagram in `box` (row 0 is black's back rank, as in the FEN).
  QZ.xqCells = function (box) {
    box.setAttribute("translate", "no");
    for (let i = 0; i < 90; i++)
      box.append(QZ.el("span", { class: "cell", "data-r": String(Math.floor(i / 9)), "data-c": String(i % 9) }));
  };

  // ICCS "h2e2" -> the cell index of its source and target (-1 when not a move).
  function squares(iccs) {
    if (typeof iccs !== "string" || !/^[a-i][0-9][a-i][0-9]$/.test(iccs)) return [-1, -1];
    const at = (f, r) => (9 - Number(r)) * 9 + FILES.indexOf(f);
    return [at(iccs[0], iccs[1]), at(iccs[2], iccs[3])];
  }

  // Draw `fen` into the cells of `box`, marking `lastIccs`; writes only the cells that change.
  // False when the FEN is not a position.
  QZ.xqDraw = function (box, fen, lastIccs) {
    if (typeof fen !== "string") return false;
    const rows = fen.split(" ")[0].split("/");
    if (rows.length !== 10) return false;
    const en = QZ.lang === "en";
    const [from, to] = squares(lastIccs);
    const cells = box.children;
    const put = (i, text, cls) => {
      const cell = cells[i];
      if (!cell) return;
      const klass = "cell" + (cls ? " " + cls : "") + (i === from ? " from" : "") + (i === to ? " last" : "");
      if (cell.textContent !== text) cell.textContent = text;
      if (cell.className !== klass) cell.className = klass;
    };
    rows.forEach((row, r) => {
      let c = 0;
      for (const ch of row) {
        if (ch >= "1" && ch <= "9") {
          for (let k = 0; k < Number(ch) && c < 9; k++, c++) put(r * 9 + c, "", "");
        } else if (c < 9) {
          put(r * 9 + c++, (en ? LETTERS[ch.toUpperCase()] : GLYPHS[ch]) || "", ch === ch.toUpperCase() ? "red" : "black");
        }
      }
    });
    return true;
  };

  // A move's text in the page's language: Chinese notation, WXF in English.
  QZ.xqMove = function (m) { return m ? String((QZ.lang === "en" ? m.wxf : m.chinese) || "") : ""; };
})();
