"""The game records' routes (录谱, issue 29): read a board's record, add and undo a move, the
per-game and per-round xiangqi PGN, the boards' record keys and the session a key opens.

- ``GET /api/records/{board}[?game=]``: anyone (the records exist for online reporting);
  without ``game``, ``earlier`` names the board's previous game when its record is still due.
- ``POST /api/records/{board}/moves`` ``{"move", "ply"[, "game"]}`` and ``…/undo``
  ``{"ply"[, "game"]}``: a recorder of the board or an arbiter and above, with the CSRF token.
  Refusals are ``domain.records.RecordRefused``: its status, its ``code`` and ``args``.
- ``GET /api/record-keys[?round=]``: the chief's QR sheet (``/record/sheet``), and
  ``GET /api/record-keys/qr.svg?board=[&round=]``: one board's link as a QR code (segno's SVG, the
  station's address as the browser asked for it); ``POST /api/auth/record-key``
  ``{"board", "key"}``: a recorder session of that one board (the cookie, as a login).
- ``GET /api/export/games/{game}/record.pgn``, ``GET /api/export/rounds/{round}/records.pgn``.
"""

from __future__ import annotations

import io
import re
from typing import Any

import segno
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from venue_station.auth import RECORDER, Session
from venue_station.domain import exports
from venue_station.domain.record_keys import secret_fingerprint
from venue_station.domain.records import RecordRefused, RecordView
from venue_station.live.results import DECISIVE_TYPES, derive_game
from venue_station.web.access import require_reader, require_recorder, session_response
from venue_station.web.bodies import parse_body
from venue_station.web.http_base import (
    ApiError,
    int_param,
    json_response,
    path_int,
    sessions_of,
    station_of,
)
from venue_station.web.records_models import RecordKeyBody, RecordMoveBody, RecordUndoBody
from wire_contract.topics import ID_PATTERN

__all__ = ["routes"]

PGN_MEDIA = "application/x-chess-pgn; charset=utf-8"
SVG_MEDIA = "image/svg+xml"


def _board(request: Request) -> str:
    board = str(request.path_params["board"])
    if not re.match(ID_PATTERN, board):
        raise ApiError(400, f"board {board!r} is not a valid id", where="path.board")
    return board


def _refused(exc: RecordRefused) -> ApiError:
    return ApiError(exc.status, exc.message, kind=exc.code, extra={"args": exc.args_})


def _game_query(request: Request) -> str | None:
    game = request.query_params.get("game") or None
    if game is not None and not re.match(ID_PATTERN, game):
        raise ApiError(400, f"game {game!r} is not a valid id", where="query.game")
    return game


async def record(request: Request) -> Response:
    board = _board(request)
    desk = station_of(request).records
    game = _game_query(request)
    try:
        view = await desk.view(board, game=game)
    except RecordRefused as exc:
        raise _refused(exc) from None
    body = view.as_dict()
    # no game asked (the board's link, its QR code): the earlier game still to record, if any
    body["earlier"] = None if game is not None else await desk.earlier_due(view)
    if game is not None:  # an earlier game recorded: the board's game now, if it is another
        body["current"] = await desk.current_beside(view)
    return json_response(body)


async def _recorder(request: Request, board: str) -> Session:
    """``require_recorder``, and a record key's session ends once the key secret it was opened
    with is deleted or replaced (the printed keys are void: a reviewer found them still open)."""
    session = require_recorder(request, board)
    store = station_of(request).require_store()
    if session.key_fp is not None and session.key_fp != await secret_fingerprint(store):
        sessions_of(request).logout(session.sid)
        raise ApiError(401, "this record key is no longer valid", kind="unauthenticated")
    return session


async def add_move(request: Request) -> Response:
    board = _board(request)
    session = await _recorder(request, board)
    body = await parse_body(request, RecordMoveBody)
    desk = station_of(request).records
    try:
        view = await desk.add(
            board, body.move, ply=body.ply, by=session.user, game=body.game, after=body.after
        )
    except RecordRefused as exc:
        raise _refused(exc) from None
    return json_response(view.as_dict())


async def undo_move(request: Request) -> Response:
    board = _board(request)
    session = await _recorder(request, board)
    body = await parse_body(request, RecordUndoBody)
    desk = station_of(request).records
    try:
        view = await desk.undo(
            board, ply=body.ply, by=session.user, game=body.game, after=body.after
        )
    except RecordRefused as exc:
        raise _refused(exc) from None
    return json_response(view.as_dict())


async def _record_pgn(station: Any, view: RecordView) -> str:
    """The record's PGN with what the station knows of the game beside the moves: its date
    (the local day of its first event), its time control and how it ended (an outsider's
    reader found no Date, no TimeControl for the ``[%clk]``, no Termination)."""
    store = station.require_store()
    events = await store.game_events(view.game)
    row = await store.game(view.game) or {}
    more: dict[str, str] = {}
    date = exports.pgn_date(events)
    if date:
        more["Date"] = date
    if row.get("tc"):
        more["TimeControl"] = exports.pgn_tc(str(row["tc"]))
    decisive = [e for e in events if e["type"] in DECISIVE_TYPES]
    outcome = derive_game(decisive, station.regulation)
    forfeits = {r.code for r in station.regulation.reasons("forfeit")}
    ending = exports.pgn_termination(
        outcome.result if outcome.decided else None, outcome.reason, forfeits=forfeits
    )
    if ending:
        more["Termination"] = ending
    return str(station.records.pgn(view, event=station.event_title, more=more))


