"""The API's actions: login/logout, commands, imports, alert rulings.

Every action needs the arbiter's session cookie (``qz_session``) and the session's CSRF token
in the ``X-CSRF-Token`` header (401 without a valid session, 403 without the right token), and
an account whose role allows it (403 otherwise; see ``access.py``). Login itself needs neither;
it answers with the token, and is rate-limited (``login_guard.py``: 429 with ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from venue_station.auth import COOKIE
from venue_station.domain import tournament_desk
from venue_station.domain.board_list import unseen_boards
from venue_station.domain.import_guard import no_ruling_waits
from venue_station.domain.pairings import parse_players
from venue_station.domain.rulings import RulingRefused
from venue_station.domain.station import Station
from venue_station.errors import ImportRefused, PairingsError
from venue_station.web.access import (
    client_address,
    require_reader,
    require_session,
    session_response,
)
from venue_station.web.api_action_models import (
    AlertAction,
    CommandBody,
    Imported,
    LoggedOut,
    LoginBody,
)
from venue_station.web.api_models import Accounts, SessionInfo
from venue_station.web.bodies import parse_body, read_body, validated
from venue_station.web.http_base import (
    ApiError,
    flag_param,
    import_refused,
    int_param,
    json_response,
    login_guard_of,
    model_response,
    path_int,
    sessions_of,
    station_of,
    tournament_changed,
)
from venue_station.web.login_guard import HasherBusy
from venue_station.web.text_bounds import check_command_args
from wire_contract.messages import ID_PATTERN, WireError

__all__ = ["action_routes", "require_session"]


async def _body(request: Request) -> bytes:
    """A CSV import's body (``http.max_import_bytes``)."""
    return await read_body(request, station_of(request).config.http.max_import_bytes)


# -- auth --------------------------------------------------------------------------------------
async def login(request: Request) -> Response:
    station = station_of(request)
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        raw = await read_body(request, station.config.http.max_json_bytes)
        form = urllib.parse.parse_qs(raw.decode("utf-8", "replace"))
        login_body = validated(LoginBody, {k: v[0] for k, v in form.items()})
    else:
        login_body = await parse_body(request, LoginBody)
    user, password = login_body.username, login_body.password
    guard, sessions = login_guard_of(request), sessions_of(request)
    retry = guard.admit(client_address(request), user)
    if retry:
        raise ApiError(
            429,
            f"too many login attempts; try again in {retry} s",
            kind="rate_limited",
            headers={"Retry-After": str(retry)},
        )
    try:
        role = await guard.hash(lambda: sessions.verify(user, password))
    except HasherBusy:
        raise ApiError(
            503, "too many logins at once; try again", kind="busy", headers={"Retry-After": "1"}
        ) from None
    if role is None:
        guard.failed(user)
        raise ApiError(401, "wrong username or password", kind="bad_login")
    session = sessions.open(user, role)
    return session_response(session, secure=station.config.http.cookies_secure)


async def logout(request: Request) -> Response:
    session = require_session(request, None)  # a recorder logs out too
    sessions_of(request).logout(session.sid)
    response = model_response(LoggedOut(ok=True))
    response.delete_cookie(COOKIE, path="/", secure=station_of(request).config.http.cookies_secure)
    return response


async def whoami(request: Request) -> Response:
    session = sessions_of(request).get(request.cookies.get(COOKIE))
    if session is None:
        raise ApiError(401, "not logged in", kind="unauthenticated")
    return model_response(
        SessionInfo(
            user=session.user,
            role=session.role,
            csrf=session.csrf,
            boards=list(session.boards) if session.boards is not None else None,
        )
    )


