"""Pairings and players from CSV (UTF-8, header required), with errors naming the line.

Pairings: ``round,board,red,black``; players: ``name[,club][,rating][,tags]`` (tags separated
by spaces, ``;`` or ``|``: the standings' groups, e.g. ``u14 local``). A UTF-8 BOM (Excel)
is accepted; names are stripped of surrounding spaces and kept otherwise as written (Chinese
names are the norm).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection
from dataclasses import dataclass

from clock_service.text_rule import control_at
from venue_station.errors import PairingsError
from wire_contract.topics import ID_PATTERN

__all__ = ["Pairing", "control_at", "parse_pairings", "parse_players"]

_BOARD_RE = re.compile(ID_PATTERN)  # a board id as the wire contract has it
PAIRING_HEADER = ["round", "board", "red", "black"]


@dataclass(frozen=True)
class Pairing:
    round: int
    board: str
    red: str
    black: str
    line: int


def _text(data: str | bytes, source: str, *, gbk: bool = False) -> str:
    if isinstance(data, bytes):
        raw = data
        try:
            data = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if gbk:  # Excel's "CSV (逗号分隔)" on Chinese Windows writes GBK (an organiser's file)
                try:
                    return raw.decode("gb18030")
                except UnicodeDecodeError:
                    pass
            raise PairingsError(
                source,
                0,
                f"not UTF-8 (byte {exc.start}); save the file as UTF-8",
                code="encoding",
            ) from None
    return data.removeprefix("\ufeff")


def _rows(text: str, source: str) -> list[tuple[int, list[str]]]:
    """Non-blank rows with their line; a cell with a control character is refused naming the
    line, the column (1-based, with its header name) and the character's position."""
    reader = csv.reader(io.StringIO(text))
    out: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if not row or not any(cell.strip() for cell in row):
                continue
            cells = [cell.strip() for cell in row]
            names = out[0][1] if out else cells
            for col, cell in enumerate(cells, 1):
                at = control_at(cell)
                if at is not None:
                    name = names[col - 1] if col <= len(names) and out else f"column {col}"
                    raise PairingsError(
                        source,
                        reader.line_num,
                        f"column {col} ({name}): control character "
                        f"U+{ord(cell[at - 1]):04X} at position {at}; names are plain text",
                    )
            out.append((reader.line_num, cells))
    except csv.Error as exc:
        raise PairingsError(source, reader.line_num, f"not valid CSV: {exc}") from None
    return out


def parse_pairings(
    data: str | bytes, *, source: str = "pairings.csv", players: Collection[str] | None = None
) -> list[Pairing]:
    """Parse and check a pairings file; ``players`` (when given) is the list names must be in."""
    rows = _rows(_text(data, source), source)
    if not rows:
        raise PairingsError(source, 1, "empty file; expected the header round,board,red,black")
    line, header = rows[0]
    if [h.lower() for h in header] != PAIRING_HEADER:
        raise PairingsError(
            source, line, f"header must be round,board,red,black, not {','.join(header)!r}"
        )
    out: list[Pairing] = []
    seen_board: dict[tuple[int, str], int] = {}
    seen_player: dict[tuple[int, str], int] = {}
    for line, row in rows[1:]:
        if len(row) != 4:
            raise PairingsError(
                source, line, f"expected 4 fields (round,board,red,black), got {len(row)}"
            )
        round_text, board, red, black = row
        if not (round_text.isascii() and round_text.isdigit()) or not 1 <= int(round_text) <= 99:
            raise PairingsError(source, line, f"round {round_text!r} is not a number from 1 to 99")
        round_no = int(round_text)
        if not _BOARD_RE.match(board):
            raise PairingsError(source, line, f"board {board!r} must be 1-32 of A-Z a-z 0-9 _ -")
        for side, name in (("red", red), ("black", black)):
            if not name:
                raise PairingsError(source, line, f"{side} player is empty")
            if len(name) > 64:
                raise PairingsError(
                    source, line, f"{side} player name is longer than 64 characters"
                )
            if players is not None and name not in players:
                raise PairingsError(
                    source, line, f"unknown player {name!r} ({side}): not in the player list"
                )
            if (round_no, name) in seen_player:
                first = seen_player[(round_no, name)]
                raise PairingsError(
                    source,
                    line,
                    f"player {name!r} is already paired in round {round_no} (line {first})",
                )
            seen_player[(round_no, name)] = line
        if (round_no, board) in seen_board:
            first = seen_board[(round_no, board)]
            raise PairingsError(
                source, line, f"duplicate board {board} in round {round_no} (first on line {first})"
            )
        seen_board[(round_no, board)] = line
        out.append(Pairing(round_no, board, red, black, line))
    if not out:
        raise PairingsError(source, rows[0][0], "no pairings after the header")
    return out


