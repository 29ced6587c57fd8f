"""Move notation: Chinese (炮二平五), WXF (C2.5) and ICCS (h2e2), written and read.

Writing follows docs/records.md (the xqbase conventions): red numbers files 一..九 from red's right,
black １..９ (full-width) from black's right; 前/后 (中 for three pawns, 一..五 for four or five)
replace the file for two pieces of a kind on one file. Reading never has its own grammar: the
legal moves of the position are rendered in every accepted spelling, folded the same way as the
input (glyph variants, numerals, WXF dialects), and the input must match exactly one of them.
So the reader cannot drift from the writer, and a typo gets the candidates in its error.
"""

from __future__ import annotations

import re

from clock_service.errors import ClockServiceError
from clock_service.side import Side
from clock_service.xiangqi.board import IllegalMove, Move, Position

__all__ = ["NotationError", "chinese", "parse_move", "wxf"]

_RED_NUMERALS = "一二三四五六七八九"
_BLACK_NUMERALS = "１２３４５６７８９"
_AS_RED = str.maketrans("123456789１２３４５６７８９", _RED_NUMERALS * 2)
_NAMES = {
    "K": "帅", "A": "仕", "B": "相", "N": "马", "R": "车", "C": "炮", "P": "兵",
    "k": "将", "a": "士", "b": "象", "n": "马", "r": "车", "c": "炮", "p": "卒",
}  # fmt: skip
_WXF_LETTERS = {"k": "K", "a": "A", "b": "E", "n": "H", "r": "R", "c": "C", "p": "P"}
_CHINESE_DIRECTION = {"+": "进", "-": "退", ".": "平"}
_PAWN_ORDINALS = "一二三四五"
# One spelling per glyph, so that 車/俥, 馬/傌, 砲/包, 將/帥, 進, 後 and the other side's piece
# names (士/仕, 象/相, 将/帅, 卒/兵) all read alike; the side to move decides whose piece it is.
_FOLD = str.maketrans(
    {
        "車": "车", "俥": "车", "馬": "马", "傌": "马", "砲": "炮", "包": "炮",
        "帥": "帅", "將": "帅", "将": "帅", "士": "仕", "象": "相", "卒": "兵",
        "進": "进", "上": "进", "下": "退", "後": "后",
        **{c: str(i + 1) for i, c in enumerate(_RED_NUMERALS)},
        **{c: str(i + 1) for i, c in enumerate(_BLACK_NUMERALS)},
        "＋": "+", "－": "-", "．": ".", "＝": "=",
    }
)  # fmt: skip
_ICCS = re.compile(r"^[a-i][0-9]-?[a-i][0-9]$", re.IGNORECASE)
_WXF_PREFIXED = re.compile(r"^([fb+\-])([KAEBHNRCPkaebhnrcp])(.*)$")
_SPACES = re.compile(r"[\s\u3000]+")
_ANNOTATION_TAIL = "+#!?！？"


class NotationError(ClockServiceError, ValueError):
    """A move text that is not one legal move here; the message says why and lists candidates."""


def _file_number(file: int, red: bool) -> int:
    """1..9 counted from the mover's right."""
    return 9 - file if red else file + 1


def _numeral(number: int, red: bool) -> str:
    return (_RED_NUMERALS if red else _BLACK_NUMERALS)[number - 1]


class _Parts:
    """The facts about one move that every notation is written from."""

    def __init__(self, position: Position, move: Move) -> None:
        piece = position.squares[move.source]
        if piece is None:
            raise IllegalMove(f"no piece on {move.iccs[:2]}")
        self.piece = piece
        self.red = piece.isupper()
        self.kind = piece.lower()
        file, rank = move.source % 9, move.source // 9
        to_file, to_rank = move.target % 9, move.target // 9
        forward = (to_rank - rank) if self.red else (rank - to_rank)
        self.direction = "." if forward == 0 else ("+" if forward > 0 else "-")
        self.file = _file_number(file, self.red)
        self.last = (
            _file_number(to_file, self.red) if self.kind in "nab" or forward == 0 else abs(forward)
        )
        # The same pieces on this file, the front one (nearest the opponent) first.
        ranks = [r for r in range(10) if position.squares[r * 9 + file] == piece]
        self.column = sorted(ranks, reverse=self.red)
        self.index = self.column.index(rank)
        files_doubled = [
            f for f in range(9) if sum(position.squares[r * 9 + f] == piece for r in range(10)) > 1
        ]
        self.files_doubled = sorted(files_doubled, key=lambda f: _file_number(f, self.red))
        self.tandem = len(self.column) > 1 and self.kind not in "kab"

    def tag(self) -> str:
        """前/后, 前/中/后, or the xqbase ordinal 一..五 for four or five pawns on one file."""
        count = len(self.column)
        if count == 2:
            return "前后"[self.index]
        if count == 3:
            return "前中后"[self.index]
        return _PAWN_ORDINALS[self.index]

    def wxf_tag(self) -> str:
        count, index = len(self.column), self.index
        if count == 2:
            return "+-"[index]
        if count == 3:
            return ("+", str(self.file), "-")[index]
        if count == 4:
            return ("++", "+", "-", "--")[index]
        return ("++", "+", str(self.file), "-", "--")[index]


