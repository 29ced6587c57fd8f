"""The two sides of a xiangqi game. Red moves first."""

from __future__ import annotations

import enum

__all__ = ["Side"]


class Side(enum.Enum):
    """A side of the board; the value is the wire spelling (``"red"`` / ``"black"``)."""

    RED = "red"
    BLACK = "black"

    @property
    def other(self) -> Side:
        return Side.BLACK if self is Side.RED else Side.RED

    @classmethod
    def parse(cls, text: str) -> Side:
        """Parse the wire spelling; raises ``ValueError`` naming the bad value."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"side must be 'red' or 'black', not {text!r}") from None

    def __str__(self) -> str:
        return self.value
