"""The shapes of the read routes' JSON responses, as pydantic models.

``openapi.py`` generates ``/api/openapi.json`` from these (and from ``api_action_models.py``),
and ``tests/station/test_api_responses.py`` validates real responses against that document: a
field renamed or dropped in a route fails there. The routes build plain dicts (the hot reads,
``/api/boards`` on every hall screen, pay no model on the way out); these models are the
contract those dicts are held to.

Every model forbids fields it does not name (``additionalProperties: false``), and a field the
route always sends has no default, so the document marks it required.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wire_contract.messages import BoardStatus, StateSnapshot

__all__ = [
    "READ_MODELS",
    "Accounts",
    "Alerts",
    "BoardDetail",
    "Boards",
    "Error",
    "Events",
    "Fouls",
    "GameDetail",
    "Games",
    "Health",
    "Reasons",
    "Results",
    "ResultsExport",
    "RoundClock",
    "Rounds",
    "SessionInfo",
    "SetAside",
    "Standings",
    "StandingsExport",
    "StationInfo",
    "TrfEntrants",
]

Ms = int  # wall-clock milliseconds since the epoch
OutcomeStatus = Literal["undecided", "pending", "confirmed"]


class Out(BaseModel):
    """A response object: exactly these fields."""

    model_config = ConfigDict(extra="forbid")


class Error(BaseModel):
    """Every 4xx/5xx: ``error`` says what (English, for logs and tools), ``code`` the same as a
    machine code the pages translate (``already_ruled``, ``bad_csv``, …) with its ``args``,
    ``where`` names the place (``query.round``, ``body.cmd``, ``line 3``); some errors add
    context (a TRF's ``line``/``columns``, an action's ``command`` reply)."""

    model_config = ConfigDict(extra="allow")
    error: str
    code: str | None = None
    args: dict[str, Any] | None = None
    where: str | None = None


# -- the station --------------------------------------------------------------------------------
class StationAlarm(Out):
    """A trouble of the station itself that every page shows in a banner (issue 28):
    ``broker_down`` (since ``since_ms``: no board's news arrives, clocks are not live) or
    ``store_failing`` (what arrives is not being stored; ``detail`` the writer's last error),
    ``boards_silent`` (boards online by their status but silent: ``count``, ``boards``, the
    earliest ``since_ms``), ``unverified_decisions`` (``count`` of open unverified_decision
    alerts), ``backup_failing``."""

    code: Literal[
        "broker_down", "store_failing", "backup_failing", "boards_silent", "unverified_decisions"
    ]
    since_ms: Ms | None = None
    detail: str | None = None
    count: int | None = None  # boards_silent: how many boards; unverified_decisions: decisions
    boards: list[str] | None = None  # boards_silent: which (the first 20)


class StationInfo(Out):
    venue: str
    title: str  # the event's name (the regulation's title), the pages' heading
    regulation: str
    tc: str
    session: int
    started_ms: Ms
    station_ts: Ms
    connected: bool
    alarms: list[StationAlarm]


class TaskState(Out):
    up: bool
    restarts: int
    last_error: str | None
    down_s: float | None


class WriterHealth(Out):
    stuck: bool
    busy_s: float | None
    retrying: bool
    last_error: str | None
    set_aside: int


class BackupHealth(Out):
    """The continuous backup (``[backup]``; docs/operations.md)."""

    dir: str
    every_s: float
    keep: int
    taken: int
    last_ok_ms: Ms | None
    last: str | None
    failing_since_ms: Ms | None
    error: str | None


class Health(StationInfo):
    ok: bool
    tasks: dict[str, TaskState]
    tasks_down: list[str]
    writer: WriterHealth
    flooding: list[str]
    backup: BackupHealth | None


# -- boards and events --------------------------------------------------------------------------
class BoardStatusView(BoardStatus):
    """A board's status as the station holds it: the wire's, plus ``silent_since_ms`` (the
    station's own mark, never on the wire) when the board is online by its status but has
    said nothing past the silence bound: unknown since that instant (docs/station.md)."""

    silent_since_ms: Ms | None = None
    # offline or lost: the station's last message from the board before it went (the pages
    # run its clock no further; absent for a status found retained: the state's ts then)
    away_since_ms: Ms | None = None


class BoardView(Out):
    board: str
    status: BoardStatusView | None
    state: StateSnapshot | None
    online: bool = Field(
        description="online by its status, and the station can see it (false while the broker "
        "is down: unknown_since)"
    )
    clock_offset_ms: int | None
    unknown_since: Ms | None = Field(
        None,
        description="while the station has lost the broker (the broker_down alarm): the wall "
        "ms since when; status and state are the last known, a running clock is not to be run "
        "on past this instant",
    )
    # a board the station has stored events of: its highest seq in order, the seq ranges missing
    last_seq: int | None = None
    missing: list[list[int]] | None = None


class Boards(Out):
    boards: list[BoardView]


class ClockAt(Out):
    red_ms: int
    black_ms: int
    running: Literal["red", "black"] | None


class Event(Out):
    id: int
    board: str
    session: int
    seq: int
    node: str
    game: str | None
    round: int | None
    ts: Ms
    type: str
    replay: bool
    data: dict[str, Any]
    received_ms: Ms
    clock: ClockAt
    # The same three again at the top level: served so since the first API (the route spreads
    # the stored row before it moves them into ``clock``); kept for the clients that read them.
    red_ms: int
    black_ms: int
    running: Literal["red", "black"] | None


class BoardDetail(BoardView):
    events: list[Event] = Field(description="the board's 50 latest events, newest first")


class Events(Out):
    events: list[Event]
    next: int | None = Field(description="the id cursor of the next page, null on the last")


# -- games and results ------------------------------------------------------------------------
class FoulCounts(Out):
    pending: int = 0
    confirmed: int = 0
    dismissed: int = 0


class Game(Out):
    game: str
    round: int
    board: str
    red: str
    black: str
    tc: str
    winner: Literal["red", "black"] | None
    result: str | None = Field(description="1-0 | 0-1 | 1/2-1/2 | 0-0, null until confirmed")
    reason: str | None
    decided_by: str | None
    fouls: dict[str, FoulCounts]
    status: OutcomeStatus
    proposed: str | None
    proposed_reason: str | None
    red_points: int | None
    black_points: int | None
    updated_ms: Ms


class Games(Out):
    games: list[Game]


class ClockRow(Out):
    move: int
    side: Literal["red", "black"]
    used_ms: int
    remaining_ms: int


class GameDetail(Game):
    clock_log: list[ClockRow]


class ResultRow(Out):
    round: int
    board: str
    game: str
    red: str
    black: str
    result: str = Field(description='"" while undecided')
    red_points: int | None
    black_points: int | None
    reason: str


class Results(Out):
    round: int | None
    results: list[ResultRow]


class Fouls(Out):
    players: dict[str, FoulCounts]


class Pairing(Out):
    round: int
    board: str
    red: str
    black: str


class Round(Out):
    round: int
    tc: str
    imported_ms: Ms
    started_ms: Ms | None
    pairings: list[Pairing]


class Rounds(Out):
    rounds: list[Round]


class NextSession(Out):
    round: int
    date: str
    time: str
    start_ms: Ms


class RoundClock(Out):
    round: int | None
    rounds: int
    started_ms: Ms | None
    late_ms: int
    late_deadline_ms: Ms | None
    station_ts: Ms
    next: NextSession | None


# -- the arbiter's reads ------------------------------------------------------------------------
class Alert(Out):
    id: int
    key: str
    kind: str
    board: str
    game: str | None
    side: str | None
    seq: int | None
    ts: Ms
    # cleared: closed by the station (its cause gone; a record's consent, docs/records.md)
    status: Literal["open", "acked", "confirmed", "dismissed", "cleared"]
    detail: dict[str, Any]
    updated_ms: Ms
    by: str | None


class Alerts(Out):
    alerts: list[Alert]


class SetAsideRow(Out):
    id: int
    kind: str
    board: str | None
    reason: str
    item: str = Field(description="the JSON text of what could not be stored")
    set_aside_ms: Ms


class SetAside(Out):
    set_aside: list[SetAsideRow]


class Account(Out):
    username: str
    role: str


class Accounts(Out):
    accounts: list[Account]


class SessionInfo(Out):
    """The logged-in user; ``csrf`` goes in ``X-CSRF-Token`` on every action."""

    user: str
    role: str
    csrf: str
    boards: list[str] | None = None  # a recorder's boards (录谱); None: not a recorder, or all


# -- standings, reasons, the pairing program ------------------------------------------------------
class Standing(Out):
    rank: int
    player: str
    points: int
    progressive: int
    wins: int
    fouls: int
    black_games: int
    games: int
    shared: bool
    reason_zh: str
    reason_en: str
    decided_by: str | None
    dropped_rounds: int
    event_rank: int
    tags: list[str]
    knockout_place: int | None = Field(
        default=None, description="the final list's places 1–4: the knockout's place (淘汰赛)"
    )


class UndecidedGame(Out):
    round: int
    board: str
    status: Literal["pending", "undecided"]


class Standings(Out):
    regulation: str
    after_round: int | None
    tag: str | None
    groups: list[str] = Field(
        default_factory=list, description="every group (player tag) of the event, unfiltered"
    )
    final: bool = Field(
        default=False, description="places 1–4 are the finished knockout's (the final list)"
    )
    complete: bool = Field(
        default=False,
        description="the whole event's table with every round played and decided (and the "
        "knockout finished): the final standings",
    )
    standings: list[Standing]
    withdrawn: list[str] = Field(default_factory=list, description="players withdrawn (退赛)")
    undecided: list[UndecidedGame] = Field(
        default_factory=list,
        description="games of the rounds counted without a confirmed result: not in the table yet",
    )


class Reason(Out):
    code: str
    kind: Literal["foul", "forfeit", "result"]
    zh: str
    en: str
    count: int | None
    of: str | None


class HandicapRule(Out):
    moves: int


class Reasons(Out):
    regulation: str
    title: str
    foul: list[Reason]
    forfeit: list[Reason]
    result: list[Reason]
    handicap: HandicapRule | None
    fouls_forfeit_at: int | None
    move_limit: int = Field(description="自然限着 in full moves (the move count's default)")
    knockout: bool = Field(description="the regulation has a knockout (Meishan) or not (Wulong)")


class Entrant(Out):
    start_rank: int
    player: str
    name: str
    withdrawn: bool = False


class Bye(Out):
    round: int
    player: int = Field(description="the player's start rank (the TRF's)")
    kind: str = Field(description="TRF 240 kind: U, F (a win's points), H (a draw's), Z (none)")


class TrfEntrants(Out):
    entrants: list[Entrant]
    byes: list[Bye]


class ResultsExport(Out):
    """``results.json``: a round's results for the pairing software."""

    round: int
    regulation: str
    games: list[ResultRow]


class StandingsExport(Out):
    """``standings.json``."""

    v: int
    regulation: str | None
    after_round: int | None
    tag: str | None
    final: bool = False
    standings: list[Standing]


READ_MODELS: tuple[type[BaseModel], ...] = (
    Error,
    StationInfo,
    Health,
    Boards,
    BoardDetail,
    Events,
    Games,
    GameDetail,
    Results,
    Fouls,
    Rounds,
    RoundClock,
    Alerts,
    SetAside,
    Accounts,
    SessionInfo,
    Standings,
    Reasons,
    TrfEntrants,
)
