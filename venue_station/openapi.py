"""The OpenAPI 3.1 document of the station's API, served at ``/api/openapi.json``.

Written by hand next to the routes; a test checks that every API route is in it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SCHEMA"]


def _q(name: str, desc: str, kind: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": desc,
        "schema": {"type": kind},
    }


def _p(name: str, desc: str, kind: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": desc,
        "schema": {"type": kind},
    }


def _ok(desc: str, media: str = "application/json") -> dict[str, Any]:
    return {
        "200": {"description": desc, "content": {media: {}}},
        "400": {"$ref": "#/components/responses/Error"},
    }


def _get(summary: str, *params: dict[str, Any], media: str = "application/json") -> dict[str, Any]:
    return {
        "get": {"summary": summary, "parameters": list(params), "responses": _ok(summary, media)}
    }


def _action(
    summary: str,
    body: str,
    *params: dict[str, Any],
    media: str = "application/json",
    auth: bool = True,
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "parameters": list(params),
        "requestBody": {"content": {media: {"schema": {"description": body}}}},
        "responses": {
            **_ok(summary),
            "401": {"$ref": "#/components/responses/Error"},
            "403": {"$ref": "#/components/responses/Error"},
            "504": {"description": "no reply from the board(s) in time"},
        },
    }
    if auth:
        op["security"] = [{"session": [], "csrf": []}]
    return {"post": op}


BOARD = _p("board", "board id")
ROUND = _p("round", "round number, 1..999", "integer")

SCHEMA: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "qizhong station API",
        "version": "1",
        "description": "Boards, events, games, results, alerts, commands and exports of a "
        'venue. Errors are {"error": str, "where"?: str}. Roles: viewer reads alerts and '
        "metrics; arbiter rules on alerts and commands a board; chief also imports, sends "
        "rounds, commands the venue and runs the knockout; admin also lists the accounts.",
    },
    "components": {
        "securitySchemes": {
            "session": {"type": "apiKey", "in": "cookie", "name": "qz_session"},
            "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token"},
        },
        "responses": {
            "Error": {
                "description": "a clear error",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["error"],
                            "properties": {
                                "error": {"type": "string"},
                                "where": {"type": "string"},
                            },
                        }
                    }
                },
            }
        },
    },
    "paths": {
        "/healthz": _get("health: ok when the store is open and the broker connected"),
        "/metrics": _get("Prometheus text exposition", media="text/plain"),
        "/api/openapi.json": _get("this document"),
        "/api/station": _get("venue, regulation, time control, station session, station_ts"),
        "/api/boards": _get("every board: status, state snapshot, online, last_seq, missing"),
        "/api/boards/{board}": _get("one board and its 50 latest events", BOARD),
        "/api/events": _get(
            "stored events, paged by id",
            _q("board", "board id"),
            _q("round", "round number", "integer"),
            _q("game", "game id"),
            _q("type", "event type(s), comma separated"),
            _q("after", "id cursor", "integer"),
            _q("before", "id cursor", "integer"),
            _q("limit", "1..1000", "integer"),
            _q("order", "asc|desc"),
        ),
        "/api/games": _get("games with derived result and fouls", _q("round", "round", "integer")),
        "/api/games/{game}": _get(
            "one game, its result, fouls and clock log", _p("game", "game id")
        ),
        "/api/results": _get(
            "results of a round (all rounds without it)", _q("round", "round", "integer")
        ),
        "/api/fouls": _get("fouls per player over the tournament"),
        "/api/rounds": _get("rounds and their pairings"),
        "/api/round": _get(
            "the round for the hall screens: number, start, late deadline, next scheduled start"
        ),
        "/api/alerts": _get(
            "alerts, newest first",
            _q("status", "open|acked|confirmed|dismissed|active"),
            _q("limit", "1..1000", "integer"),
        ),
        "/api/set_aside": _get(
            "messages the writer could not store, with the reason, newest first",
            _q("limit", "1..1000", "integer"),
        ),
        "/api/stream": _get(
            "SSE: hello, state, status, event, alert, game, ping; each data has station_ts",
            media="text/event-stream",
        ),
        "/api/export/rounds/{round}/results.{fmt}": _get(
            "a round's results for the pairing software",
            ROUND,
            _p("fmt", "csv|json"),
            media="text/csv",
        ),
        "/api/export/games/{game}/clock.{fmt}": _get(
            "a game's clock log", _p("game", "game id"), _p("fmt", "csv|pgn"), media="text/csv"
        ),
        "/api/standings": _get(
            "standings after a round per the regulation's tiebreaks; rows with reason_zh/en",
            _q("round", "after this round (default: the last with a game)", "integer"),
            _q("tag", "only players with this tag (comma separated: any of them)"),
        ),
        "/api/export/standings.{fmt}": _get(
            "the standings as CSV or JSON",
            _p("fmt", "csv|json"),
            _q("round", "after this round", "integer"),
            _q("tag", "tag(s), comma separated"),
            media="text/csv",
        ),
        "/api/export/tournament.trf": _get(
            "the FIDE TRF-2026 file after a round (points 2/1/0 as 162, BB?, XXS; ranks by the "
            "regulation's tiebreaks), CR LF line ends",
            _q("round", "after this round (default: the last with a result)", "integer"),
            _q("absent", "start ranks absent next round, comma separated (240 Z)"),
            media="text/plain",
        ),
        "/api/trf/entrants": _get("start rank -> player key and name; the byes per round"),
        "/api/trf": _action(
            "import a TRF (chief/admin): players by start rank, and the round it carries paired "
            "with its byes; sends set_game unless ?send=0",
            "TRF text (UTF-8)",
        ),
        "/api/pairs": _action(
            "import a pairing engine's pairs list (chief/admin) as ?round= (default: the next); "
            "boards 1..n in order, 'N 0' a bye; sends set_game unless ?send=0",
            "pairs list text",
        ),
        "/api/regulation/reasons": _get(
            "the profile's foul, forfeit (立即判负) and result reason codes with zh/en wording "
            "and counts, and its handicap rule, for the arbiter page's choices"
        ),
        "/api/knockout": _get(
            "the knockout: games, proposed games, lots, pending colour choices, placings"
        ),
        "/api/knockout/start": _action(
            "start the knockout from the standings after after_round (default: the profile's); "
            "the lot's seed is recorded",
            "{seed?: int, after_round?: int, top?: [4 names] when the 4th place is shared}",
        ),
        "/api/knockout/games/{id}/confirm": _action(
            "confirm a proposed knockout game on a board; sends set_game and returns the reply",
            "{board?} (a tie-break game defaults to its slow game's board)",
            _p("id", "ko-sf1|ko-sf2|ko-f|ko-3, +-tb for a tie-break game"),
        ),
        "/api/knockout/games/{id}/result": _action(
            "enter a knockout game's result by hand",
            "{result: red|black|draw}",
            _p("id", "knockout game id"),
        ),
        "/api/knockout/choices/{id}": _action(
            "the slow game's black chooses his colour for the tie-break game",
            "{side: red|black}",
            _p("id", "the drawn slow game's id"),
        ),
        "/api/auth/login": _action(
            "log in; sets the qz_session cookie, returns the csrf token; 429 with Retry-After "
            "past the per-address or per-account limit",
            "{username, password} (JSON or form)",
            auth=False,
        ),
        "/api/auth/logout": _action("log out", "empty"),
        "/api/auth/session": _get("the logged-in user and csrf token (401 when not)"),
        "/api/accounts": _get("the accounts and their roles, no hashes (admin only)"),
        "/api/boards/{board}/cmd": _action(
            "send a command to a board; returns its reply", "{cmd, args}", BOARD
        ),
        "/api/venue/cmd": _action(
            "send a venue command (start, pause, resume, rebirth) to every "
            "board; returns their replies",
            "{cmd, args}",
        ),
        "/api/pairings": _action(
            "import pairings CSV round,board,red,black; sends set_game unless ?send=0",
            "CSV text",
            _q("send", "0 to only store"),
            media="text/csv",
        ),
        "/api/players": _action(
            "import players CSV name[,club][,rating]", "CSV text", media="text/csv"
        ),
        "/api/rounds/{round}/set_games": _action(
            "send set_game to every board of a round", "empty", ROUND
        ),
        "/api/alerts/{id}": _action(
            "ack | confirm | dismiss an alert (a pending foul/forfeit is resolved on its board)",
            "{action}",
            _p("id", "alert id", "integer"),
        ),
    },
}
