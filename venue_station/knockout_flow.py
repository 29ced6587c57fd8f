"""The knockout at the station (Meishan): start it, propose, confirm onto boards, results, colours.

The state machine is ``clock_service.knockout.Knockout`` (pure). The station keeps only what it
needs to rebuild it: the lot's seed, the four players and every input in order (confirm,
record, colour choice) as one JSON document in the ``meta`` table (key ``knockout``). Every
request replays it, so a station restart loses nothing and the lots come out the same.

Results come from the stored events of the knockout's game ids (``ko-sf1`` …, a tie-break game
``…-tb``) once the game is confirmed on a board; the arbiter can also enter one by hand. Each
result read from the events is appended to the inputs, so the record says where it came from.

Routes (actions need a chief arbiter's session + CSRF; see access.py):
``GET /api/knockout``, ``POST /api/knockout/start {seed?, after_round?, top?}``,
``POST /api/knockout/games/{id}/confirm {board?}`` (sends ``set_game``),
``POST /api/knockout/games/{id}/result {result}``, ``POST /api/knockout/choices/{id} {side}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import secrets
import weakref
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from clock_service.knockout import Knockout, KnockoutError, ProposedGame
from clock_service.standings import StandingsError
from venue_station.access import require_session
from venue_station.bodies import json_object
from venue_station.http_base import ApiError, json_response, station_of
from venue_station.standings_view import (
    confirmed_outcome,
    decisive_events,
    regulation_of,
    standings_of,
)
from wire_contract.messages import ID_PATTERN
from wire_contract.wallclock import wall_ms

if TYPE_CHECKING:
    from venue_station.station import Station

__all__ = ["META_KEY", "KnockoutRecord", "load", "routes", "view"]

log = logging.getLogger(__name__)
META_KEY = "knockout"
_GAME_ID = re.compile(r"^ko-(sf1|sf2|f|3)(-tb)?$")
_locks: weakref.WeakKeyDictionary[Station, asyncio.Lock] = weakref.WeakKeyDictionary()


def _lock(station: Station) -> asyncio.Lock:
    lock = _locks.get(station)
    if lock is None:
        lock = _locks[station] = asyncio.Lock()
    return lock


class KnockoutRecord:
    """The stored document and the Knockout replayed from it."""

    def __init__(self, doc: dict[str, Any], knockout: Knockout) -> None:
        self.doc = doc
        self.ko = knockout

    @classmethod
    def replay(cls, station: Station, doc: dict[str, Any]) -> KnockoutRecord:
        ko = Knockout.start(
            doc["top"], random.Random(doc["seed"]), regulation=regulation_of(station)
        )
        for step in doc["inputs"]:
            op = step["op"]
            if op == "confirm":
                ko.confirm(step["game"], board=step["board"])
            elif op == "record":
                ko.record(step["game"], step["result"])
            elif op == "choose":
                ko.choose_colour(step["game"], step["side"])
            else:
                raise KnockoutError(f"stored knockout: unknown input {op!r}")
        return cls(doc, ko)

    def apply(self, step: dict[str, Any]) -> Any:
        """Apply one new input (raises ``KnockoutError`` and changes nothing when refused)."""
        op = step["op"]
        if op == "confirm":
            out: Any = self.ko.confirm(step["game"], board=step["board"])
        elif op == "record":
            out = self.ko.record(step["game"], step["result"])
        else:
            out = self.ko.choose_colour(step["game"], step["side"])
        self.doc["inputs"].append(step)
        return out

    def results(self) -> dict[str, dict[str, Any]]:
        return {s["game"]: s for s in self.doc["inputs"] if s["op"] == "record"}

    def game_ids(self) -> list[str]:
        """Every game opened so far, in the order they appeared."""
        ids: list[str] = []
        for lot in self.ko.lots:
            if lot.game_id not in ids:
                ids.append(lot.game_id)
        return ids


async def load(station: Station) -> KnockoutRecord | None:
    assert station.store is not None
    text = await station.store.get_meta(META_KEY)
    if text is None:
        return None
    return KnockoutRecord.replay(station, json.loads(text))


async def _save(station: Station, rec: KnockoutRecord) -> None:
    assert station.store is not None
    await station.store.set_meta(META_KEY, json.dumps(rec.doc, ensure_ascii=False))
    station.hub.publish("knockout", {"knockout": view(rec)})


async def _sync(station: Station, rec: KnockoutRecord) -> bool:
    """Record the results the boards reported for confirmed, undecided games; True if any."""
    assert station.store is not None
    open_games = [p for p in rec.ko.propose_next() if p.board is not None]
    if not open_games:
        return False
    events = await decisive_events(station.store, (p.id for p in open_games))
    changed = False
    for p in open_games:
        outcome = confirmed_outcome(events[p.id], station.regulation)
        if outcome.decided:
            result = outcome.outcome  # red | black | draw | double_forfeit (the profile decides)
            step = {"op": "record", "game": p.id, "result": result, "source": "events"}
            try:
                rec.apply({**step, "ts": wall_ms()})
            except KnockoutError as exc:  # e.g. a drawn tie-break game in a "none" profile
                log.warning("knockout %s: the board's result needs the arbiter: %s", p.id, exc)
                continue
            changed = True
    return changed


def _game_json(p: ProposedGame, result: dict[str, Any] | None, drawn: bool) -> dict[str, Any]:
    return {
        "id": p.id,
        "stage": p.stage.value,
        "stage_zh": p.stage.zh,
        "red": p.red,
        "black": p.black,
        "tc": p.tc,
        "tiebreak": p.tiebreak,
        "board": p.board,
        "draw_winner": None if p.draw_winner is None else p.draw_winner.value,
        "result": None if result is None else result["result"],
        "result_source": None if result is None else result.get("source"),
        "drawn": drawn,
    }


def view(rec: KnockoutRecord | None) -> dict[str, Any]:
    if rec is None:
        return {"started": False}
    ko, results = rec.ko, rec.results()
    proposed = ko.propose_next()
    games = []
    for gid in rec.game_ids():
        res = results.get(gid)
        drawn = res is not None and res["result"] == "draw" and not gid.endswith("-tb")
        games.append(_game_json(ko.game(gid), res, drawn))
    return {
        "started": True,
        "after_round": rec.doc["after_round"],
        "seed": rec.doc["seed"],
        "top": rec.doc["top"],
        "started_by": rec.doc.get("by"),
        "started_ms": rec.doc.get("started_ms"),
        "games": games,
        "proposed": [_game_json(p, None, False) for p in proposed],
        "pending_choices": [
            {"game": c.slow_game_id, "chooser": c.chooser, "opponent": c.opponent}
            for c in ko.pending_choices()
        ],
        "lots": [
            {
                "game": lot.game_id,
                "red": lot.red,
                "black": lot.black,
                "method": lot.method,
                "chooser": lot.chooser,
            }
            for lot in ko.lots
        ],
        "placings": [{"place": p.place, "player": p.player} for p in ko.placings()],
        "finished": ko.finished,
    }


async def _current(station: Station) -> KnockoutRecord:
    rec = await load(station)
    if rec is None:
        raise ApiError(409, "the knockout has not been started", kind="knockout_state")
    if await _sync(station, rec):
        await _save(station, rec)
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
    async with _lock(station):
        rec = await load(station)
        if rec is not None and await _sync(station, rec):
            await _save(station, rec)
    return json_response(view(rec))


def _seed(data: dict[str, Any]) -> int:
    seed = data.get("seed")
    if seed is None:
        return secrets.randbits(48)
    if type(seed) is not int or not 0 <= seed < 2**63:
        raise ApiError(400, f"seed {seed!r} must be a whole number >= 0", where="body.seed")
    return seed


async def start(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    data = await json_object(request)
    reg = regulation_of(station)
    if reg.knockout is None:
        raise ApiError(409, f"{reg.name}: the regulation has no knockout", kind="knockout_state")
    seed = _seed(data)
    after = data.get("after_round", reg.knockout.after_round)
    if type(after) is not int or not 1 <= after <= reg.tournament.rounds:
        raise ApiError(
            400,
            f"after_round {after!r} must be a round 1..{reg.tournament.rounds}",
            where="body.after_round",
        )
    async with _lock(station):
        if await load(station) is not None:
            raise ApiError(409, "the knockout is already started", kind="knockout_state")
        try:
            rows = await standings_of(station, after_round=after)
        except StandingsError as exc:
            msg = f"cannot compute the standings: {exc}"
            raise ApiError(400, msg, kind="bad_standings") from None
        top = _top(data.get("top"), rows, after)
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
            rec = KnockoutRecord.replay(station, doc)
        except KnockoutError as exc:
            raise _refused(exc) from None
        await _save(station, rec)
    return json_response(view(rec))


def _top(given: Any, rows: list[Any], after: int) -> list[str]:
    """The four from the standings, or the arbiter's four when the 4th place is shared."""
    names = [r.player for r in rows]
    if given is not None:
        if (
            not isinstance(given, list)
            or len(given) != 4
            or len(set(given)) != 4
            or not all(isinstance(n, str) and n in names for n in given)
        ):
            raise ApiError(
                400, "top must be 4 different players of the standings, in order", where="body.top"
            )
        return list(given)
    if len(rows) < 4:
        raise ApiError(409, f"only {len(rows)} players in the standings", kind="knockout_state")
    if len(rows) > 4 and rows[3].rank == rows[4].rank:
        raise ApiError(
            409,
            f"4th place after round {after} is shared ({rows[3].player}, {rows[4].player}): "
            "give the four players as top",
            kind="knockout_state",
        )
    return names[:4]


