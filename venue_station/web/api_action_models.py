"""The actions' request bodies and responses, and the knockout's view, as pydantic models.

The bodies are what the routes validate their requests with (``bodies.parse_body``: a refused
field is a 400 naming its place, ``body.cmd``, and is counted) and what the OpenAPI document
shows, so a client or a fuzzer (tests/web/test_web_schemathesis.py) knows what a valid body is.
What needs the station's state (a round within the regulation, players of the standings) the
routes check after the model. The responses are
held to these by ``tests/station/test_api_responses.py`` against the generated document.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from venue_station.web.api_models import Alert, Out
from wire_contract.topics import ID_PATTERN

__all__ = [
    "ACTION_MODELS",
    "AlertAction",
    "AlertRuled",
    "AuditEntry",
    "AuditLog",
    "ByeBody",
    "ByeGiven",
    "CommandBody",
    "CommandResult",
    "ImportPreview",
    "Imported",
    "KnockoutChoiceBody",
    "KnockoutConfirmBody",
    "KnockoutConfirmed",
    "KnockoutResultBody",
    "KnockoutStartBody",
    "KnockoutState",
    "LoggedOut",
    "LoginBody",
    "PairingProposal",
    "PairingProposalState",
    "PairingsImported",
    "PairsImported",
    "PlayerBody",
    "RoundSent",
    "TrfImported",
    "UndoBody",
    "Undone",
    "Withdrawn",
]

Side = Literal["red", "black"]


class Body(BaseModel):
    """A request body: the fields named, others refused; JSON types as sent (strict: no
    ``"3"`` for 3, no ``true`` for 1)."""

    model_config = ConfigDict(extra="forbid", strict=True)


# -- request bodies -------------------------------------------------------------------------------
class LoginBody(Body):
    username: Annotated[str, Field(min_length=1, max_length=64)]
    # scrypt of a longer password is refused, not computed
    password: Annotated[str, Field(max_length=1024)]


class CommandBody(Body):
    cmd: Annotated[str, Field(min_length=1, description="a board command (docs/wire.md)")]
    args: dict[str, Any] = Field(default_factory=dict)
    replace: bool = Field(
        default=False,
        description="a `result` over a game that has one replaces it (else 409 already_decided)",
    )
    after_pairing: bool = Field(
        default=False,
        description="change a result (`result` replacing it, `withdraw`) a later round was "
        "paired from: it is not paired again (else 409 paired_from)",
    )


class AlertAction(Body):
    action: Literal["ack", "confirm", "dismiss"]


class KnockoutStartBody(Body):
    seed: Annotated[int, Field(ge=0, lt=2**63)] | None = None
    after_round: Annotated[int, Field(ge=1)] | None = None
    top: Annotated[list[str], Field(min_length=4, max_length=4)] | None = Field(
        default=None, description="the four players, in order, when the 4th place is shared"
    )


class KnockoutConfirmBody(Body):
    board: Annotated[str, Field(pattern=ID_PATTERN)] | None = Field(
        default=None, description="a tie-break game defaults to its slow game's board"
    )


class KnockoutResultBody(Body):
    result: Literal["red", "black", "draw"]


class KnockoutChoiceBody(Body):
    side: Side


# -- action responses -------------------------------------------------------------------------
class BoardOutcome(Out):
    """One board's answer to a command, in the arbiter's terms (docs/web.md, venue commands)."""

    board: str
    outcome: Literal["done", "not_needed", "refused", "no_answer"]
    code: str | None = Field(default=None, description="the board's reason as a code")
    args: dict[str, Any] | None = Field(default=None, description="the code's arguments")
    error: str | None = Field(default=None, description="the board's reason in English")


class CommandSummary(Out):
    done: int
    not_needed: int
    refused: int
    no_answer: int


class CommandResult(Out):
    """A command's outcome: every board's reply, and the boards that did not reply in time."""

    txn: str
    cmd: str
    board: str | None
    outcome: str = Field(description="ok | rejected | timeout | sent")
    ok: bool
    replies: dict[str, dict[str, Any]]
    missing: list[str]
    summary: CommandSummary
    boards: list[BoardOutcome]
    error: str | None = Field(default=None, description="a board command: its reply's error")
    code: str | None = Field(default=None, description="a board command: its reply's code")
    args: dict[str, Any] | None = Field(default=None, description="the code's arguments")


class NotSent(Out):
    outcome: Literal["not_sent"]
    ok: Literal[False]
    error: str


SetGameReplies = dict[str, CommandResult | NotSent]


class LoggedOut(Out):
    ok: Literal[True]


class ImportPreview(Out):
    """What an import changes (its dry run says it, storing nothing; docs/pairing.md)."""

    dry_run: bool | None = None
    rounds: list[int] | None = None
    replaced_games: dict[str, int] | None = Field(default=None, description="round -> games")
    voided_results: list[str] | None = Field(
        default=None, description="games whose results the replaced round voids"
    )
    audit: int | None = Field(default=None, description="the import's audit entry")
    moved_boards: dict[str, dict[str, str]] | None = Field(
        default=None,
        description="round -> board in the file -> board used: a round played beside the "
        "knockout keeps off the boards its games are on (Meishan's rounds 8–9)",
    )


class PairingsImported(ImportPreview):
    imported: int
    set_game: SetGameReplies | None = None


class Imported(Out):
    imported: int
    dry_run: bool | None = Field(
        default=None, description="true: a preview, checked and counted, nothing stored"
    )
    new_players: list[str] | None = Field(
        default=None,
        description="a preview's names the station does not hold yet (an import adds them: a "
        "list imported again adds, it does not replace)",
    )


class RoundSent(Out):
    round: int
    set_game: SetGameReplies


class AlertRuled(Out):
    alert: Alert
    command: CommandResult | None = Field(
        default=None, description="the board's reply to the ruling (resolve or result)"
    )


class PairsImported(ImportPreview):
    round: int
    games: int
    byes: int
    unpaired: list[str] | None = Field(
        default=None, description="players the list left out (absent?), for the page to show"
    )
    set_game: SetGameReplies | None = None


class ProposedBoard(Out):
    board: int
    white: int = Field(description="start rank: red, who moves first")
    black: int = Field(description="start rank; 0: a pairing-allocated bye")
    red_player: str
    black_player: str
    red_points: str = Field(description="points after the last round")
    black_points: str | None


class PairingProposal(Out):
    round: int
    engine: str
    boards: list[ProposedBoard]


class PairingProposalState(Out):
    engine: str | None = Field(description="the configured engine; null: none")
    proposal: PairingProposal | None


class Renamed(Out):
    start_rank: int
    from_: str = Field(alias="from")
    to: str


class TrfImported(PairsImported):
    players: int
    round: int | None  # type: ignore[assignment]
    games: int | None = None  # type: ignore[assignment]
    byes: int | None = None  # type: ignore[assignment]
    new_players: list[str] | None = None
    renamed: list[Renamed] | None = Field(
        default=None,
        description="names the file puts right, players who have not played (the rest is "
        "players_mismatch)",
    )
    renumbered: bool | None = Field(
        default=None,
        description="true: before round 1 the file's start ranks were taken as they are "
        "(players matched by name)",
    )
    gaps: list[int] | None = Field(
        default=None,
        description="before round 1: the start ranks the file left out (a no-show deleted), "
        "its list numbered 1..n in order",
    )
    removed: list[str] | None = Field(
        default=None,
        description="players of the previous file this one no longer has (never "
        "played): removed from the station's list",
    )


# -- the tournament's changes (withdraw, byes, audit, undo) ------------------------------------
PlayerKey = Annotated[str, Field(min_length=1, max_length=64)]


class PlayerBody(Body):
    player: PlayerKey


class ByeBody(Body):
    round: Annotated[int, Field(ge=1, le=99)]
    player: PlayerKey
    kind: Literal["full", "half", "zero"]


class UndoBody(Body):
    pass


class Withdrawn(Out):
    player: str
    withdrawn: bool
    audit: int


class ByeGiven(Out):
    round: int
    player: str
    kind: str
    audit: int


class Undone(Out):
    undone: int = Field(description="the audit entry undone")
    what: str
    audit: int


class AuditEntry(Out):
    id: int
    at_ms: int
    user: str | None
    what: str
    args: dict[str, Any]
    before: Any = None
    after: Any = None
    undone: bool


class AuditLog(Out):
    audit: list[AuditEntry]
    withdrawn: list[str]


# -- the knockout ---------------------------------------------------------------------------------
class KnockoutGame(Out):
    id: str
    stage: str
    stage_zh: str
    red: str
    black: str
    tc: str
    tiebreak: bool
    board: str | None
    round: int = Field(description="the Swiss round it is played beside (录谱, the round's files)")
    draw_winner: Side | None
    result: str | None
    result_source: str | None
    drawn: bool
    confirmed: bool = Field(description="an arbiter confirmed it onto its board")


class PendingChoice(Out):
    game: str
    chooser: str
    opponent: str


class Lot(Out):
    game: str
    red: str
    black: str
    method: str
    chooser: str | None


class Placing(Out):
    place: int
    player: str


class KnockoutConflict(Out):
    """A game whose board's result changed after games that came of it were under way: the
    knockout keeps ``recorded``; ``now`` is the board's (None: no result now)."""

    game: str
    now: str | None
    recorded: str | None


