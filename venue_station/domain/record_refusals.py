"""A record change the station refuses (``RecordRefused``), and what a move the rules refuse
is, in a code the pages translate (``refusal``): records.py's refusals, apart."""

from __future__ import annotations

import re
from typing import Any

from clock_service.side import Side
from clock_service.xiangqi import Move, NotationError
from venue_station.errors import StationError

__all__ = ["RecordRefused", "refusal"]

_ICCS = re.compile(r"^[a-iA-I]\d-?[a-iA-I]\d$")
_CHINESE_SIGNS = set("进進退平上下")
_WXF = re.compile(r"^[A-Za-z+\-1-9]{1,3}[+\-=.]?[1-9]$")  # C2.5 C25 R+.3 -H+6 9+.8 17+1


class RecordRefused(StationError):
    """A record change the station refuses, nothing stored: ``code`` for the pages to translate
    (illegal_move, wrong_side, ambiguous_move, unreadable_move, record_changed,
    record_not_required, nothing_to_undo, no_game), ``status`` the HTTP status, ``args``."""

    def __init__(self, status: int, code: str, message: str, **args: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.args_ = status, code, message, args


def refusal(position: Any, text: str, error: NotationError) -> RecordRefused:
    """What a move the rules refuse is: a code the pages translate, the rules' own reason."""
    side = position.to_move.value
    stripped = re.sub(r"\s+", "", text)
    message = str(error)
    args = {"move": text, "side": side}
    if "ambiguous" in message:
        return RecordRefused(422, "ambiguous_move", message, **args)
    if "red's own is " in message:  # black's digits on red's turn: red's spelling offered
        own = message.rsplit("red's own is ", 1)[1]
        return RecordRefused(422, "black_numerals", message, **args, as_move=own)
    if "other side" in message:
        return RecordRefused(422, "wrong_side", message, **args)
    if _ICCS.match(stripped):
        piece = position.squares[Move.from_iccs(stripped).source]
        if piece is not None and piece.isupper() != (position.to_move is Side.RED):
            return RecordRefused(422, "wrong_side", message, **args)
        return RecordRefused(422, "illegal_move", message, **args)
    chinese_shape = len(stripped) >= 4 and any(c in _CHINESE_SIGNS for c in stripped[1:4])
    if not chinese_shape and not _WXF.match(stripped):
        return RecordRefused(
            422, "unreadable_move", f"{text!r} is no move in Chinese, WXF or ICCS", **args
        )
    return RecordRefused(422, "illegal_move", message, **args)
