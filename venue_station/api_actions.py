"""The API's actions: login/logout, commands, imports, alert rulings.

Every action needs the arbiter's session cookie (``qz_session``) and the session's CSRF token
in the ``X-CSRF-Token`` header (401 without a valid session, 403 without the right token).
Login itself needs neither; it answers with the token.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from venue_station.api import ApiError, json_response, path_int, station_of
from venue_station.auth import COOKIE, CSRF_HEADER, Session
from venue_station.errors import PairingsError
from wire_contract.messages import ID_PATTERN, WireError

__all__ = ["action_routes", "require_session"]

_MAX_BODY = 2 * 1024 * 1024


def require_session(request: Request) -> Session:
    station = station_of(request)
    sid = request.cookies.get(COOKIE)
    session = station.sessions.get(sid)
    if session is None:
        raise ApiError(401, "log in first (no valid session cookie)", kind="unauthenticated")
    if station.sessions.check(sid, request.headers.get(CSRF_HEADER)) is None:
        raise ApiError(403, f"missing or wrong {CSRF_HEADER} header", kind="csrf")
    return session


async def _body(request: Request) -> bytes:
    body = await request.body()
    if len(body) > _MAX_BODY:
        raise ApiError(413, "request body too large", kind="too_large")
    return body


async def _json_object(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await _body(request) or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"body is not JSON: {exc}", where="body") from None
    if not isinstance(data, dict):
        raise ApiError(400, "body must be a JSON object", where="body")
    return data


# -- auth --------------------------------------------------------------------------------------
async def login(request: Request) -> Response:
    station = station_of(request)
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        form = urllib.parse.parse_qs((await _body(request)).decode("utf-8", "replace"))
        data: dict[str, Any] = {k: v[0] for k, v in form.items()}
    else:
        data = await _json_object(request)
    user, password = data.get("username"), data.get("password")
    if not isinstance(user, str) or not isinstance(password, str) or not user:
        raise ApiError(400, "username and password are required", where="body")
    session = station.sessions.login(user, password)
    if session is None:
        raise ApiError(401, "wrong username or password", kind="bad_login")
    response = json_response({"user": session.user, "role": session.role, "csrf": session.csrf})
    response.set_cookie(
        COOKIE,
        session.sid,
        httponly=True,
        samesite="strict",
        path="/",
        secure=station.config.http.secure_cookies,
    )
    return response


async def logout(request: Request) -> Response:
    session = require_session(request)
    station_of(request).sessions.logout(session.sid)
    response = json_response({"ok": True})
    response.delete_cookie(COOKIE, path="/")
    return response


async def whoami(request: Request) -> Response:
    session = station_of(request).sessions.get(request.cookies.get(COOKIE))
    if session is None:
        raise ApiError(401, "not logged in", kind="unauthenticated")
    return json_response({"user": session.user, "role": session.role, "csrf": session.csrf})


# -- commands ----------------------------------------------------------------------------------
def _command_of(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    cmd, args = data.get("cmd"), data.get("args", {})
    if not isinstance(cmd, str) or not cmd:
        raise ApiError(400, "cmd is required", where="body.cmd")
    if not isinstance(args, dict):
        raise ApiError(400, "args must be an object", where="body.args")
    return cmd, args


async def _run_command(request: Request, board: str | None) -> Response:
    session = require_session(request)
    station = station_of(request)
    cmd, args = _command_of(await _json_object(request))
    try:
        result = await station.send_command(board, cmd, args, user=session.user)
    except WireError as exc:
        raise ApiError(400, str(exc), kind="bad_command", where="body") from None
    except ConnectionError as exc:
        raise ApiError(503, str(exc), kind="not_connected") from None
    body = result.as_dict()
    if result.outcome == "timeout":
        who = f"board {board}" if board is not None else f"{len(result.missing)} board(s)"
        body["error"] = f"no reply from {who} within {station.config.command_timeout_s:g} s"
        return json_response(body, 504)
    return json_response(body)


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
    session = require_session(request)
    station = station_of(request)
    send = request.query_params.get("send", "1") not in ("0", "false", "no")
    try:
        body = await station.import_pairings(
            await _body(request), source="pairings.csv", send=send, user=session.user
        )
    except PairingsError as exc:
        raise ApiError(400, str(exc), kind="bad_csv", where=f"line {exc.line}") from None
    return json_response(body)


async def import_players(request: Request) -> Response:
    require_session(request)
    try:
        count = await station_of(request).import_players(await _body(request))
    except PairingsError as exc:
        raise ApiError(400, str(exc), kind="bad_csv", where=f"line {exc.line}") from None
    return json_response({"imported": count})


async def send_round(request: Request) -> Response:
    session = require_session(request)
    station = station_of(request)
    round_no = path_int(request, "round")
    replies = await station.send_round(round_no, user=session.user)
    if not replies:
        raise ApiError(404, f"no games in round {round_no}", kind="not_found", where="path.round")
    return json_response({"round": round_no, "set_game": replies})


# -- alerts ------------------------------------------------------------------------------------
_ACTIONS = {"ack": "acked", "confirm": "confirmed", "dismiss": "dismissed"}


async def alert_action(request: Request) -> Response:
    """Acknowledge, confirm or dismiss; a pending foul/forfeit is ruled on the board (resolve)."""
    session = require_session(request)
    station = station_of(request)
    assert station.store is not None
    alert_id = path_int(request, "id")
    action = (await _json_object(request)).get("action")
    if action not in _ACTIONS:
        raise ApiError(400, "action must be ack, confirm or dismiss", where="body.action")
    alert = await station.store.alert(alert_id)
    if alert is None and station.ingest and station.ingest.alert_ledger.is_unstored(alert_id):
        await station.ingest.flush()  # shown before it was stored: rule on the stored row
        alert = await station.store.alert(alert_id)
    if alert is None:
        raise ApiError(404, f"no alert {alert_id}", kind="not_found", where="path.id")
    body: dict[str, Any] = {}
    if action != "ack" and alert["kind"] in ("foul_pending", "forfeit_pending") and alert["seq"]:
        try:
            result = await station.send_command(
                alert["board"],
                "resolve",
                {"seq": alert["seq"], "status": _ACTIONS[action]},
                user=session.user,
            )
        except ConnectionError as exc:
            raise ApiError(503, str(exc), kind="not_connected") from None
        body["command"] = result.as_dict()
        if not result.ok:
            error = (
                "the board did not reply in time"
                if result.outcome == "timeout"
                else "the board refused"
            )
            return json_response(
                {**body, "error": error, "alert": alert},
                504 if result.outcome == "timeout" else 409,
            )
    updated = await station.store.update_alert(alert_id, status=_ACTIONS[action], by=session.user)
    station.hub.publish("alert", {"alert": updated})
    return json_response({**body, "alert": updated})


def action_routes() -> list[BaseRoute]:
    return [
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
