"""The knockout over HTTP (Meishan): start it, propose, confirm onto boards, results, colours.

What is kept and how it is replayed is ``knockout.py`` (``Station.knockout``, a
``KnockoutDesk``: its lock makes each action one read-apply-save); this module checks the
request, calls it and answers.

Routes (actions need a chief arbiter's session + CSRF; see access.py):
``GET /api/knockout``, ``POST /api/knockout/start {seed?, after_round?, top?}`` (refused, 409
``swiss_unfinished`` / ``swiss_unpaired``, until every game of rounds 1..after_round is
decided), ``POST /api/knockout/games/{id}/confirm {board?}`` (sends ``set_game``; recorded
unless the board refuses it), ``POST /api/knockout/games/{id}/result {result}``,
``POST /api/knockout/choices/{id} {side}``.
"""

from __future__ import annotations

import re
import secrets
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from clock_service.knockout import KnockoutError
from clock_service.standings import StandingsError
from venue_station.domain.knockout import KnockoutRecord, game_json, swiss_unfinished, view
from venue_station.web.access import require_session
from venue_station.web.api_action_models import (
    KnockoutChoiceBody,
    KnockoutConfirmBody,
    KnockoutResultBody,
    KnockoutStartBody,
)
from venue_station.web.bodies import parse_body
from venue_station.web.http_base import ApiError, json_response, station_of
from wire_contract.messages import ID_PATTERN
from wire_contract.wallclock import wall_ms

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["routes"]

_GAME_ID = re.compile(r"^ko-(sf1|sf2|f|3)(-tb)?$")


async def _current(station: Station) -> KnockoutRecord:
    rec = await station.knockout.current()
    if rec is None:
        raise ApiError(409, "the knockout has not been started", kind="knockout_state")
    return rec


def _game_id(request: Request) -> str:
    gid = str(request.path_params["id"])
    if not _GAME_ID.match(gid):
        raise ApiError(
            404,
            f"no knockout game {gid!r} (ko-sf1, ko-sf2, ko-f, ko-3, or one of them + -tb)",
            kind="not_found",
            where="path.id",
        )
    return gid


def _refused(exc: KnockoutError, where: str | None = None) -> ApiError:
    return ApiError(409, str(exc), kind="knockout_state", where=where)


# -- routes -------------------------------------------------------------------------------------
async def get_knockout(request: Request) -> Response:
    station = station_of(request)
    async with station.knockout.lock:
        rec = await station.knockout.current()
    return json_response(view(rec))


