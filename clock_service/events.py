"""The facts a GameClock reports: small frozen value objects, one per wire event type.

Every state-changing GameClock call returns a tuple of these, in the order they happened, so
the node journals and publishes exactly what the core decided. ``type`` is the event type of
the wire contract (DESIGN.md §4) and ``data()`` its ``data`` object with wire spellings.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from clock_service.side import Side

__all__ = ["Adjusted", "ClockEvent", "Flagged", "Moved", "Paused", "Resumed", "Started"]


@dataclasses.dataclass(frozen=True, slots=True)
class _Event:
    type: ClassVar[str]

    def data(self) -> dict[str, str | int]:
        """The wire ``data`` object: sides as ``"red"``/``"black"``, times in ms."""
        out: dict[str, str | int] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            out[field.name] = value.value if isinstance(value, Side) else value
        return out

    def __repr__(self) -> str:
        inner = " ".join(f"{k}={v}" for k, v in self.data().items())
        return f"<{self.type}{' ' if inner else ''}{inner}>"


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Started(_Event):
    """The clock started; ``side_on_move`` is red, or the side on move of a carried-over game."""

    type: ClassVar[str] = "started"
    side_on_move: Side


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Moved(_Event):
    """``side`` completed its move number ``move`` using ``used_ms``."""

    type: ClassVar[str] = "move"
    side: Side
    used_ms: int
    move: int


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Paused(_Event):
    type: ClassVar[str] = "paused"
    side_on_move: Side


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Resumed(_Event):
    type: ClassVar[str] = "resumed"
    side_on_move: Side


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Flagged(_Event):
    """``side`` ran out of time: the first flag, after which nothing runs."""

    type: ClassVar[str] = "flag"
    side: Side


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Adjusted(_Event):
    """The arbiter added (positive) or removed (negative) ``delta_ms`` for ``side``."""

    type: ClassVar[str] = "adjusted"
    side: Side
    delta_ms: int


ClockEvent = Started | Moved | Paused | Resumed | Flagged | Adjusted
