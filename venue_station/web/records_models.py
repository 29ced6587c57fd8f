"""The game records' (录谱) request bodies and responses as pydantic models, and their operations
for the OpenAPI document (``openapi.py`` takes ``OPERATIONS``). Routes: ``records_view.py``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from venue_station.web.api_action_models import Body
from venue_station.web.api_models import Out, SessionInfo
from venue_station.web.openapi_params import path_param as _p
from venue_station.web.openapi_params import query_param as _q
from wire_contract.topics import ID_PATTERN

__all__ = [
    "OPERATIONS",
    "RecordKeyBody",
    "RecordKeys",
    "RecordMoveBody",
    "RecordOut",
    "RecordUndoBody",
]

Side = Literal["red", "black"]
Ply = Annotated[int, Field(ge=0, le=2000)]
GameId = Annotated[str, Field(pattern=ID_PATTERN)]
# The last of the ``ply`` moves the client had, in ICCS ("" at ply 0): the count alone does not
# tell a move taken back and another entered since (an outsider recorder's phone, offline, had
# its kept move stored after a move it never saw). Absent: not checked.
After = Annotated[str | None, Field(pattern=r"^(?:[a-i][0-9][a-i][0-9])?$")]


class RecordMoveBody(Body):
    """One move in Chinese (炮二平五), WXF (C2.5, C2=5) or ICCS (h2e2), after ``ply`` moves."""

    move: Annotated[str, Field(min_length=1, max_length=32)]
    # the moves the client had: a stale client gets 409 record_changed (but the very move
    # stored after ``ply`` is answered as stored: a phone whose answer was lost sends it again)
    ply: Ply
    game: GameId | None = None  # default: the board's game now (the clock's, else the latest)
    after: After = None


class RecordUndoBody(Body):
    """Take back the last of the ``ply`` moves the client had."""

    ply: Ply
    game: GameId | None = None
    after: After = None


class RecordKeyBody(Body):
    """A board's record key (``/record/{board}?key=…``) for a recorder session of that board."""

    board: Annotated[str, Field(pattern=ID_PATTERN)]
    key: Annotated[str, Field(min_length=1, max_length=64)]


class MoveClock(Out):
    used_ms: int | None
    remaining_ms: int


class RecordMove(Out):
    ply: int
    side: Side
    iccs: str
    chinese: str
    wxf: str
    clock: MoveClock | None  # the press it pairs with (None: no press pairs)


class LegalMove(Out):
    iccs: str
    chinese: str
    wxf: str
    from_: str = Field(alias="from", serialization_alias="from")
    to: str


class PairingOut(Out):
    matched: bool  # every move has its press and every press its move
    # in a word: more / fewer moves than presses, or as many but a mover not the press's side
    verdict: Literal["matched", "more", "fewer", "differs"]
    disagreement: int | None  # the first ply whose mover is not the press's side
    moves: int
    presses: int


class Responsible(Out):
    side: Side
    player: str


class Consent(Out):
    by: str | None
    ms: int | None


class EarlierOut(Out):
    """The board's previous game, whose record is still due (fewer moves than presses)."""

    game: str
    round: int
    red: str
    black: str
    plies: int
    presses: int


class CurrentOut(Out):
    """The board's game now, beside the earlier one a page records (?game=)."""

    game: str
    round: int
    red: str
    black: str


class RecordOut(Out):
    """A game's record: the moves with their clocks, the position, the legal moves."""

    board: str
    game: str
    round: int
    red: str
    black: str
    required: bool  # the profile's [recording] rule names this board
    responsible: Responsible | None  # the winner, red on a draw; None before the result
    result: str | None
    start_fen: str
    fen: str
    to_move: Side
    ply: int
    in_check: bool
    over: bool  # no legal move: checkmate or stalemate
    moves: list[RecordMove]
    legal: list[LegalMove]
    pairing: PairingOut
    updated_ms: int | None
    updated_by: str | None
    consent: Consent | None
    # GET without ?game= only: the board's previous game whose record is still due
    earlier: EarlierOut | None = None
    current: CurrentOut | None = Field(
        default=None,
        description="with ?game=: the board's game now, when it is another (its next round)",
    )


class RecordKey(Out):
    board: str
    game: str | None
    red: str
    black: str
    required: bool
    responsible: Responsible | None  # the winner, red on a draw; None before the result
    key: str
    path: str  # /record/{board}?key=… for the QR code


class RecordKeys(Out):
    round: int | None
    keys: list[RecordKey]


BOARD = _p("board", "board id")
GAME_Q = _q("game", "a game of this board (default: the board's game now)")
PGN = "application/x-chess-pgn"

# path -> method -> the keyword arguments of ``openapi.Op``
OPERATIONS: dict[str, dict[str, dict[str, Any]]] = {
    "/api/records/{board}": {
        "get": {
            "summary": "the record of the board's game (录谱): moves with their clocks, the "
            "position, the legal moves, the pairing with the clock's presses",
            "response": RecordOut,
            "params": (BOARD, GAME_Q),
        }
    },
    "/api/records/{board}/moves": {
        "post": {
            "summary": "add one move (Chinese, WXF or ICCS) checked by the rules; 422 "
            "illegal_move | wrong_side | ambiguous_move | unreadable_move, 409 record_changed | "
            "record_not_required, 404 no_game, 403 recorder_only; the very move stored after "
            "ply, sent again, is answered as stored",
            "response": RecordOut,
            "params": (BOARD,),
            "body": RecordMoveBody,
            "auth": "action",
        }
    },
    "/api/records/{board}/undo": {
        "post": {
            "summary": "take back the last move; 409 record_changed | nothing_to_undo | "
            "record_not_required",
            "response": RecordOut,
            "params": (BOARD,),
            "body": RecordUndoBody,
            "auth": "action",
        }
    },
    "/api/record-keys": {
        "get": {
            "summary": "every board's record key and page path for the QR sheet (chief/admin)",
            "response": RecordKeys,
            "params": (_q("round", "the round whose boards (default: the latest)", "integer"),),
            "auth": "reader",
        }
    },
    "/api/record-keys/qr.svg": {
        "get": {
            "summary": "a required board's record link (the station's address as asked, "
            "/record/{board}?key=…) as a QR code, SVG (chief/admin); 409 record_not_required, "
            "404 no_game",
            "response": "image/svg+xml",
            "params": (
                {**_q("board", "board id"), "required": True},
                _q("round", "the round whose game (default: the latest)", "integer"),
            ),
            "auth": "reader",
        }
    },
    "/record/sheet": {
        "get": {
            "summary": "the chief's printable sheet (录谱): a QR code per board to record",
            "response": "text/html",
        }
    },
    "/api/auth/record-key": {
        "post": {
            "summary": "open a recorder session for one board with its record key; sets the "
            "qz_session cookie (401 bad_key)",
            "response": SessionInfo,
            "body": RecordKeyBody,
        }
    },
    "/api/export/games/{game}/record.pgn": {
        "get": {
            "summary": "a game's record as xiangqi PGN: ICCS moves, the Chinese and [%clk] in "
            "each comment",
            "response": PGN,
            "params": (_p("game", "game id"),),
        }
    },
    "/api/export/rounds/{round}/records.pgn": {
        "get": {
            "summary": "a round's records as one xiangqi PGN file (games with moves)",
            "response": PGN,
            "params": (_p("round", "round number, 1..999", "integer"),),
        }
    },
}
