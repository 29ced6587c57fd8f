"""The station's web routes as the OpenAPI document lists them (``openapi.py`` builds the
document from this table): each operation's summary, its response model or media type, its
parameters, its request body and who may call it. The record duties' and the records' routes
add theirs from beside their own models (``duties_models.py``, ``records_models.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from venue_station.web import api_action_models as act
from venue_station.web import api_models as m
from venue_station.web.duties_models import OPERATIONS as DUTY_OPERATIONS
from venue_station.web.openapi_params import path_param as _p
from venue_station.web.openapi_params import query_param as _q
from venue_station.web.prizes_models import OPERATIONS as PRIZE_OPERATIONS
from venue_station.web.records_models import OPERATIONS as RECORD_OPERATIONS

__all__ = ["CSV", "PAGE", "PATHS", "TEXT", "Op"]

TEXT = {"type": "string"}


@dataclass(frozen=True)
class Op:
    """One operation: what it answers (a model, or a media type with a string body)."""

    summary: str
    response: type[BaseModel] | str
    params: tuple[dict[str, Any], ...] = ()
    body: type[BaseModel] | str | None = None
    # None: anyone; "reader": a logged-in account's cookie; "action": cookie + CSRF header
    auth: str | None = None
    also: tuple[str, ...] = ()  # more media types of the same response (an export's formats)
    json_too: type[BaseModel] | None = None  # an export's JSON format


BOARD = _p("board", "board id")
ROUND = _p("round", "round number, 1..999", "integer")
LIMIT = _q("limit", "1..1000", "integer")
SEND = _q("send", "0 to only store, not send set_game")
GUARDED = (
    _q("replace_round", "replace this round although it has results (voided, kept)", "integer"),
    _q("dry_run", "1: check and preview what the import would change, store nothing"),
)
PAGE = "text/html"
CSV = "text/csv"


PATHS: dict[str, dict[str, Op]] = {
    "/healthz": {"get": Op("health: ok when the store is open and the broker connected", m.Health)},
    "/metrics": {"get": Op("Prometheus text exposition (0.0.4)", "text/plain", auth="reader")},
    "/api/openapi.json": {"get": Op("this document", "application/json")},
    "/api/station": {"get": Op("venue, regulation, time control, station session", m.StationInfo)},
    "/api/boards": {"get": Op("every board: status, state snapshot, online, last_seq", m.Boards)},
    "/api/boards/{board}": {
        "get": Op("one board and its 50 latest events", m.BoardDetail, (BOARD,))
    },
    "/api/events": {
        "get": Op(
            "stored events, paged by id",
            m.Events,
            (
                _q("board", "board id"),
                _q("round", "round number", "integer"),
                _q("game", "game id"),
                _q("type", "event type(s), comma separated"),
                _q("after", "id cursor", "integer"),
                _q("before", "id cursor", "integer"),
                LIMIT,
                _q("order", "asc|desc"),
            ),
        )
    },
    "/api/games": {
        "get": Op(
            "games with derived result and fouls", m.Games, (_q("round", "round", "integer"),)
        )
    },
    "/api/games/{game}": {
        "get": Op(
            "one game, its result, fouls and clock log", m.GameDetail, (_p("game", "game id"),)
        )
    },
    "/api/results": {
        "get": Op(
            "results of a round (all rounds without it)",
            m.Results,
            (_q("round", "round", "integer"),),
        )
    },
    "/api/fouls": {"get": Op("fouls per player over the tournament", m.Fouls)},
    "/api/rounds": {"get": Op("rounds and their pairings", m.Rounds)},
    "/api/round": {
        "get": Op(
            "the round for the hall screens: number, start, late deadline, next scheduled start",
            m.RoundClock,
        )
    },
    "/api/alerts": {
        "get": Op(
            "alerts, newest first",
            m.Alerts,
            (_q("status", "open|acked|confirmed|dismissed|active"), LIMIT),
            auth="reader",
        )
    },
    "/api/set_aside": {
        "get": Op(
            "messages the writer could not store, with the reason, newest first",
            m.SetAside,
            (LIMIT,),
            auth="reader",
        )
    },
    "/api/stream": {
        "get": Op(
            "SSE: hello, state, status, event, alert, game, record, knockout, tournament, "
            "ping; each data has station_ts",
            "text/event-stream",
        )
    },
    "/api/export/rounds/{round}/results.{fmt}": {
        "get": Op(
            "a round's results for the pairing software",
            CSV,
            (ROUND, _p("fmt", "csv|json")),
            json_too=m.ResultsExport,
        )
    },
    "/api/export/games/{game}/clock.{fmt}": {
        "get": Op(
            "a game's clock log",
            CSV,
            (_p("game", "game id"), _p("fmt", "csv|pgn")),
            also=("application/x-chess-pgn",),
        )
    },
    "/api/backup": {
        "get": Op(
            "a whole copy of the SQLite store for a warm standby (admin; docs/operations.md)",
            "application/vnd.sqlite3",
            auth="reader",
        )
    },
    "/api/export/rounds/{round}/games.pgn": {
        "get": Op(
            "a round's games as one PGN file (each game's clock after every move, its result)",
            "application/x-chess-pgn",
            (ROUND,),
        )
    },
    "/api/standings": {
        "get": Op(
            "standings after a round per the regulation's tiebreaks; rows with reason_zh/en",
            m.Standings,
            (
                _q("round", "after this round (default: the last with a game)", "integer"),
                _q("tag", "only players with this tag (comma separated: any of them)"),
            ),
        )
    },
    "/api/export/standings.{fmt}": {
        "get": Op(
            "the standings as CSV or JSON",
            CSV,
            (
                _p("fmt", "csv|json"),
                _q("round", "after this round", "integer"),
                _q("tag", "tag(s), comma separated"),
            ),
            json_too=m.StandingsExport,
        )
    },
    "/api/export/tournament.trf": {
        "get": Op(
            "the FIDE TRF-2026 file after a round (points 2/1/0 as 162, BB?, XXS; ranks by the "
            "regulation's tiebreaks), CR LF line ends",
            "text/plain",
            (
                _q("round", "after this round (default: the last with a result)", "integer"),
                _q("absent", "start ranks absent next round, comma separated (240 Z)"),
            ),
        )
    },
    "/api/trf/entrants": {
        "get": Op("start rank -> player key and name; the byes per round", m.TrfEntrants)
    },
    "/api/trf": {
        "post": Op(
            "import a TRF (chief/admin): players by start rank, and the round it carries paired "
            "with its byes; sends set_game unless ?send=0",
            act.TrfImported,
            (SEND, *GUARDED),
            body="text/plain",
            auth="action",
        )
    },
    "/api/pairs": {
        "post": Op(
            "import a pairing engine's pairs list (chief/admin) as ?round= (default: the next); "
            "boards 1..n in order, 'N 0' a bye; sends set_game unless ?send=0",
            act.PairsImported,
            (_q("round", "round", "integer"), SEND, *GUARDED),
            body="text/plain",
            auth="action",
        )
    },
    "/api/pairing/propose": {
        "post": Op(
            "run the configured pairing engine (chief/admin) on the TRF after the last complete "
            "round; keeps and returns its proposal for review",
            act.PairingProposal,
            auth="action",
        )
    },
    "/api/pairing/proposal": {
        "get": Op("the configured engine and the proposal under review", act.PairingProposalState)
    },
    "/api/pairing/approve": {
        "post": Op(
            "import the proposal (chief/admin) as its round, unless the results changed since; "
            "sends set_game unless ?send=0",
            act.PairsImported,
            (SEND,),
            auth="action",
        )
    },
    "/api/pairing/discard": {
        "post": Op("forget the proposal (chief/admin)", act.PairingProposalState, auth="action")
    },
    "/api/regulation/reasons": {
        "get": Op(
            "the profile's foul, forfeit (立即判负) and result reason codes with zh/en wording and "
            "counts, and its handicap rule, for the arbiter page's choices",
            m.Reasons,
        )
    },
    "/api/knockout": {
        "get": Op(
            "the knockout: games, proposed games, lots, pending colour choices, placings",
            act.KnockoutState,
        )
    },
    "/api/knockout/start": {
        "post": Op(
            "start the knockout from the standings after after_round (default: the profile's); "
            "the lot's seed is recorded",
            act.KnockoutState,
            body=act.KnockoutStartBody,
            auth="action",
        )
    },
    "/api/knockout/games/{id}/confirm": {
        "post": Op(
            "confirm a proposed knockout game on a board; sends set_game and returns the reply",
            act.KnockoutConfirmed,
            (_p("id", "ko-sf1|ko-sf2|ko-f|ko-3, +-tb for a tie-break game"),),
            body=act.KnockoutConfirmBody,
            auth="action",
        )
    },
    "/api/knockout/games/{id}/result": {
        "post": Op(
            "enter a knockout game's result by hand",
            act.KnockoutState,
            (_p("id", "knockout game id"),),
            body=act.KnockoutResultBody,
            auth="action",
        )
    },
    "/api/knockout/choices/{id}": {
        "post": Op(
            "the slow game's black chooses his colour for the tie-break game",
            act.KnockoutState,
            (_p("id", "the drawn slow game's id"),),
            body=act.KnockoutChoiceBody,
            auth="action",
        )
    },
    "/api/auth/login": {
        "post": Op(
            "log in; sets the qz_session cookie, returns the csrf token; 429 with Retry-After past "
            "the per-address or per-account limit",
            m.SessionInfo,
            body=act.LoginBody,
        )
    },
    "/api/auth/logout": {"post": Op("log out", act.LoggedOut, auth="action")},
    "/api/auth/session": {
        "get": Op("the logged-in user and csrf token (401 when not)", m.SessionInfo)
    },
    "/api/accounts": {
        "get": Op("the accounts and their roles, no hashes (admin only)", m.Accounts, auth="reader")
    },
    "/api/boards/{board}/cmd": {
        "post": Op(
            "send a command to a board; returns its reply",
            act.CommandResult,
            (BOARD,),
            body=act.CommandBody,
            auth="action",
        )
    },
    "/api/venue/cmd": {
        "post": Op(
            "send a venue command (start, pause, resume, rebirth) to every board; returns their "
            "replies",
            act.CommandResult,
            body=act.CommandBody,
            auth="action",
        )
    },
    "/api/pairings": {
        "post": Op(
            "import pairings CSV round,board,red,black; sends set_game unless ?send=0",
            act.PairingsImported,
            (SEND, *GUARDED),
            body=CSV,
            auth="action",
        )
    },
    "/api/players": {
        "post": Op("import players CSV name[,club][,rating]", act.Imported, body=CSV, auth="action")
    },
    "/api/rounds/{round}/set_games": {
        "post": Op(
            "send set_game to every board of a round", act.RoundSent, (ROUND,), auth="action"
        )
    },
    "/api/tournament/audit": {
        "get": Op(
            "every change to the tournament, newest first (who, when, what, before -> after), "
            "and the withdrawn players",
            act.AuditLog,
            auth="reader",
        )
    },
    "/api/tournament/withdraw": {
        "post": Op(
            "withdraw a player (退赛): paired by no import, absent in the TRF export",
            act.Withdrawn,
            body=act.PlayerBody,
            auth="action",
        )
    },
    "/api/tournament/readmit": {
        "post": Op("re-admit a withdrawn player", act.Withdrawn, body=act.PlayerBody, auth="action")
    },
    "/api/tournament/bye": {
        "post": Op(
            "give a player a bye in a round: full (the win's points), half, zero",
            act.ByeGiven,
            body=act.ByeBody,
            auth="action",
        )
    },
    "/api/tournament/undo": {
        "post": Op(
            "undo the last change (an import whose games have not begun, a withdrawal, a bye)",
            act.Undone,
            body=act.UndoBody,
            auth="action",
        )
    },
    "/api/alerts/{id}": {
        "post": Op(
            "ack | confirm | dismiss an alert (what it carries is ruled on its board: docs/web.md)",
            act.AlertRuled,
            (_p("id", "alert id", "integer"),),
            body=act.AlertAction,
            auth="action",
        )
    },
    # -- the pages (static HTML, no login: docs/web.md) --
    "/": {"get": Op("the live display", PAGE)},
    "/board/{board}": {"get": Op("one board's page", PAGE, (BOARD,))},
    "/arbiter": {"get": Op("the arbiter's station", PAGE)},
    "/record/{board}": {
        "get": Op("a board's record page (录谱): tap or type the moves", PAGE, (BOARD,))
    },
    "/standings": {"get": Op("the standings page", PAGE)},
    "/round-sheet": {"get": Op("a round's pairings and results for the wall (对阵表)", PAGE)},
    "/pairing": {"get": Op("the pairing program's page: import a TRF or pairs list", PAGE)},
    "/static/{path}": {
        "get": Op(
            "the pages' scripts, styles, icon and sounds",
            "*/*",
            (_p("path", "a file of venue_station/web/static"),),
        )
    },
}

# 录谱, the arbiter's view: the recording duties' routes (duties_view.py, duties_models.py)
PATHS.update({p: {k: Op(**kw) for k, kw in ops.items()} for p, ops in DUTY_OPERATIONS.items()})
# 录谱: the records' routes (records_view.py), their models beside them (records_models.py)
PATHS.update({p: {k: Op(**kw) for k, kw in ops.items()} for p, ops in RECORD_OPERATIONS.items()})
# the prize list (prizes_view.py, prizes_models.py)
PATHS.update({p: {k: Op(**kw) for k, kw in ops.items()} for p, ops in PRIZE_OPERATIONS.items()})