def _pgn(text: str, filename: str) -> Response:
    return Response(
        text,
        media_type=PGN_MEDIA,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


async def game_pgn(request: Request) -> Response:
    station = station_of(request)
    game = str(request.path_params["game"])
    view: RecordView | None = None
    if re.match(ID_PATTERN, game):
        view = await station.records.view_game(game)
    if view is None:
        raise ApiError(404, f"no game {game!r}", kind="not_found", where="path.game")
    return _pgn(await _record_pgn(station, view), f"{game}-record.pgn")


async def round_pgn(request: Request) -> Response:
    station = station_of(request)
    round_no = path_int(request, "round")
    views = await station.records.round_views(round_no)
    if not views:
        raise ApiError(
            404, f"no records in round {round_no}", kind="no_records", where="path.round"
        )
    parts = [await _record_pgn(station, v) for v in views]
    name = f"{station.config.venue}-round{round_no}-records.pgn"
    return _pgn("\n".join(p if p.endswith("\n") else p + "\n" for p in parts), name)


async def _round_games(request: Request) -> tuple[int | None, list[dict[str, Any]]]:
    """The round asked (``?round=``, default the latest with games) and its games by board."""
    games = await station_of(request).require_store().games()
    round_no = int_param(request, "round", low=1, high=999)
    if round_no is None and games:
        round_no = max(int(g["round"]) for g in games)
    return round_no, sorted((g for g in games if g["round"] == round_no), key=_board_order)


async def record_keys(request: Request) -> Response:
    """Every board's key (of the round asked, default the latest with games): the chief's."""
    require_reader(request, "chief")
    records = station_of(request).records
    round_no, games = await _round_games(request)
    keys = []
    for g in games:
        board = str(g["board"])
        key = await records.key(board)
        view = await records.view_game(str(g["game"]))
        keys.append(
            {
                "board": board,
                "game": g["game"],
                "red": str(g["red"]),
                "black": str(g["black"]),
                "required": await records.required(g),
                "responsible": view.responsible if view is not None else None,
                "key": key,
                "path": f"/record/{board}?key={key}",
            }
        )
    return json_response({"round": round_no, "keys": keys})


async def record_qr(request: Request) -> Response:
    """One required board's record link as a QR code (SVG): the chief's sheet shows it."""
    require_reader(request, "chief")
    board = request.query_params.get("board") or ""
    if not re.match(ID_PATTERN, board):
        raise ApiError(400, f"board {board!r} is not a valid id", where="query.board")
    records = station_of(request).records
    round_no, games = await _round_games(request)
    game = next((g for g in games if str(g["board"]) == board), None)
    if game is None:
        raise ApiError(
            404,
            f"no game on board {board} in round {round_no}",
            kind="no_game",
            where="query.board",
            extra={"args": {"board": board}},
        )
    if not await records.required(game):
        raise ApiError(
            409,
            f"board {board} needs no record",
            kind="record_not_required",
            where="query.board",
            extra={"args": {"board": board}},
        )
    # the station's address as the browser asked for it (its Host and scheme): location.origin
    url = str(request.base_url).rstrip("/") + f"/record/{board}?key={await records.key(board)}"
    out = io.BytesIO()
    segno.make_qr(url, error="m").save(out, kind="svg", scale=4, border=4)
    # the key is a secret: no cache keeps it
    return Response(out.getvalue(), media_type=SVG_MEDIA, headers={"Cache-Control": "no-store"})


def _board_order(game: dict[str, object]) -> tuple[int, str]:
    board = str(game["board"])
    return (int(board), "") if board.isdigit() else (10**6, board)


async def key_session(request: Request) -> Response:
    """A board's record key opens a recorder session of that board (as a login: the cookie)."""
    body = await parse_body(request, RecordKeyBody)
    station = station_of(request)
    if not await station.records.check_key(body.board, body.key):
        raise ApiError(401, f"not the record key of board {body.board}", kind="bad_key")
    key_fp = await secret_fingerprint(station.require_store())
    session = sessions_of(request).open(
        f"board-{body.board}-key", RECORDER, boards=(body.board,), key_fp=key_fp
    )
    return session_response(session, secure=station.config.http.cookies_secure)


def routes() -> list[BaseRoute]:
    return [
        Route("/api/records/{board}", record),
        Route("/api/records/{board}/moves", add_move, methods=["POST"]),
        Route("/api/records/{board}/undo", undo_move, methods=["POST"]),
        Route("/api/record-keys", record_keys),
        Route("/api/record-keys/qr.svg", record_qr),
        Route("/api/auth/record-key", key_session, methods=["POST"]),
        Route("/api/export/games/{game}/record.pgn", game_pgn),
        Route("/api/export/rounds/{round}/records.pgn", round_pgn),
    ]
