"""Bounds on the text the web port accepts: free text is short and has no control characters.

What a person types into the arbiter page (a foul reason, a player name) ends up on every
display in the hall; a 200 KB reason or a name carrying terminal escapes, bidi overrides or
NULs is refused at the door with the place it was found, never stored or streamed.
"""

from __future__ import annotations

from typing import Any

from venue_station.domain.pairings import control_at
from venue_station.web.http_base import ApiError

__all__ = ["MAX_ARGS_DEPTH", "MAX_ARG_TEXT", "check_command_args", "control_at"]

MAX_ARG_TEXT = 256  # characters in any one string of a command's args
MAX_ARGS_DEPTH = 4  # nesting of a command's args


def check_command_args(args: Any, where: str = "body.args", depth: int = 0) -> None:
    """400 naming the key for a string too long or with a control character, or args nested
    too deep; the wire contract's own checks (``wire_contract.messages``) come after."""
    if depth > MAX_ARGS_DEPTH:
        raise ApiError(400, f"args nested deeper than {MAX_ARGS_DEPTH}", where=where)
    if isinstance(args, str):
        if len(args) > MAX_ARG_TEXT:
            raise ApiError(
                400, f"text longer than {MAX_ARG_TEXT} characters", kind="too_long", where=where
            )
        col = control_at(args)
        if col is not None:
            raise ApiError(400, f"control character at column {col}", where=where)
    elif isinstance(args, dict):
        for key, value in args.items():
            check_command_args(key, f"{where} (key)", depth + 1)
            check_command_args(value, f"{where}.{key}", depth + 1)
    elif isinstance(args, list):
        for i, value in enumerate(args):
            check_command_args(value, f"{where}[{i}]", depth + 1)