async def start(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    data = await parse_body(request, KnockoutStartBody)
    reg = station.regulation
    if reg.knockout is None:
        raise ApiError(409, f"{reg.name}: the regulation has no knockout", kind="knockout_state")
    seed = secrets.randbits(48) if data.seed is None else data.seed
    after = reg.knockout.after_round if data.after_round is None else data.after_round
    # the model holds it to >= 1; the last round is the regulation's
    if after > reg.tournament.rounds:
        raise ApiError(
            400,
            f"after_round {after!r} must be a round 1..{reg.tournament.rounds}",
            where="body.after_round",
        )
    async with station.knockout.lock:
        if await station.knockout.load() is not None:
            raise ApiError(409, "the knockout is already started", kind="knockout_state")
        # the Swiss part it follows must be over: every game of rounds 1..after decided
        not_ready = swiss_unfinished(await station.outcomes(), after)
        if not_ready is not None:
            raise ApiError(
                409, not_ready.message, kind=not_ready.code, extra={"args": not_ready.args}
            )
        try:
            rows = await station.standings(after_round=after)
        except StandingsError as exc:
            msg = f"cannot compute the standings: {exc}"
            raise ApiError(400, msg, kind="bad_standings") from None
        top = _top(data.top, rows, after)
        doc = {
            "v": 1,
            "after_round": after,
            "seed": seed,
            "top": top,
            "by": session.user,
            "started_ms": wall_ms(),
            "inputs": [],
        }
        try:
            rec = station.knockout.start(doc)
        except KnockoutError as exc:
            raise _refused(exc) from None
        await station.knockout.save(rec)
    return json_response(view(rec))


def _top(given: list[str] | None, rows: list[Any], after: int) -> list[str]:
    """The four from the standings, or the arbiter's four when the 4th place is shared."""
    names = [r.player for r in rows]
    if given is not None:
        # the model holds it to four strings; who they are is the standings'
        if len(set(given)) != 4 or not all(n in names for n in given):
            raise ApiError(
                400, "top must be 4 different players of the standings, in order", where="body.top"
            )
        return list(given)
    if len(rows) < 4:
        raise ApiError(409, f"only {len(rows)} players in the standings", kind="knockout_state")
    if len(rows) > 4 and rows[3].rank == rows[4].rank:
        shared = [r.player for r in rows if r.rank == rows[3].rank]
        raise ApiError(
            409,
            f"4th place after round {after} is shared ({', '.join(shared)}): "
            "give the four players as top",
            kind="knockout_fourth_shared",
            # the players placed above the tie: the page lets the chief pick the rest of four
            extra={
                "args": {
                    "after_round": after,
                    "players": shared,
                    "above": [r.player for r in rows if r.rank < rows[3].rank],
                }
            },
        )
    return names[:4]


async def confirm(request: Request) -> Response:
    """Put a game on a board: ``set_game`` is sent first, and the knockout takes the game as
    on that board only when the board took it (or did not answer, or could not be reached:
    the arbiter sets it up by hand and sends it again). A board that refuses it leaves the
    knockout as it was: the game stays where it was (not on a board, or on its earlier one)
    and can be assigned again."""
    session = require_session(request, "chief")
    station = station_of(request)
    gid = _game_id(request)
    board = (await parse_body(request, KnockoutConfirmBody)).board
    async with station.knockout.lock:
        rec = await _current(station)
        try:
            before = _shown(rec, gid)
            if board is None:
                board = rec.ko.game(gid).board
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
        # the model checked a board sent; the one defaulted from the record is checked here
        if not isinstance(board, str) or not re.match(ID_PATTERN, board):
            raise ApiError(400, f"board {board!r} is not a valid board id", where="body.board")
        # a board typed wrong (99 of 8) would take the game and leave it nowhere
        seen = station.ingest is not None and board in station.ingest.boards
        if not seen and board not in station.config.known_boards():
            raise ApiError(
                409, f"there is no board {board}: not in the roster, never seen online",
                kind="unknown_board", where="body.board", extra={"args": {"board": board}},
            )  # fmt: skip
        # a Swiss round beside the knockout already on this board, its game undecided: the
        # set_game would take the board from it silently (a reviewer; an import keeps off
        # the knockout's boards, knockout_boards.py, and this is the other order)
        after = int(rec.doc["after_round"])
        swiss = [g for g in await station.require_store().games() if str(g["board"]) == board
                 and int(g["round"]) > after and g.get("result") is None]  # fmt: skip
        if swiss:
            raise ApiError(
                409, f"board {board} has {swiss[0]['game']} of round {swiss[0]['round']} "
                "still to be decided: choose another board",
                kind="board_held", where="body.board",
                extra={"args": {"board": board, "game": swiss[0]["game"]}},
            )  # fmt: skip
        step = {"op": "confirm", "game": gid, "board": board, "by": session.user}
        try:
            game = rec.apply(step)  # a trial on this copy: nothing is saved before the board
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
    args = {
        "game": game.id,
        "tc": game.tc,
        "red": game.red,
        "black": game.black,
        "tiebreak": game.tiebreak,
    }
    shown = game_json(game, None, False, after_round=after, confirmed=True)  # (after: above)
    body: dict[str, Any] = {"game": shown, "set_game": args}
    try:
        result = await station.send_command(board, "set_game", args, user=session.user)
    except ConnectionError as exc:
        await _keep(station, step)
        body["error"] = f"confirmed, but set_game was not sent: {exc}"
        return json_response(body, 503)
    body["command"] = result.as_dict()
    if result.outcome == "rejected":
        body["game"] = before
        where = f"still on board {before['board']}" if before["confirmed"] else "not on a board"
        body["error"] = f"board {board} refused set_game: {gid} is {where}"
        return json_response(body, 409)
    await _keep(station, step)
    if result.outcome == "timeout":
        body["error"] = f"confirmed, but board {board} did not reply to set_game in time"
        return json_response(body, 504)
    return json_response(body)


def _shown(rec: KnockoutRecord, gid: str) -> dict[str, Any]:
    """The game as the knockout has it now (raises ``KnockoutError`` for no such game)."""
    confirmed = any(s["op"] == "confirm" and s["game"] == gid for s in rec.doc["inputs"])
    after = int(rec.doc["after_round"])
    return game_json(rec.ko.game(gid), None, False, after_round=after, confirmed=confirmed)


async def _keep(station: Station, step: dict[str, Any]) -> None:
    """Record a confirmation once the board has its game (the knockout read afresh: another
    arbiter may have acted while the board answered)."""
    async with station.knockout.lock:
        rec = await _current(station)
        try:
            rec.apply(step)
        except KnockoutError as exc:
            msg = f"board {step['board']} has the game, but the knockout moved on: {exc}"
            raise ApiError(409, msg, kind="knockout_state", where="path.id") from None
        await station.knockout.save(rec)


async def record(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    gid = _game_id(request)
    result = (await parse_body(request, KnockoutResultBody)).result
    async with station.knockout.lock:
        rec = await _current(station)
        step = {"op": "record", "game": gid, "result": result, "source": "manual"}
        try:
            rec.apply({**step, "by": session.user})
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
        await station.knockout.save(rec)
    return json_response(view(rec))


async def choose(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    gid = _game_id(request)
    side = (await parse_body(request, KnockoutChoiceBody)).side
    async with station.knockout.lock:
        rec = await _current(station)
        try:
            rec.apply({"op": "choose", "game": gid, "side": side, "by": session.user})
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
        await station.knockout.save(rec)
    return json_response(view(rec))


def routes() -> list[BaseRoute]:
    return [
        Route("/api/knockout", get_knockout),
        Route("/api/knockout/start", start, methods=["POST"]),
        Route("/api/knockout/games/{id}/confirm", confirm, methods=["POST"]),
        Route("/api/knockout/games/{id}/result", record, methods=["POST"]),
        Route("/api/knockout/choices/{id}", choose, methods=["POST"]),
    ]