class KnockoutNotStarted(Out):
    started: Literal[False]


class KnockoutStarted(Out):
    started: Literal[True]
    after_round: int
    seed: int
    top: list[str]
    started_by: str | None
    started_ms: int | None
    games: list[KnockoutGame]
    proposed: list[KnockoutGame]
    pending_choices: list[PendingChoice]
    lots: list[Lot]
    placings: list[Placing]
    conflicts: list[KnockoutConflict]
    finished: bool


class KnockoutState(RootModel[KnockoutNotStarted | KnockoutStarted]):
    """``GET /api/knockout`` and every knockout action: not started, or the whole knockout."""


class KnockoutConfirmed(Out):
    game: KnockoutGame
    set_game: dict[str, Any] = Field(description="the set_game arguments sent to the board")
    command: CommandResult


ACTION_MODELS: tuple[type[BaseModel], ...] = (
    LoginBody,
    CommandBody,
    AlertAction,
    KnockoutStartBody,
    KnockoutConfirmBody,
    KnockoutResultBody,
    KnockoutChoiceBody,
    CommandResult,
    LoggedOut,
    PairingsImported,
    Imported,
    RoundSent,
    AlertRuled,
    PairsImported,
    PairingProposal,
    PairingProposalState,
    TrfImported,
    KnockoutConfirmed,
    KnockoutState,
    PlayerBody,
    ByeBody,
    UndoBody,
    Withdrawn,
    ByeGiven,
    Undone,
    AuditLog,
)
