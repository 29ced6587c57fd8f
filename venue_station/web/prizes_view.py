"""The prize list over HTTP (docs/prizes.md): ``GET /api/prizes``, ``GET
/api/export/prizes.csv?lang=zh|en`` and the ``/prizes`` page (a static file that reads the
first and refreshes itself on the SSE ``game`` messages). Public, as the standings are."""

from __future__ import annotations

import csv
import io
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from clock_service.knockout import KnockoutError
from clock_service.standings import StandingsError
from venue_station.domain.exports import safe_cell, with_bom
from venue_station.domain.prizes import draw_prizes
from venue_station.resources import static_dir
from venue_station.web.http_base import ApiError, json_response, station_of
from venue_station.web.pages import SECURITY_HEADERS

__all__ = ["routes"]


async def _sheet(request: Request) -> dict[str, Any]:
    station = station_of(request)
    try:
        sheet = await draw_prizes(station)
    except (StandingsError, KnockoutError) as exc:
        raise ApiError(400, f"cannot compute the standings: {exc}", kind="bad_standings") from None
    if sheet is None:
        raise ApiError(
            404, f"the regulation {station.config.regulation!r} has no prizes", kind="no_prizes"
        )
    return sheet.as_dict(station.config.regulation)


async def prizes(request: Request) -> Response:
    return json_response(await _sheet(request))


_HEADERS = {
    None: ("list", "place", "to", "player", "prize", "shared", "withdrawn", "knockout_place"),
    "zh": ("奖项", "名次", "棋手", "奖金（元）", "说明"),
    "en": ("List", "Place", "Player", "Prize (yuan)", "Note"),
}
_NOTES = {
    "zh": {"pending": "第1–4名待淘汰赛决出", "shared": "并列第{place}–{to}名，平分",
           "withdrawn": "已退赛", "ko": "淘汰赛第{n}名",
           "u14": "少儿", "women": "女子", "local": "本地", "master": "大师"},
    "en": {"pending": "places 1–4 decided by the knockout",
           "shared": "places {place}–{to} shared equally", "withdrawn": "withdrawn",
           "ko": "knockout place {n}", "u14": "under 14", "women": "woman", "local": "local player",
           "master": "master player"},
}  # fmt: skip


def _csv_rows(sheet: dict[str, Any], lang: str | None) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for plist in sheet["lists"]:
        for row in plist["rows"]:
            if lang is None:
                out.append(
                    (plist["key"], row["place"], row["to"], row["player"], row["prize"],
                     row["shared"], row["withdrawn"], row["knockout_place"] or "")
                )  # fmt: skip
                continue
            words = _NOTES[lang]
            notes = []
            if row["knockout_place"]:
                notes.append(words["ko"].format(n=row["knockout_place"]))
            if row["knockout_pending"]:
                notes.append(words["pending"])
            elif row["shared"]:
                notes.append(words["shared"].format(**row))
            notes += [words.get(tag, tag) for tag in row["tags"]]  # why he is in the group
            if row["withdrawn"]:
                notes.append(words["withdrawn"])
            place = row["place"] if not row["shared"] else f"{row['place']}–{row['to']}"
            sep = "；" if lang == "zh" else "; "
            out.append((plist[lang], place, row["player"], row["prize"], sep.join(notes)))
    return out


async def export_prizes(request: Request) -> Response:
    sheet = await _sheet(request)
    lang = request.query_params.get("lang")
    lang = lang if lang in ("zh", "en") else None
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(_HEADERS[lang])
    # a player's name as a spreadsheet formula (=HYPERLINK…) stays text (a reviewer)
    writer.writerows([safe_cell(c) for c in row] for row in _csv_rows(sheet, lang))
    name = f"{station_of(request).config.venue}-prizes.csv"
    return Response(
        with_bom(buf.getvalue()),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


async def page(request: Request) -> Response:
    headers = dict(SECURITY_HEADERS)
    headers["Cache-Control"] = "no-cache"
    return FileResponse(
        static_dir() / "prizes.html", media_type="text/html; charset=utf-8", headers=headers
    )


def routes() -> list[BaseRoute]:
    return [
        Route("/api/prizes", prizes),
        Route("/api/export/prizes.csv", export_prizes),
        Route("/prizes", page, methods=["GET", "HEAD"]),
    ]