def chinese(position: Position, move: Move) -> str:
    """The move in Chinese notation as written on a score sheet: 炮二平五, 马８进７, 前车退二."""
    parts = _Parts(position, move)
    name = _NAMES[parts.piece]
    tail = _CHINESE_DIRECTION[parts.direction] + _numeral(parts.last, parts.red)
    if not parts.tandem:
        return name + _numeral(parts.file, parts.red) + tail
    if parts.kind == "p" and len(parts.files_doubled) > 1:
        return parts.tag() + _numeral(parts.file, parts.red) + tail  # 前九平八
    return parts.tag() + name + tail


def wxf(position: Position, move: Move) -> str:
    """The move in WXF notation: C2.5, H8+7, R+.3, P3.4 (the middle of three pawns)."""
    parts = _Parts(position, move)
    letter = _WXF_LETTERS[parts.kind]
    tail = parts.direction + str(parts.last)
    if not parts.tandem:
        return f"{letter}{parts.file}{tail}"
    if parts.kind == "p" and len(parts.files_doubled) > 1:
        return f"{parts.file}{parts.wxf_tag()}{tail}"  # 3+.4, 33.4, 3-.4
    tag = parts.wxf_tag()
    return (tag if len(tag) == 2 else letter + tag) + tail


def _fold(text: str) -> str:
    """The input in the folded alphabet the spellings are written in."""
    text = _SPACES.sub("", text).translate(_FOLD)
    if text.isascii():
        prefixed = _WXF_PREFIXED.match(text)
        if prefixed:  # fR-2, bR-2, +R-2: front/back before the letter
            front = prefixed.group(1) in "f+"
            text = prefixed.group(2) + ("+" if front else "-") + prefixed.group(3)
        text = text.upper().replace("B", "E").replace("N", "H").replace("=", ".")
        if re.fullmatch(r"[A-Z][1-9][1-9]", text):  # C25: sideways with no sign
            text = text[:2] + "." + text[2:]
    return text


def _spellings(position: Position, move: Move) -> set[str]:
    """Every accepted spelling of ``move`` here, folded."""
    parts = _Parts(position, move)
    name = _fold(_NAMES[parts.piece])
    tail_zh = _fold(_CHINESE_DIRECTION[parts.direction]) + str(parts.last)
    tail_wxf = parts.direction + str(parts.last)
    letter = _WXF_LETTERS[parts.kind]
    plain = {f"{name}{parts.file}{tail_zh}", f"{letter}{parts.file}{tail_wxf}"}
    spellings = {_fold(chinese(position, move)), _fold(wxf(position, move))}
    if not parts.tandem:
        return spellings | plain
    # The plain file form also reads when only one of the pair can make the move (as
    # Fairy-Stockfish writes it); a spelling shared by two legal moves is refused as ambiguous.
    spellings |= plain
    tag = _fold(parts.tag())
    spellings.add(f"{name}{tag}{tail_zh}")  # 车前平三: the piece-first order
    spellings.add(f"{tag}{name}{parts.file}{tail_zh}")  # 前兵九平八
    spellings.add(f"{tag}{parts.file}{tail_zh}")
    if parts.kind == "p":
        count = len(parts.column)
        if count >= 4:  # Wikipedia: 前、二、三、四 and 后 for the last
            alt = "前" if parts.index == 0 else ("后" if parts.index == count - 1 else "")
            if alt:
                spellings.add(f"{alt}{name}{tail_zh}")
        if count >= 3:
            spellings.add(f"{parts.index + 1}{name}{tail_zh}")
        spellings.add(f"{parts.index + 1}{parts.file}{tail_wxf}")  # Fairy-Stockfish: 17+1
        spellings.add(f"{parts.index + 1}{name}{parts.file}{tail_zh}")
        # xqbase for two doubled files: one series from the mover's right, then front to back.
        if len(parts.files_doubled) > 1:
            series: list[int] = []
            for file in parts.files_doubled:
                ranks = [r for r in range(10) if position.squares[r * 9 + file] == parts.piece]
                series += [r * 9 + file for r in sorted(ranks, reverse=parts.red)]
            spellings.add(f"{series.index(move.source) + 1}{name}{tail_zh}")
    return spellings


