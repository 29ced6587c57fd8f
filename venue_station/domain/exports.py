"""Exports: a round's results for the pairing software, and each game's clock log.

Times in the clock log are whole seconds, truncated (what the clock showed after the move,
never more): ``[%clk h:mm:ss]`` as in PGN clock annotations.

Every CSV cell that a spreadsheet would read as a formula (one starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) is written with a leading ``'`` (OWASP's advice on
CSV injection): a player named ``=cmd|' /C calc'!A0`` stays a name when the file is opened.
Numbers the station itself writes (points, milliseconds) are never negative, so no real value
changes.

A CSV download starts with a UTF-8 byte order mark (``with_bom``): Excel on Chinese Windows
reads a file without one in the local code page (GBK) and garbles every name.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clock_service.regulation import Regulation, Scoring
from clock_service.timecontrol import TimeControl
from venue_station.live.results import Outcome, points

__all__ = [
    "ClockRow",
    "clock_log",
    "clock_log_csv",
    "clock_log_pgn",
    "hms",
    "round_results",
    "round_results_csv",
    "round_results_json",
    "safe_cell",
    "with_bom",
]

BOM = "\ufeff"


def with_bom(text: str) -> str:
    """``text`` with the UTF-8 byte order mark Excel needs to read it as UTF-8 (once)."""
    return text if text.startswith(BOM) else BOM + text


RESULT_FIELDS = [
    "round",
    "board",
    "game",
    "red",
    "black",
    "result",
    "red_points",
    "black_points",
    "reason",
]


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` with a ``'`` in front when, as text, it starts like a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


PGN_RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


def hms(ms: int) -> str:
    """``h:mm:ss`` of a non-negative duration, truncated to whole seconds."""
    seconds = max(0, ms) // 1000
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def round_results(
    games: Iterable[tuple[Mapping[str, Any], Outcome]], scoring: Scoring
) -> list[dict[str, Any]]:
    out = []
    for game, outcome in games:
        red_pts, black_pts = points(outcome.result, scoring)
        out.append(
            {
                "round": game["round"],
                "board": game["board"],
                "game": game["game"],
                "red": game["red"],
                "black": game["black"],
                "result": outcome.result or "",
                "red_points": red_pts,
                "black_points": black_pts,
                "reason": outcome.reason or "",
            }
        )
    return out


_SYSTEM_REASONS = {  # reasons of the system's own, beside the regulation's wording
    "flag": ("超时", "flag fell"), "fouls": ("犯规满限", "foul limit reached"),
    "arbiter": ("裁判录入", "by the arbiter"), "double_forfeit": ("双方判负", "both lose"),
    "late": ("迟到", "late"), "power_switch": ("擅自关闭计时钟", "clock switched off"),
    "draw_black_wins": ("和棋黑胜", "draw: black wins"),
}  # fmt: skip


def reason_words(regulation: Regulation, lang: str) -> Callable[[str], str]:
    """A result's reason code in the regulation's words (its profile's zh/en), else the
    system's own, else the code as it is."""
    words: dict[str, str] = {c: w[1 if lang == "en" else 0] for c, w in _SYSTEM_REASONS.items()}
    for kind in ("foul", "forfeit", "result"):
        for reason in regulation.reasons(kind):
            words[reason.code] = reason.text("en" if lang == "en" else "zh")
    return lambda code: words.get(code, code)


RESULT_HEADERS = {  # ``?lang=``: the header row in the organiser's words (codes by default)
    "zh": ["轮次", "台次", "对局号", "红方", "黑方", "结果", "红方得分", "黑方得分", "原因"],
    "en": ["Round", "Board", "Game", "Red", "Black", "Result", "Red points", "Black points",
           "Reason"],
}  # fmt: skip


def round_results_csv(
    rows: Sequence[Mapping[str, Any]],
    *,
    lang: str | None = None,
    reason_words: Callable[[str], str] | None = None,
) -> str:
    """The round's results; with ``lang`` (``zh``/``en``) its header row in words and each
    reason as ``reason_words`` says it (the regulation's wording), for a wall or a spreadsheet
    (an outsider organiser found English column names and codes like ``resignation``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(RESULT_HEADERS.get(lang or "", RESULT_FIELDS))
    for row in rows:
        cells = {k: "" if row[k] is None else row[k] for k in RESULT_FIELDS}
        if reason_words is not None and cells["reason"]:
            cells["reason"] = reason_words(str(cells["reason"]))
        writer.writerow([safe_cell(cells[k]) for k in RESULT_FIELDS])
    return buf.getvalue()


def round_results_json(round_no: int, regulation: str, rows: Sequence[Mapping[str, Any]]) -> str:
    body = {"round": round_no, "regulation": regulation, "games": list(rows)}
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True)
class ClockRow:
    move: int  # the side's own move number (red's 1st, black's 1st, ...)
    side: str
    used_ms: int
    remaining_ms: int  # the mover's time after the move (increment included)


def _turns(rows: Sequence[ClockRow]) -> list[tuple[str, int | None]]:
    """The plies as a reader that takes turns reads them: a side that moves twice in a row
    (a 让二先 receiver's given moves) has the other's turn pass between, with no clock — else
    every later time went to the other player (an outsider read it with python-chess)."""
    out: list[tuple[str, int | None]] = []
    for r in rows:
        if out and out[-1][0] == r.side:
            out.append(("black" if r.side == "red" else "red", None))
        out.append((r.side, r.remaining_ms))
    return out


def pgn_date(events: Iterable[Mapping[str, Any]]) -> str | None:
    """PGN's ``Date`` of a game: the station's local date of its first event (None: none)."""
    stamps = [int(ev["ts"]) for ev in events if ev.get("ts")]
    return time.strftime("%Y.%m.%d", time.localtime(min(stamps) / 1000)) if stamps else None


def clock_log(events: Iterable[Mapping[str, Any]]) -> list[ClockRow]:
    """The moves of a game, in seq order, from its stored ``move`` events."""
    rows = []
    for ev in sorted(events, key=lambda e: int(e["seq"])):
        if ev["type"] != "move":
            continue
        side = ev["data"]["side"]
        rows.append(
            ClockRow(
                int(ev["data"]["move"]), side, int(ev["data"]["used_ms"]), int(ev[f"{side}_ms"])
            )
        )
    return rows


def clock_log_csv(rows: Iterable[ClockRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["move", "side", "used_ms", "remaining_ms", "used", "remaining"])
    for r in rows:
        writer.writerow(
            [
                r.move,
                safe_cell(r.side),
                r.used_ms,
                r.remaining_ms,
                f"{r.used_ms / 1000:.1f}",
                hms(r.remaining_ms),
            ]
        )
    return buf.getvalue()


def pgn_termination(
    result: str | None, reason: str | None, *, forfeits: Collection[str]
) -> str | None:
    """PGN's ``Termination`` of a decided game: a flag is a time forfeit, a loss under one of
    the regulation's ``forfeits`` (fouls, a switched-off clock, lateness …) or a 0:0 an
    infraction, a game played out normal."""
    if result is None:
        return None
    if reason == "flag":
        return "time forfeit"
    if result not in PGN_RESULTS or reason in forfeits:
        return "rules infraction"
    return "normal"


def pgn_tc(tc: str) -> str:
    try:
        return str(TimeControl.parse(tc).pgn())
    except Exception:  # an unknown spelling is exported as written rather than lost
        return tc


def clock_log_pgn(
    game: Mapping[str, Any],
    rows: Sequence[ClockRow],
    outcome: Outcome,
    *,
    event: str = "?",
    date: str | None = None,
) -> str:
    """PGN: the tags, then one null move ``--`` per ply with the mover's clock after it,
    ``1. -- {[%clk 0:29:52]} -- {[%clk 0:29:47]} 2. ...``, and the result. The clock does not
    know the moves, only that one was made; the null move lets a PGN reader (python-chess, …)
    pair each time with its ply. Red moves first, so red is PGN's white."""
    result = outcome.result or "*"
    # PGN has four results; 0:0 (a double forfeit) is none of them, and a reader takes "0-0"
    # in the movetext for castling. Written "*" with its termination and a closing comment.
    closing: list[str] = []
    extra: list[tuple[str, str]] = []
    if result not in PGN_RESULTS:
        closing = [f"{{{result} {outcome.reason or ''}}}".replace("_", " ").replace(" }", "}")]
        extra = [("Termination", "rules infraction")]
        result = "*"
    elif outcome.reason == "flag":
        extra = [("Termination", "time forfeit")]
    # PGN's seven tags first (a reader shows White–Black): red is white; then xiangqi's Red
    tags = [
        ("Event", event),
        ("Site", "?"),
        ("Date", date or "????.??.??"),
        ("Round", str(game["round"])),
        ("White", game["red"]),
        ("Black", game["black"]),
        ("Result", result),
        ("Board", str(game["board"])),
        ("GameId", game["game"]),  # (xiangqi readers take Game for the kind of game)
        ("Red", game["red"]),
        ("TimeControl", pgn_tc(game["tc"])),
        *([("Stage", str(game["stage"]))] if game.get("stage") else []),  # a knockout game
        *extra,
    ]
    lines = [
        f'[{k} "{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"]'
        for k, v in tags
    ]
    tokens: list[str] = []
    number = 1
    for n, (side, clock) in enumerate(_turns(rows)):
        if side == "red":
            tokens.append(f"{number}.")
        elif n == 0:
            tokens.append(f"{number}...")  # a game carried over with black on move
        tokens.append("--")
        tokens.append(f"{{[%clk {hms(clock)}]}}" if clock is not None else "{让二先}")
        if side == "black":
            number += 1
    tokens += [*closing, result]
    movetext, line = [], ""
    for tok in tokens:  # PGN keeps lines under 80 characters
        if line and len(line) + 1 + len(tok) > 79:
            movetext.append(line)
            line = tok
        else:
            line = f"{line} {tok}" if line else tok
    movetext.append(line)
    return "\n".join(lines) + "\n\n" + "\n".join(movetext) + "\n"
