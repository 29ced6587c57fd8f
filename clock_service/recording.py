"""The 录谱 rule: which boards must be recorded, who records, and what a missing record costs.

Meishan 2016 三、3 (the top two boards, 原则上 the winner, red on a draw; a declined or later
record needs the chief arbiter's consent) and Wulong 2015 四 (the top ten boards and every board
with a master, the winner, red on a draw; every missing record is a foul of the responsible
player). The profile's ``[recording]`` table (docs/regulation.md) holds the numbers; the
station keeps the records and the times (docs/records.md).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable

from clock_service.profile_table import Table, enum_value
from clock_service.side import Side

__all__ = [
    "GRACES",
    "BoardGame",
    "Duty",
    "RecordState",
    "RecordingRule",
    "read_recording",
    "record_state",
    "recording_duties",
]

# When the grace ends: "next_round" = when the next round starts (the station knows when).
GRACES = ("next_round",)


@dataclasses.dataclass(frozen=True)
class RecordingRule:
    top_boards: int  # boards 1..top_boards must be recorded
    player_tags: tuple[str, ...]  # and every board where a player carries one of these tags
    on_draw: Side  # who records a drawn game (the winner records a won one)
    grace: str  # one of GRACES
    chief_consent: bool  # the regulation lets the chief allow a later or no record
    foul: str  # the fouls.reasons code a missing record counts as

    def required(self, *, board: int, tags: Iterable[str]) -> bool:
        """Must the game on ``board`` be recorded? ``tags``: both players' tags."""
        return 1 <= board <= self.top_boards or any(t in self.player_tags for t in tags)

    def responsible(self, *, winner: Side | None) -> Side:
        """The side that must record: the winner; ``on_draw`` when ``winner`` is None."""
        return self.on_draw if winner is None else winner


class RecordState(enum.Enum):
    """A required record against its grace, as the arbiter's view shows it."""

    DUE = "due"  # not recorded yet, the grace has not ended
    RECORDED = "recorded"  # recorded within the grace
    LATE = "late"  # recorded after the grace ended
    MISSING = "missing"  # not recorded, the grace has ended
    ALLOWED = "allowed"  # the chief allowed a later or no record

    @property
    def foul_due(self) -> bool:
        """Whether the profile's foul is pending against the responsible player."""
        return self in (RecordState.LATE, RecordState.MISSING)

    def __str__(self) -> str:
        return self.value


def record_state(
    *, recorded_at: int | None, grace_ends: int | None, now: int, consent: bool
) -> RecordState:
    """The state of one required record. Times on one clock (ms); ``grace_ends`` None: not yet
    known (the next round has not started)."""
    if consent:
        return RecordState.ALLOWED
    ended = grace_ends is not None and now >= grace_ends
    if recorded_at is None:
        return RecordState.MISSING if ended else RecordState.DUE
    if grace_ends is not None and recorded_at >= grace_ends:
        return RecordState.LATE
    return RecordState.RECORDED


@dataclasses.dataclass(frozen=True)
class BoardGame:
    """What the duty of one board depends on: its number, both players' tags, the result."""

    board: int
    tags: tuple[str, ...]  # both players' tags
    winner: Side | None  # None: a draw
    played: bool = True  # False: decided without play (absence …): there are no moves to record
    recorded_at: int | None = None  # when its record was completed (ms, the grace's clock)
    consent: bool = False  # the chief allowed a later or no record


@dataclasses.dataclass(frozen=True)
class Duty:
    """One board that must be recorded, who must record it and where the record stands."""

    board: int
    responsible: Side
    state: RecordState
    foul: str  # the profile's code, pending against ``responsible`` when ``state.foul_due``

    @property
    def foul_due(self) -> bool:
        return self.state.foul_due


def recording_duties(
    rule: RecordingRule, games: Iterable[BoardGame], *, grace_ends: int | None, now: int
) -> list[Duty]:
    """The round's boards that must be recorded, in board order, with their states.

    A game decided without play is left out (nothing to record). Consent counts only where the
    regulation gives the chief that power (``chief_consent``); elsewhere the arbiter dismisses
    the pending foul instead.
    """
    duties = []
    for game in sorted(games, key=lambda g: g.board):
        if not game.played or not rule.required(board=game.board, tags=game.tags):
            continue
        state = record_state(
            recorded_at=game.recorded_at,
            grace_ends=grace_ends,
            now=now,
            consent=game.consent and rule.chief_consent,
        )
        duties.append(
            Duty(
                board=game.board,
                responsible=rule.responsible(winner=game.winner),
                state=state,
                foul=rule.foul,
            )
        )
    return duties


def read_recording(t: Table) -> RecordingRule:
    responsible = t.text("responsible")
    if responsible != "winner":
        raise t.error("responsible", f"{responsible!r}: only 'winner' is known")
    grace = t.text("grace")
    if grace not in GRACES:
        raise t.error("grace", f"{grace!r} is not one of {', '.join(GRACES)}")
    consent: bool = t._get("chief_consent", bool, "true or false")
    return RecordingRule(
        top_boards=t.integer("top_boards", high=500),
        player_tags=t.codes("player_tags") if t.has("player_tags") else (),
        on_draw=enum_value(t, "on_draw", t.text("on_draw"), Side),
        grace=grace,
        chief_consent=consent,
        foul=t.text("foul"),
    )
