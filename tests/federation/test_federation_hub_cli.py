"""`qizhong hub` refuses what it cannot run with: a clear message and exit status 2."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from support.nats import HubProcess, NatsCentre
from support.postgres import database_url

QIZHONG = str(Path(sys.executable).parent / "qizhong")


def hub(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [QIZHONG, "hub", "--nats", "nats://127.0.0.1:1", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_a_missing_password_file_is_named(tmp_path: Path) -> None:
    run = hub("--db", "postgresql://postgres@127.0.0.1/x", "--password-file", str(tmp_path / "no"))
    assert run.returncode == 2
    assert "--password-file" in run.stderr and "Traceback" not in run.stderr


def test_a_bad_database_url_is_named(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("secret")
    run = hub("--db", "mysql://x/y", "--password-file", str(pw))
    assert run.returncode == 2 and "database URL" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.postgres
def test_an_unreachable_database_is_named(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("secret")
    run = hub("--db", database_url("test", user="no_such_role"), "--password-file", str(pw))
    assert run.returncode == 2 and "--db: cannot open the store" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--regulation", "no-such-profile"), "regulation profile: no-such-profile"),
        (("--venue-regulation", "va"), "'va': expected VENUE=PROFILE"),
        (("--venue-regulation", "a.b=meishan-2016"), "--venue-regulation 'a.b=meishan-2016': "),
        (("--venue-regulation", "va=/no/such.toml"), "regulation profile: /no/such.toml"),
        (("--public-ws", "http://x:1"), "'http://x:1': expected ws://host:port"),
        (("--public-ws", "ws://x:1/ 'unsafe-inline'"), "expected ws://host:port"),
        (("--live-max-boards", "0"), "--live-max-boards 0: 1..10000"),
        (("--live-max-boards", "10001"), "--live-max-boards 10001: 1..10000"),
    ],
)
def test_bad_page_settings_are_named(tmp_path: Path, args: tuple[str, ...], named: str) -> None:
    """The standings' profiles and the live page's settings are checked before anything runs."""
    pw = tmp_path / "pw"
    pw.write_text("secret")
    run = hub("--db", "postgresql://postgres@127.0.0.1/x", "--password-file", str(pw), *args)
    assert run.returncode == 2 and named in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and "usage:" not in run.stderr  # ours, not argparse's


@pytest.mark.postgres
def test_the_page_settings_reach_the_running_hubs_pages(
    nats_centre: NatsCentre, hub_db: str
) -> None:
    """`qizhong hub` hands its profiles and live-page settings to the pages it serves."""
    ws = f"ws://127.0.0.1:{nats_centre.nodes[0].ws_port}"
    extra = ("--public-ws", ws, "--live-max-boards", "7", "--venue-regulation", "vb=wulong-2015")
    hub = HubProcess(nats_centre, hub_db, "hub-pages", replicas=1, extra=extra)
    try:
        hub.wait_ready()
        live = hub.get("/api/live")
        assert (live["ws"], live["prefix"], live["max_boards"]) == (ws, "fed", 7)
        assert hub.get("/api/venues/va/standings")["regulation"] == "meishan-2016"
        assert hub.get("/api/venues/vb/standings")["regulation"] == "wulong-2015"
        url = f"http://127.0.0.1:{hub.http_port}/live"
        with urllib.request.urlopen(url, timeout=2) as r:
            assert ws in r.headers["Content-Security-Policy"]
    finally:
        hub.close()