# -- commands ----------------------------------------------------------------------------------
async def _run_command(request: Request, board: str | None) -> Response:
    # A board is an arbiter's; the whole venue (start the round, pause all) the chief's.
    session = require_session(request, "arbiter" if board is not None else "chief")
    station = station_of(request)
    sent = await parse_body(request, CommandBody)
    cmd, args = sent.cmd, sent.args
    check_command_args(args)
    if cmd == "result" and board is not None and not sent.replace:
        decided = await station.game_on_board_decided(board)
        if decided is not None:
            raise ApiError(
                409,
                f"game {decided} already has a result; send replace: true to replace it",
                kind="already_decided",
                extra={"args": {"game": decided}},
            )
    if cmd in ("result", "withdraw") and board is not None and not sent.after_pairing:
        await _check_not_paired_from(station, board, args.get("seq") if cmd == "withdraw" else None)
    try:
        result = await station.send_command(board, cmd, args, user=session.user)
    except WireError as exc:
        raise ApiError(400, str(exc), kind="bad_command", where="body") from None
    except ConnectionError as exc:
        raise ApiError(503, str(exc), kind="not_connected") from None
    body = result.as_dict()
    if board is None and (unseen := unseen_boards(station)):
        body["unseen"] = unseen  # the round's boards the command could not reach: named
    if result.outcome == "timeout":
        who = f"board {board}" if board is not None else f"{len(result.missing)} board(s)"
        body["error"] = f"no reply from {who} within {station.config.command_timeout_s:g} s"
        body["code"] = "no_answer"
        return json_response(body, 504)
    return json_response(body)


# what a withdraw can take back that a later round's pairing or the knockout's draw read
_RULED = ("result", "foul", "forfeit")


async def _check_not_paired_from(station: Station, board: str, seq: Any) -> None:
    """A result (or a foul, a forfeit: the points and the tie-breaks) a later round was paired
    from, or the knockout drawn from, is changed only when the arbiter says so twice: the
    pairing stands as it was made (it is not paired again), and the arbiter should know."""
    decided = await station.game_on_board_decided(board)
    store = station.require_store()
    game = await store.game(decided) if decided is not None else None
    if game is None:
        return
    later = [r["round"] for r in await store.rounds() if r["round"] > game["round"]]
    ko_after, _ = await station.knockout.boards_in_play()
    if ko_after is not None and ko_after >= game["round"]:
        later.append(ko_after + 1)  # the knockout was drawn from this round's standings
    if not later:
        return
    if seq is not None:  # a withdraw: only of what decides (a start or a warning changes none)
        events = await store.game_events(game["game"], _RULED)
        if not any(e["seq"] == seq for e in events):
            return
    raise ApiError(
        409,
        f"round {min(later)} was paired from game {decided}'s result: it is not paired "
        "again; send after_pairing: true to change the result anyway",
        kind="paired_from",
        extra={"args": {"game": decided, "round": game["round"], "paired": min(later)}},
    )


async def board_cmd(request: Request) -> Response:
    import re

    board = request.path_params["board"]
    if not re.match(ID_PATTERN, board):
        raise ApiError(400, f"board {board!r} is not a valid id", where="path.board")
    return await _run_command(request, board)


async def venue_cmd(request: Request) -> Response:
    return await _run_command(request, None)