# An organiser's words for the columns and the groups (the pairing page's own label says
# 姓名、单位、等级分、组别): 少儿 / 女子 / 本地 were taken as tags of their own and counted in no
# group (an outsider organiser).
_HEADER_WORDS = {"姓名": "name", "棋手": "name", "单位": "club", "俱乐部": "club",
                 "等级分": "rating", "组别": "tags", "标签": "tags"}  # fmt: skip
_TAG_WORDS = {"少儿": "u14", "14岁以下": "u14", "女子": "women", "女": "women", "本地": "local",
              "大师": "master"}  # fmt: skip


def parse_players(data: str | bytes, *, source: str = "players.csv") -> list[dict[str, object]]:
    """``name[,club][,rating][,tags]`` rows as dicts for the players table."""
    # (a full-width comma, as a Chinese keyboard types it, separates as a comma does)
    rows = _rows(_text(data, source, gbk=True).replace("，", ","), source)
    if not rows:
        raise PairingsError(source, 1, "empty file; expected a header with 'name'", code="empty")
    line, header = rows[0]
    cols = [_HEADER_WORDS.get(h, h.lower()) for h in header]
    if (
        not cols
        or cols[0] != "name"
        or not set(cols) <= {"name", "club", "rating", "tags"}
        or len(set(cols)) != len(cols)
    ):
        raise PairingsError(
            source, line, f"header must be name[,club][,rating][,tags], not {','.join(header)!r}",
            code="header",
        )  # fmt: skip
    out: list[dict[str, object]] = []
    seen: dict[str, int] = {}
    # Two players of the same name are told apart as the TRF import does, by their number in
    # the file: 张伟 (3), 张伟 (7) — the station's player keys (docs/station.md).
    names = [r[cols.index("name")] if len(r) == len(cols) else "" for _, r in rows[1:]]
    repeated = {n for n in names if n and names.count(n) > 1}
    same_club: dict[tuple[str, str], int] = {}  # (name, club) -> its first line
    for number, (line, row) in enumerate(rows[1:], 1):
        if len(row) == len(cols) and "club" in cols:
            # the same name from the same club twice is one player's row repeated (an outsider
            # organiser's 洪智 ×2 became two players, for good), not two namesakes
            key = (row[0], row[cols.index("club")])
            if key[1] and key in same_club:
                raise PairingsError(
                    source, line, f"player {key[0]!r} of {key[1]!r} listed twice "
                    f"(first on line {same_club[key]})", code="twice", name=key[0],
                    first=same_club[key],
                )  # fmt: skip
            same_club.setdefault(key, line)
        if len(row) != len(cols):
            raise PairingsError(
                source, line, f"expected {len(cols)} fields, got {len(row)}",
                code="fields", expected=len(cols), got=len(row),
            )  # fmt: skip
        rec: dict[str, object] = dict(zip(cols, row, strict=True))
        name = str(rec["name"])
        if not name or len(name) > 64:
            raise PairingsError(source, line, "name must be 1 to 64 characters", code="name")
        if name in repeated:
            name = rec["name"] = f"{name} ({number})"
            if len(name) > 64:
                raise PairingsError(source, line, "name must be 1 to 64 characters", code="name")
        if name in seen:
            raise PairingsError(
                source, line, f"player {name!r} listed twice (first on line {seen[name]})",
                code="twice", name=name, first=seen[name],
            )  # fmt: skip
        seen[name] = line
        if "rating" in rec:
            rating = str(rec["rating"])
            if rating and not (rating.isascii() and rating.isdigit() and len(rating) <= 9):
                raise PairingsError(
                    source, line, f"rating {rating!r} is not a whole number",
                    code="rating", rating=rating,
                )  # fmt: skip
            rec["rating"] = int(rating) if rating else None
        if "club" in rec:
            rec["club"] = rec["club"] or None
        if "tags" in rec:
            words = re.split(r"[\s;|、/]+", str(rec["tags"]))
            tags = sorted({_TAG_WORDS.get(w.lower(), w.lower()) for w in words} - {""})
            if any(len(tag) > 32 for tag in tags) or len(" ".join(tags)) > 255:
                raise PairingsError(
                    source, line, "tags: each at most 32 characters, 255 in all", code="tags"
                )
            rec["tags"] = " ".join(tags) or None
        out.append(rec)
    return out
