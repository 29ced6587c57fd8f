"""The web started beside the domain (issue 14): a ``Station`` runs without any web, a
``WebServer`` serves one from outside it, and ``StationWithWeb`` composes both and cleans up
when its web cannot start."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from support.station import station_config

from venue_station.domain.station import Station
from venue_station.errors import StationError
from venue_station.web.web_server import StationWithWeb, WebServer

PAIRINGS = "round,board,red,black\n1,1,王天一,郑惟桐\n"


async def test_a_web_server_serves_a_station_from_beside_it(tmp_path: Path) -> None:
    station = Station(station_config(tmp_path), connect=False)
    web = WebServer(station, on_failure=station.request_stop)
    await station.open()
    try:
        assert not hasattr(station, "http_url")  # the domain has no web of its own
        await station.import_pairings(PAIRINGS, send=False)
        await web.start()
        assert web.port is not None and web.url.endswith(f":{web.port}")
        async with httpx.AsyncClient(base_url=web.url, timeout=10) as client:
            games = (await client.get("/api/games")).json()["games"]
            assert [g["game"] for g in games] == ["r1-b1"]
        web.begin_stop()
        await station.stop_work()
        await web.stop()
        with pytest.raises(httpx.ConnectError):
            async with httpx.AsyncClient(base_url=web.url, timeout=2) as client:
                await client.get("/healthz")
        # the store outlives the web: the domain still answers until it is closed
        assert [g["game"] for g in await station.require_store().games()] == ["r1-b1"]
    finally:
        await station.stop()


async def test_a_web_that_cannot_start_stops_the_station_with_it(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        station = StationWithWeb(station_config(tmp_path, http={"port": port}), connect=False)
        with pytest.raises(StationError, match="did not start"):
            await station.start()
        assert station._stop.is_set()
        assert station.store is not None and station.store._closed
    finally:
        taken.close()


async def test_without_a_web_there_is_no_url(tmp_path: Path) -> None:
    station = StationWithWeb(station_config(tmp_path), connect=False, serve_http=False)
    async with station:
        with pytest.raises(StationError, match="no HTTP"):
            _ = station.http_url
        assert (await station.outcomes()) == []
