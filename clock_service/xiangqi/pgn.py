"""Xiangqi PGN: the xqbase file format with ``[Game "Chinese Chess"]`` first (docs/records.md).

The writer puts the moves in ICCS (``[Format "ICCS"]``, which every xiangqi reader switches on)
and each move's Chinese notation with its clock in the comment after it,
``1. h2e2 {炮二平五 [%clk 1:29:52]}``, so a Chinese reader shows the score sheet and a program
reads exact squares. It can also write the Chinese movetext itself (no Format tag). The reader
takes either, WXF too, and one file of many games.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from clock_service.errors import ClockServiceError
from clock_service.handicap import Handicap
from clock_service.side import Side
from clock_service.xiangqi.board import START_FEN, FenError, IllegalMove
from clock_service.xiangqi.notation import NotationError
from clock_service.xiangqi.record import PlyClock, Record

__all__ = ["PgnError", "PgnGame", "format_clock", "read_pgn", "write_pgn"]

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_FIRST_TAGS = ("Game", "Event", "Site", "Date", "Round", "Red", "Black", "Result")
_TAG = re.compile(r'^\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]\s*$')
_CLOCK = re.compile(r"\[%(clk|emt)\s+(\d+):(\d{1,2}):(\d{1,2})(?:\.(\d+))?\]")
_MOVE_NUMBER = re.compile(r"^\d+\s*[.．]+")
_TOKEN = re.compile(r"\{[^}]*\}|\([^()]*\)|\$\d+|[^\s{}()\u3000]+")


class PgnError(ClockServiceError, ValueError):
    """A PGN that cannot be read; the message names the game and the move."""


@dataclass(frozen=True, slots=True)
class PgnGame:
    tags: Mapping[str, str]
    record: Record
    clocks: tuple[PlyClock | None, ...] = field(default=())
    result: str = "*"


def format_clock(ms: int) -> str:
    """``h:mm:ss`` as the PGN clock supplement writes it (whole seconds, rounded down)."""
    seconds = max(ms, 0) // 1000
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def write_pgn(
    record: Record,
    *,
    tags: Mapping[str, str] | None = None,
    clocks: Sequence[PlyClock | None] = (),
    result: str = "*",
    movetext: str = "iccs",
) -> str:
    """One game as xiangqi PGN; ``movetext`` ``"iccs"`` (Chinese in comments) or ``"chinese"``."""
    if result not in RESULTS:
        raise ValueError(f"result must be one of {', '.join(RESULTS)}, not {result!r}")
    if movetext not in ("iccs", "chinese"):
        raise ValueError(f"movetext must be 'iccs' or 'chinese', not {movetext!r}")
    if len(clocks) > len(record.moves):
        raise ValueError(f"{len(clocks)} clock readings for {len(record.moves)} moves")
    given = dict(tags or {})
    given.pop("Game", None)
    given.pop("FEN", None)
    given.pop("Format", None)
    given["Result"] = result
    lines = ['[Game "Chinese Chess"]']
    for name in _FIRST_TAGS[1:]:
        if name in given:
            lines.append(f'[{name} "{_escape(given.pop(name))}"]')
    for name, value in given.items():
        lines.append(f'[{name} "{_escape(value)}"]')
    if record.start_fen.split()[:2] != START_FEN.split()[:2]:
        lines.append(f'[FEN "{record.start_fen}"]')
    if record.handicap is not None:  # 让二先: the receiver's first moves in a row
        lines.append(f'[Handicap "{record.handicap.receiver.value} {record.handicap.moves}"]')
    if movetext == "iccs":
        lines.append('[Format "ICCS"]')
    lines.append("")
    chinese = record.chinese()
    positions = record.positions()
    number = record.start.fullmove
    body: list[str] = []
    line = ""
    for ply, move in enumerate(record.moves):
        # numbered by who moved (a 让二先 receiver moves twice in a row): a red move opens a
        # number, and so does a black one after black's own (or the first ply)
        red_ply = positions[ply].to_move.value == "red"
        if red_ply or ply == 0 or positions[ply - 1].to_move.value == "black":
            if line:
                body.append(line)
            line = f"{number}." + (" ..." if not red_ply else "")
        elif line:
            # black's answer on a line of its own: cchess's reader takes one move a line after
            # the number (it read none of "1. h2e2 {…} h9g7 {…}": an outsider); PGN is indifferent
            body.append(line)
            line = ""
        text = move.iccs if movetext == "iccs" else chinese[ply]
        comment: list[str] = [chinese[ply]] if movetext == "iccs" else []
        clock = clocks[ply] if ply < len(clocks) else None
        if clock is not None:
            comment.append(f"[%clk {format_clock(clock.left_ms)}]")
            if clock.used_ms is not None:
                comment.append(f"[%emt {format_clock(clock.used_ms)}]")
        line += (" " if line else "") + text + (f" {{{' '.join(comment)}}}" if comment else "")
        if not red_ply or positions[ply + 1].to_move.value == "red":
            number += 1
    if line:
        body.append(line)
    body.append(result)
    return "\n".join(lines + body) + "\n"


def _clock_from(comment: str) -> PlyClock | None:
    readings: dict[str, int] = {}
    for kind, hours, minutes, seconds, _fraction in _CLOCK.findall(comment):
        readings[kind] = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1000
    if "clk" not in readings:
        return None
    return PlyClock(left_ms=readings["clk"], used_ms=readings.get("emt"))


def _decode(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("gb18030")  # older Chinese files are GB2312/GBK


def _read_game(number: int, tags: dict[str, str], movetext: str) -> PgnGame:
    try:
        record = Record(start_fen=tags.get("FEN", START_FEN), handicap=_handicap(tags))
    except (FenError, ValueError) as error:
        raise PgnError(f"game {number}: bad FEN or Handicap tag: {error}") from None
    clocks: list[PlyClock | None] = []
    result = tags.get("Result", "*")
    for token in _TOKEN.findall(movetext):
        if token.startswith("{"):
            if record.moves and len(clocks) == len(record.moves):
                clock = _clock_from(token)
                if clock is not None:
                    clocks[-1] = clock
            continue
        if token.startswith(("(", "$")):
            continue  # variations and NAGs are not the game
        if token in RESULTS:
            result = token
            continue
        token = _MOVE_NUMBER.sub("", token)
        if not token or set(token) <= set(".…．") or token == "……":
            continue
        try:
            record = record.play(token)
        except (NotationError, IllegalMove) as error:
            ply = len(record.moves) + 1
            raise PgnError(f"game {number}, ply {ply}: {error}") from None
        clocks.append(None)
    while clocks and clocks[-1] is None:
        clocks.pop()
    return PgnGame(tags=tags, record=record, clocks=tuple(clocks), result=result)


def _handicap(tags: Mapping[str, str]) -> Handicap | None:
    """``[Handicap "red 2"]`` (this writer's tag): the receiver and its moves in a row."""
    text = tags.get("Handicap")
    if text is None:
        return None
    receiver, _, moves = text.strip().partition(" ")
    if not moves.isdigit():
        raise ValueError(f"Handicap must read '<red|black> <moves>', not {text!r}")
    return Handicap(Side.parse(receiver), int(moves))


def read_pgn(data: bytes | str) -> list[PgnGame]:
    """Every game in a PGN file (UTF-8, or GB18030 as older Chinese files are)."""
    text = _decode(data)
    games: list[PgnGame] = []
    tags: dict[str, str] = {}
    movetext: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and not line.startswith("[%"):
            if "".join(movetext).strip():  # a tag after movetext starts the next game
                games.append(_read_game(len(games) + 1, tags, "\n".join(movetext)))
                tags, movetext = {}, []
            match = _TAG.match(line)
            if match is None:
                raise PgnError(f"game {len(games) + 1}: not a tag line: {line!r}")
            tags[match.group(1)] = match.group(2).replace('\\"', '"').replace("\\\\", "\\")
        else:
            movetext.append(raw)
    if tags or "".join(movetext).strip():
        games.append(_read_game(len(games) + 1, tags, "\n".join(movetext)))
    return games
