"""The published game the record tests enter: 柳大华 vs 杨官璘, 1982 全国赛 (docs/records.md),
from tests/xiangqi/data/liu_dahua_yang_guanlin_1982.pgn — its Chinese score sheet and its ICCS,
read by the test itself, and the score sheet in WXF transliterated by the test itself."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["CHINESE", "FINAL_FEN", "ICCS", "START_FEN", "as_wxf"]

DATA = Path(__file__).parents[1] / "xiangqi" / "data" / "liu_dahua_yang_guanlin_1982.pgn"
TEXT = DATA.read_text("utf-8")
CHINESE = re.findall(
    r"[\u4e00-\u9fff][\u4e00-\u9fff\uff10-\uff19][进退平][\u4e00-\u9fff\uff10-\uff19]", TEXT
)
ICCS = re.findall(r"\b[a-i][0-9][a-i][0-9]\b", TEXT)
START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
FINAL_FEN = "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b - - 16 63"
_WXF_OF = str.maketrans(
    {
        "帅": "K", "将": "K", "仕": "A", "士": "A", "相": "E", "象": "E", "马": "H",
        "车": "R", "炮": "C", "兵": "P", "卒": "P", "进": "+", "退": "-", "平": ".",
        "前": "+", "后": "-",
        **{c: str(i + 1) for i, c in enumerate("一二三四五六七八九")},
        **{c: str(i + 1) for i, c in enumerate("１２３４５６７８９")},
    }
)  # fmt: skip


def as_wxf(zh: str) -> str:
    """A move of the score sheet in WXF (后马进６ → H-+6 → -H+6 order: the letter first)."""
    text = zh.translate(_WXF_OF)
    if text[0] in "+-":
        text = text[1] + text[0] + text[2:]
    return text