# -- imports -----------------------------------------------------------------------------------
async def import_pairings(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    send = request.query_params.get("send", "1") not in ("0", "false", "no")
    try:
        body = await station.import_pairings(
            await _body(request),
            source="pairings.csv",
            send=send,
            user=session.user,
            replace=int_param(request, "replace_round", low=1, high=999),
            dry_run=flag_param(request, "dry_run"),
        )
    except PairingsError as exc:
        raise ApiError(400, str(exc), kind="bad_csv", where=f"line {exc.line}") from None
    except ImportRefused as exc:
        raise import_refused(exc) from None
    if not body.get("dry_run"):
        tournament_changed(request)
    return json_response(body)


async def import_players(request: Request) -> Response:
    require_session(request, "chief")
    dry_run = flag_param(request, "dry_run")
    station, data = station_of(request), await _body(request)
    try:
        # (parsed on a thread: a long file is CPU work, the loop serves meanwhile)
        names = {str(r["name"]) for r in await asyncio.to_thread(parse_players, data)}
        # a spreadsheet that still names a player since put right or removed: refused first
        await tournament_desk.check_not_stale(station.require_store(), names)
        count = await station.import_players(data, dry_run=dry_run)
        new = None
        if dry_run:  # who the file would add, for the chief to see before 确认导入
            new = sorted(names - await station.require_store().player_names())
    except ImportRefused as exc:
        raise import_refused(exc) from None
    except PairingsError as exc:
        # the line and why, in a code the page words (it said only "出错了（HTTP 400）")
        extra = {"line": exc.line or None, "args": {"reason": exc.code, **exc.args_}}
        raise ApiError(
            400, str(exc), kind="bad_csv", where=f"line {exc.line}", extra=extra
        ) from None
    if not dry_run:
        tournament_changed(request)
    # ``dry_run`` said only of a preview, as the other imports say it
    answer = Imported(imported=count, dry_run=True if dry_run else None, new_players=new)
    return json_response(answer.model_dump(mode="json", exclude_none=True))


async def send_round(request: Request) -> Response:
    session = require_session(request, "chief")
    station = station_of(request)
    round_no = path_int(request, "round", high=999)
    try:  # a flag of the round before still to rule would be left nowhere (an outsider chief)
        await no_ruling_waits(station, round_no)
    except ImportRefused as exc:
        raise import_refused(exc) from None
    replies = await station.send_round(round_no, user=session.user)
    if not replies:
        raise ApiError(404, f"no games in round {round_no}", kind="not_found", where="path.round")
    return json_response({"round": round_no, "set_game": replies})


# -- alerts ------------------------------------------------------------------------------------
_ACTIONS = {"ack": "acked", "confirm": "confirmed", "dismiss": "dismissed"}


async def alert_action(request: Request) -> Response:
    """Acknowledge, confirm or dismiss. An alert that carries a proposal (a flag's loss, a
    lateness, a switched-off clock, a foul, a pending warning, a move count reached) is ruled
    on the board by the command that settles it (``Station.rule_alert``); a refused ruling
    answers 409 with its ``code`` (already_ruled, already_decided, no_proposal)."""
    session = require_session(request)
    station = station_of(request)
    assert station.store is not None
    alert_id = path_int(request, "id", high=2**31 - 1)
    action = (await parse_body(request, AlertAction)).action
    # One ruling of an alert at a time: two arbiters tapping at once, the second waits for the
    # first and is told it was ruled, by whom (it was told "the board refused": an outsider).
    async with request.app.state.alert_locks.hold(alert_id):
        return await _rule(request, station, alert_id, action, session.user)


async def _rule(request: Request, station: Any, alert_id: int, action: str, user: str) -> Response:
    # Asked before the store is read: an alert the writer commits meanwhile was unstored.
    unstored = bool(station.ingest and station.ingest.alert_ledger.is_unstored(alert_id))
    alert = await station.store.alert(alert_id)
    if alert is None and station.ingest and unstored:
        await station.ingest.flush()  # shown before it was stored: rule on the stored row
        alert = await station.store.alert(alert_id)
    if alert is None:
        raise ApiError(404, f"no alert {alert_id}", kind="not_found", where="path.id")
    body: dict[str, Any] = {}
    try:
        ruling, result = await station.rule_alert(alert, action, user=user)
    except RulingRefused as exc:
        raise ApiError(
            409, exc.message, kind=exc.code, extra={"args": exc.args_, "alert": alert}
        ) from None
    except ConnectionError as exc:
        raise ApiError(503, str(exc), kind="not_connected") from None
    if result is not None:
        body["command"] = result.as_dict()
        if not result.ok:
            timeout = result.outcome == "timeout"
            error = "the board did not reply in time" if timeout else "the board refused"
            code = "no_answer" if timeout else "refused"
            return json_response(
                {**body, "error": error, "code": code, "alert": alert}, 504 if timeout else 409
            )
    updated = await station.store.update_alert(alert_id, status=ruling.status, by=user)
    station.hub.publish("alert", {"alert": updated})
    return json_response({**body, "alert": updated})


# -- accounts ----------------------------------------------------------------------------------
async def accounts(request: Request) -> Response:
    """The station's accounts and their roles (no hashes); admin only."""
    require_reader(request, "admin")
    return model_response(Accounts.model_validate({"accounts": sessions_of(request).accounts()}))


def action_routes() -> list[BaseRoute]:
    return [
        Route("/api/accounts", accounts),
        Route("/api/auth/login", login, methods=["POST"]),
        Route("/api/auth/logout", logout, methods=["POST"]),
        Route("/api/auth/session", whoami),
        Route("/api/boards/{board}/cmd", board_cmd, methods=["POST"]),
        Route("/api/venue/cmd", venue_cmd, methods=["POST"]),
        Route("/api/pairings", import_pairings, methods=["POST"]),
        Route("/api/players", import_players, methods=["POST"]),
        Route("/api/rounds/{round}/set_games", send_round, methods=["POST"]),
        Route("/api/alerts/{id}", alert_action, methods=["POST"]),
    ]