def _tables(position: Position) -> tuple[dict[str, set[Move]], dict[str, set[Move]]]:
    """Folded spelling → moves: the canonical (written) forms, and every accepted form."""
    canonical: dict[str, set[Move]] = {}
    lenient: dict[str, set[Move]] = {}
    for move in position.legal_moves():
        for spelling in (chinese(position, move), wxf(position, move)):
            canonical.setdefault(_fold(spelling), set()).add(move)
        for spelling in _spellings(position, move):
            lenient.setdefault(spelling, set()).add(move)
    return canonical, lenient


def _check_numerals(position: Position, text: str, stripped: str, side: str) -> None:
    """Red writes 一..九, black １..９ or 1..9: the other side's numerals mean its move.

    Folding them together would read black's 马８进７ — or 马8进7, as a phone types it: the
    reply typed twice, a recorder a move behind — on red's turn as red's 马八进七 (an outsider
    recorder's move stored on the wrong side). So Chinese with digits is black's alone; WXF's
    digits (C2.5) are either side's. A refusal names red's own spelling when there is one.
    Black's pawn ordinals 一..五 open the move (一卒平５).
    """
    chinese_text = any("\u4e00" <= c <= "\u9fff" for c in stripped)
    if side == "red" and (
        any(c in _BLACK_NUMERALS for c in stripped)
        or (chinese_text and any(c in "123456789" for c in stripped))
    ):
        as_red = stripped.translate(_AS_RED)
        try:
            hint = f": red's own is {chinese(position, parse_move(position, as_red))}"
        except NotationError:
            hint = ""
        raise NotationError(
            f"{text!r} is written with black's numerals (1..9), a move for the other side;"
            f" it is red's move{hint}"
        )
    if side == "black" and any(c in _RED_NUMERALS for c in stripped[1:]):
        raise NotationError(
            f"{text!r} is written with red's numerals (一..九), a move for the other side;"
            " it is black's move"
        )


def parse_move(position: Position, text: str) -> Move:
    """Read one move in Chinese, WXF or ICCS; raises ``NotationError`` saying why it is refused."""
    stripped = _SPACES.sub("", text)
    if not stripped:
        raise NotationError("empty move")
    if _ICCS.match(stripped):
        move = Move.from_iccs(stripped)
        if not position.is_legal(move):
            raise NotationError(f"{text!r} is not legal: {position.explain_illegal(move)}")
        return move
    side = "red" if position.to_move is Side.RED else "black"
    _check_numerals(position, text, stripped, side)
    folded = _fold(stripped)
    canonical, lenient = _tables(position)
    while folded and folded[-1] in _ANNOTATION_TAIL and folded not in lenient:
        folded = _fold(stripped := stripped[:-1])  # a check mark or !? after the move
    # The written forms win over the lenient ones: P7.6 is the middle of three pawns on file 7.
    matches = canonical.get(folded) or lenient.get(folded, set())
    if len(matches) == 1:
        return next(iter(matches))
    if matches:
        names = ", ".join(sorted(chinese(position, m) for m in matches))
        raise NotationError(f"{text!r} is ambiguous here: it could be {names}")
    other = Position(
        squares=position.squares, to_move=position.to_move.other, halfmove_clock=0, fullmove=1
    )
    for move in other.legal_moves():
        if folded in _spellings(other, move):
            raise NotationError(f"{text!r} is a move for the other side; it is {side}'s move")
    raise NotationError(f"{text!r} is not a legal move for {side} here")
