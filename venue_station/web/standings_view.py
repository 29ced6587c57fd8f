"""The standings over HTTP: ``GET /api/standings``, the CSV/JSON exports and the ``/standings``
page (a static file; it refreshes itself on the SSE ``game`` messages).

What counts and how is ``standings.py`` (``Station.standings``: from the store, by the one
outcome function); this module reads the query and writes the answer. Once Meishan's knockout
is finished, the whole event's latest table (no ``round`` or the last one, no ``tag``) is the
final list (``Station.shown_standings``): places 1–4 from the knockout (``knockout_place`` on
their rows, ``"final": true`` on the answer), then the rest from 5 in their Swiss order.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from clock_service.knockout import KnockoutError
from clock_service.standings import (
    Standing,
    StandingsError,
    standings_csv,
    standings_json,
    tiebreak_words,
)
from venue_station.domain.exports import with_bom
from venue_station.domain.prizes import provisional_reasons
from venue_station.domain.trf_state import load_state, tournament_rounds
from venue_station.resources import static_dir
from venue_station.web.http_base import ApiError, int_param, json_response, station_of
from venue_station.web.pages import SECURITY_HEADERS

__all__ = ["routes"]


# -- HTTP ---------------------------------------------------------------------------------------
def _query(request: Request) -> tuple[int | None, str | tuple[str, ...] | None, str | None]:
    station = station_of(request)
    rounds = station.regulation.tournament.rounds
    after = int_param(request, "round", low=0, high=rounds)
    text = request.query_params.get("tag") or None
    if text is None:
        return after, None, None
    tags = tuple(sorted({x.strip() for x in text.split(",")} - {""}))
    if not tags or any(len(x) > 32 for x in tags):
        raise ApiError(400, f"tag {text!r}: one or more tags (comma separated)", where="query.tag")
    return after, tags[0] if len(tags) == 1 else tags, text


async def _compute(request: Request) -> tuple[list[Standing], bool, int | None, str | None]:
    after, tag, tag_text = _query(request)
    try:
        rows, final = await station_of(request).shown_standings(after_round=after, tag=tag)
    except (StandingsError, KnockoutError) as exc:
        raise ApiError(400, f"cannot compute the standings: {exc}", kind="bad_standings") from None
    return rows, final, after, tag_text


async def standings(request: Request) -> Response:
    rows, final, after, tag = await _compute(request)
    station = station_of(request)
    store = station.require_store()
    state = await load_state(store)
    withdrawn = state.withdrawn
    games = await station.outcomes()  # once, for the undecided and the final title
    # the event's (or a group's) table once nothing is left to play or rule: titled final as
    # the prize list is (Wulong's stayed 成绩排名 after round 9: an outsider organiser)
    last = tournament_rounds(state, station.regulation.tournament.rounds)
    ko_done = final or (tag is not None and await station.knockout.placings() is not None)
    complete = after in (None, last) and not await provisional_reasons(
        station, state, ko_done, games
    )
    # every group of the event, whatever the table is filtered by: the page's menu offers them
    # all (opened at ?tag=local it offered only 本地: an outsider organiser)
    groups = sorted({x for tags in (await store.reads.player_tags()).values() for x in tags})
    return json_response(
        {
            "regulation": station.config.regulation,
            "after_round": after,
            "tag": tag,
            "groups": groups,
            "final": final,
            "complete": complete,
            "standings": [r.as_dict() for r in rows],
            "withdrawn": withdrawn,
            "undecided": _undecided(games, after),
        }
    )


def _undecided(games: list[Any], after: int | None) -> list[dict[str, object]]:
    """The games of the rounds counted (up to ``after``; none given: up to the last round with
    a game) that have no confirmed result: the table does not count them yet, and says so."""
    last = after if after is not None else max((int(g["round"]) for g, _ in games), default=0)
    return [
        {"round": int(g["round"]), "board": str(g["board"]), "status": o.status}
        for g, o in games
        if int(g["round"]) <= last and o.status != "confirmed"
    ]


# The standings CSV's header row in the organiser's words (``?lang=zh|en``, what the page's
# link asks: an outsider chief opened rank,player,points… in a spreadsheet); the field codes
# stay the default, for programs.
_CSV_HEADERS = {
    "zh": ("名次", "棋手", "积分", "累进分", "胜局", "犯规", "后走局数", "对局数", "并列",
           "区分依据", "去除轮次", "说明", "说明（英文）", "全场名次", "标签", "淘汰赛名次"),
    "en": ("Rank", "Player", "Points", "Progressive", "Wins", "Fouls", "Games as black", "Games",
           "Shared", "Decided by", "Dropped rounds", "Reason (Chinese)", "Reason", "Event rank",
           "Tags", "Knockout place"),
}  # fmt: skip


async def export_standings(request: Request) -> Response:
    fmt = request.path_params["fmt"]
    if fmt not in ("csv", "json"):
        raise ApiError(
            404, f"no export format {fmt!r} (csv, json)", kind="not_found", where="path.fmt"
        )
    rows, final, after, tag = await _compute(request)
    station = station_of(request)
    name = f"{station.config.venue}-standings" + (f"-round{after}" if after is not None else "")
    if fmt == "csv":
        lang = request.query_params.get("lang")
        lang = lang if lang in _CSV_HEADERS else None
        headers = _CSV_HEADERS[lang] if lang else None
        words = tiebreak_words(lang) if lang else None
        text = with_bom(standings_csv(rows, headers=headers, decided_words=words))
        media = "text/csv; charset=utf-8"
    else:
        text = standings_json(
            rows, regulation=station.regulation, after_round=after, tag=tag, final=final
        )
        media = "application/json"
    return Response(
        text,
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="{name}.{fmt}"'},
    )


async def page(request: Request) -> Response:
    headers = dict(SECURITY_HEADERS)
    headers["Cache-Control"] = "no-cache"
    return FileResponse(
        static_dir() / "standings.html", media_type="text/html; charset=utf-8", headers=headers
    )


def routes() -> list[BaseRoute]:
    return [
        Route("/api/standings", standings),
        Route("/api/export/standings.{fmt}", export_standings),
        Route("/standings", page, methods=["GET", "HEAD"]),
    ]
