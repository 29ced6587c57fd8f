"""The contract's topics (``qz/v1/{venue}/…``) and ids, and its one error type.

``messages`` builds on these; everything here is also importable from ``messages``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from wire_contract.errors import WireContractError

__all__ = ["ID_PATTERN", "TopicName", "Topics", "WireError", "check_id", "parse_topic"]

ID_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
_ID_RE = re.compile(ID_PATTERN)


class WireError(WireContractError, ValueError):
    """A payload, topic or command that does not match the contract; the message says what."""


@dataclass(frozen=True, slots=True)
class TopicName:
    venue: str
    kind: Literal["board", "venue", "station", "resent"]
    leaf: str
    board: str | None = None


@dataclass(frozen=True, slots=True)
class Topics:
    """Topic names under ``qz/v1/{venue}``."""

    venue: str

    def __post_init__(self) -> None:
        check_id("venue", self.venue)

    @property
    def root(self) -> str:
        return f"qz/v1/{self.venue}"

    def board(self, board: str, leaf: str) -> str:
        return f"{self.root}/board/{board}/{leaf}"

    def status(self, board: str) -> str:
        return self.board(board, "status")

    def state(self, board: str) -> str:
        return self.board(board, "state")

    def event(self, board: str) -> str:
        return self.board(board, "event")

    def cmd(self, board: str) -> str:
        return self.board(board, "cmd")

    def reply(self, board: str) -> str:
        return self.board(board, "reply")

    @property
    def venue_cmd(self) -> str:
        return f"{self.root}/venue/cmd"

    @property
    def station_status(self) -> str:
        return f"{self.root}/station/status"

    @property
    def station_decision(self) -> str:
        """The station's decisions (issue 27): only the station account publishes here."""
        return f"{self.root}/station/decision"

    @property
    def station_resend(self) -> str:
        """The hub's asks for events it lacks (``ResendAsk``): the one topic the venue bridge
        brings IN from the centre; only the station reads it."""
        return f"{self.root}/station/resend"

    def resent_event(self, board: str) -> str:
        """The station's stored copy of a board's event, sent again for the hub: only the
        station account publishes here, and the bridge carries it out as the board's event."""
        return f"{self.root}/resent/board/{check_id('board', board)}/event"

    def station_record(self, board: str) -> str:
        """A board's game record (issue 29, retained): only the station account publishes."""
        return f"{self.root}/station/record/{check_id('board', board)}"


_BOARD_LEAVES = {"status", "state", "event", "cmd", "reply"}


def check_id(what: str, value: str) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise WireError(f"{what} {value!r} must match {ID_PATTERN}")
    return value


def parse_topic(topic: str) -> TopicName:
    """Split a topic of the contract; raises ``WireError`` for anything else."""
    parts = topic.split("/")
    if len(parts) < 4 or parts[0] != "qz" or parts[1] != "v1":
        raise WireError(f"topic {topic!r} is not under qz/v1/{{venue}}")
    venue = parts[2]
    if not _ID_RE.match(venue):
        raise WireError(f"topic {topic!r}: bad venue id")
    rest = parts[3:]
    if len(rest) == 3 and rest[0] == "board" and rest[2] in _BOARD_LEAVES:
        if not _ID_RE.match(rest[1]):
            raise WireError(f"topic {topic!r}: bad board id")
        return TopicName(venue, "board", rest[2], rest[1])
    if rest == ["venue", "cmd"]:
        return TopicName(venue, "venue", "cmd")
    if rest == ["station", "status"]:
        return TopicName(venue, "station", "status")
    if rest in (["station", "decision"], ["station", "resend"]):
        return TopicName(venue, "station", rest[1])
    if len(rest) == 4 and rest[:2] == ["resent", "board"] and rest[3] == "event":
        if not _ID_RE.match(rest[2]):
            raise WireError(f"topic {topic!r}: bad board id")
        return TopicName(venue, "resent", "event", rest[2])
    if len(rest) == 3 and rest[:2] == ["station", "record"] and _ID_RE.match(rest[2]):
        return TopicName(venue, "station", "record", rest[2])
    raise WireError(f"topic {topic!r} is not a topic of the contract")