async def confirm(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    gid = _game_id(request)
    data = await json_object(request)
    board = data.get("board")
    async with _lock(station):
        rec = await _current(station)
        if board is None:
            try:
                board = rec.ko.game(gid).board
            except KnockoutError as exc:
                raise _refused(exc, "path.id") from None
        if not isinstance(board, str) or not re.match(ID_PATTERN, board):
            raise ApiError(400, f"board {board!r} is not a valid board id", where="body.board")
        try:
            game = rec.apply({"op": "confirm", "game": gid, "board": board, "by": session.user})
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
        await _save(station, rec)
    args = {
        "game": game.id,
        "tc": game.tc,
        "red": game.red,
        "black": game.black,
        "tiebreak": game.tiebreak,
    }
    body: dict[str, Any] = {"game": _game_json(game, None, False), "set_game": args}
    try:
        result = await station.send_command(board, "set_game", args, user=session.user)
    except ConnectionError as exc:
        body["error"] = f"confirmed, but set_game was not sent: {exc}"
        return json_response(body, 503)
    body["command"] = result.as_dict()
    if result.outcome == "timeout":
        body["error"] = f"confirmed, but board {board} did not reply to set_game in time"
        return json_response(body, 504)
    if not result.ok:
        body["error"] = f"confirmed, but board {board} refused set_game"
        return json_response(body, 409)
    return json_response(body)


async def record(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    gid = _game_id(request)
    result = (await json_object(request)).get("result")
    if result not in ("red", "black", "draw"):
        raise ApiError(400, f"result {result!r} must be red, black or draw", where="body.result")
    async with _lock(station):
        rec = await _current(station)
        step = {"op": "record", "game": gid, "result": result, "source": "manual"}
        try:
            rec.apply({**step, "by": session.user})
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
        await _save(station, rec)
    return json_response(view(rec))


async def choose(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    gid = _game_id(request)
    side = (await json_object(request)).get("side")
    if side not in ("red", "black"):
        raise ApiError(400, f"side {side!r} must be red or black", where="body.side")
    async with _lock(station):
        rec = await _current(station)
        try:
            rec.apply({"op": "choose", "game": gid, "side": side, "by": session.user})
        except KnockoutError as exc:
            raise _refused(exc, "path.id") from None
        await _save(station, rec)
    return json_response(view(rec))


def routes() -> list[BaseRoute]:
    return [
        Route("/api/knockout", get_knockout),
        Route("/api/knockout/start", start, methods=["POST"]),
        Route("/api/knockout/games/{id}/confirm", confirm, methods=["POST"]),
        Route("/api/knockout/games/{id}/result", record, methods=["POST"]),
        Route("/api/knockout/choices/{id}", choose, methods=["POST"]),
    ]
