"""HTTPS on the web port (issue 12): the station serves with the venue certificate that
``qizhong broker-config`` copies into its directory (tls/ca.crt, server.crt, server.key), a
client that trusts the venue CA logs in over it, and the session cookie is ``Secure``.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest
from support.broker import standard_roster
from support.station import ARBITER, ARBITER_PASSWORD, station_config
from support.tls import make_test_certs

from broker_config import Roster
from broker_config.files import write_broker_config
from venue_station.domain.station import Station
from venue_station.errors import ConfigError
from venue_station.web.web_server import StationWithWeb


def _venue_ca(folder: Path) -> dict[str, str]:
    """A venue CA and a server certificate for 127.0.0.1 signed by it (what a venue makes)."""
    folder.mkdir(parents=True, exist_ok=True)
    return make_test_certs(folder)


async def test_the_station_serves_https_with_the_venue_ca(
    tmp_path: Path, start_station: object
) -> None:
    certs = _venue_ca(tmp_path / "venue-ca")
    base = standard_roster()
    roster = Roster.build(
        venue="test", nodes={n.id: list(n.boards) for n in base.node}, tls={"port": 8883, **certs}
    )
    broker_dir = tmp_path / "broker"
    write_broker_config(roster, broker_dir)
    tls = broker_dir / "tls"
    config = station_config(
        tmp_path,
        http={"tls_cert": str(tls / "server.crt"), "tls_key": str(tls / "server.key")},
    )
    station: Station = await start_station(config, connect=False)  # type: ignore[operator]
    assert station.http_url.startswith("https://127.0.0.1:")
    trust = ssl.create_default_context(cafile=str(tls / "ca.crt"))
    async with httpx.AsyncClient(base_url=station.http_url, verify=trust) as client:
        assert (await client.get("/healthz")).status_code == 200
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200, r.text
        cookie = r.headers["set-cookie"].lower()
        assert "secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie
        assert (await client.get("/api/alerts")).status_code == 200  # the cookie came back
    # a client that does not trust the venue CA gets no connection at all
    async with httpx.AsyncClient(base_url=station.http_url) as stranger:
        with pytest.raises(httpx.ConnectError):
            await stranger.get("/healthz")
    # and plain HTTP on the HTTPS port is no way in
    plain = station.http_url.replace("https://", "http://")
    async with httpx.AsyncClient(base_url=plain) as client:
        with pytest.raises(httpx.HTTPError):
            r = await client.get("/healthz")
            assert r.status_code >= 400


def test_tls_needs_both_files() -> None:
    with pytest.raises(ConfigError, match="tls_cert and tls_key go together"):
        station_config(Path("/tmp"), http={"tls_cert": "server.crt"})


async def test_a_missing_certificate_file_is_a_clear_error(tmp_path: Path) -> None:
    config = station_config(
        tmp_path, http={"tls_cert": str(tmp_path / "no.crt"), "tls_key": str(tmp_path / "no.key")}
    )
    station = StationWithWeb(config, connect=False)
    with pytest.raises(ConfigError, match=r"http\.tls_cert: .*no\.crt: no such file"):
        await station.start()
    await station.stop()
