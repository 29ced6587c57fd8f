"""The station's laptop dies (its disk lost) in the middle of a round: restore + rebuild gives the
event back whole (issue 28's acceptance; the repeatable check beside the chaos round).

Real parts: a private Mosquitto, a real node with two boards on simulated faces, SQLite
stations with a ``[backup]`` folder on "a USB stick" and a ``decision_key_file`` kept with the
config. Round 1: players and pairs imported, clocks started through the node, board 2 drawn
(a decision before the last backup), the backup taken, then board 1's arbiter foul and result
(decisions after it). The station's data folder is deleted. ``qizhong station restore`` the last
backup, then the station starts again (``rebuild``): every event of the node's journal — read
directly — stored once, every decision confirmed as it was (none left ``unverified``), players,
rounds and standings equal to before. The times are printed (``-s``) for docs/operations.md.

Without a backup: a node of four boards (a foul and a resignation, a draw entered, a flag
confirmed, a flag dismissed then a draw entered), the data folder deleted, ``qizhong station
rebuild`` run as a real process with the same config and key: the round in progress comes back
from the boards' journals (players, pairings, games), every decision confirmed as it was.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.node import Probe, node_config, running_node
from support.station import station_config

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace
from qizhong.cli.main import main
from venue_station.domain.rebuild import recover_rounds

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PLAYERS = "name\n甲\n乙\n丙\n丁\n"
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"


PLAYERS8 = "name\n" + "".join(f"{n}\n" for n in "甲乙丙丁戊己庚辛")
PAIRED4 = {"5": ("甲", "乙"), "6": ("丙", "丁"), "7": ("戊", "己"), "8": ("庚", "辛")}
PAIRS4 = "round,board,red,black\n" + "".join(f"1,{b},{r},{k}\n" for b, (r, k) in PAIRED4.items())


async def _open(station: Any, board: str, kind: str) -> dict[str, Any] | None:
    for alert in await station.store.alerts(status="open"):
        if alert["board"] == board and alert["kind"] == kind:
            return dict(alert)
    return None


async def _wait(predicate: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def config_file(path: Path, data_dir: Path, backups: Path, key: Path) -> Path:
    path.write_text(
        f'venue = "test"\ndata_dir = "{data_dir}"\ndecision_key_file = "{key}"\n'
        f'[backup]\ndir = "{backups}"\nevery_s = 3600\n',
        encoding="utf-8",
    )
    return path


async def decisions(station: Any) -> list[tuple[str, str, Any, Any, bool]]:
    out = []
    for game in ("r1-b1", "r1-b2", "r1-b5", "r1-b6", "r1-b7", "r1-b8"):
        for e in await station.store.game_events(game, ("result", "foul")):
            d = e["data"]
            out.append(
                (
                    game,
                    e["type"],
                    d.get("status"),
                    d.get("winner") or d.get("side"),
                    bool(d.get("unverified")),
                )
            )
    return sorted(out, key=str)


async def stored_keys(station: Any) -> list[tuple[str, int, int]]:
    rows = await station.store.events(limit=100_000)
    return sorted((r["board"], int(r["session"]), int(r["seq"])) for r in rows)


async def test_disk_lost_then_restore_and_rebuild_gives_the_round_back(
    broker_factory: Any, start_station: Any, tmp_path: Path, capsys: Any
) -> None:
    broker = broker_factory()
    faces = {"1": SimulatedFace(mode="idle"), "2": SimulatedFace(mode="idle")}
    node_cfg = node_config(broker, "node-a", ["1", "2"], tmp_path / "node")
    key, usb = tmp_path / "etc" / "decision.key", tmp_path / "usb"
    usb.mkdir()  # the stick, mounted: a missing folder on the station's disk is refused
    extra = {"decision_key_file": str(key), "backup": {"dir": str(usb), "every_s": 3600}}
    first = await start_station(station_config(tmp_path, broker, **extra))
    assert first.config.data_dir == tmp_path / "station"
    async with running_node(node_cfg, faces) as node:
        await _wait(lambda: {"1", "2"} <= set(first.ingest.boards))
        await first.import_players(PLAYERS)
        await first.import_pairings(PAIRS)  # sends each board its set_game
        for board in ("1", "2"):
            await _wait(
                lambda b=board: (first.ingest.boards[b].state or {}).get("game") is not None
            )
            assert (await first.send_command(board, "start")).ok
        for face in faces.values():
            face.press(Side.RED)
            face.press(Side.BLACK)
        assert (await first.send_command("2", "result", {"winner": None, "reason": "agreed"})).ok
        await _wait(lambda: len(first.ingest.authority.asks.decided) == 1)
        await first.ingest.flush()
        assert first.backup is not None and await first.backup.backup_now()
        # after the last backup: an arbiter's foul and the result
        assert (await first.send_command("1", "foul", {"side": "black", "reason": "phone"})).ok
        assert (await first.send_command("1", "result", {"winner": "red", "reason": "resign"})).ok
        await _wait(lambda: len(first.ingest.authority.asks.decided) == 3)
        await _wait(lambda: node.journal.unsent_count() == 0)
        await first.ingest.flush()
        before = {
            "standings": [
                s.__dict__ if hasattr(s, "__dict__") else s for s in await first.standings()
            ],
            "decisions": await decisions(first),
            "players": len(await first.store.player_names()),
            "rounds": len(await first.store.rounds()),
        }
        assert [d for d in before["decisions"] if d[4]] == []
        watermarks = {b: first.ingest.seqs.get(b).watermark for b in ("1", "2")}
        await first.stop()

        # the laptop's disk is lost: the data folder with the database goes
        shutil.rmtree(first.config.data_dir)
        backup = sorted(usb.glob("station-*.db"))[-1]
        cfg = config_file(tmp_path / "station.toml", first.config.data_dir, usb, key)
        t0 = time.monotonic()
        assert main(["station", "restore", "--config", str(cfg), "--from", str(backup)]) == 0
        restored_s = time.monotonic() - t0

        async with Probe(broker) as probe:
            await probe.wait_for(
                lambda: all(probe.states.get(b, {}).get("seq") == s for b, s in watermarks.items())
            )
        t1 = time.monotonic()
        second = await start_station(station_config(tmp_path, broker, **extra))
        await _wait(
            lambda: all(
                second.ingest.seqs.get(b) is not None
                and second.ingest.seqs.get(b).watermark == s
                and not second.ingest.seqs.get(b).has_gap
                for b, s in watermarks.items()
            ),
            timeout=60,
        )
        await _wait(lambda: len(second.ingest.authority.asks.decided) >= 3)
        await second.ingest.flush()
        caught_up_s = time.monotonic() - t1

        journal = [(r.board, json.loads(r.payload)) for r in node.journal.all_events()]
        journal_keys = sorted((b, int(p["session"]), int(p["seq"])) for b, p in journal)
        assert await stored_keys(second) == journal_keys, "every journaled event stored once"
        after = {
            "standings": [
                s.__dict__ if hasattr(s, "__dict__") else s for s in await second.standings()
            ],
            "decisions": await decisions(second),
            "players": len(await second.store.player_names()),
            "rounds": len(await second.store.rounds()),
        }
        assert after == before
        # the rounds a rebuild would make from the boards: none, the backup holds round 1
        assert (await recover_rounds(second))["rounds"] == []
        assert len(await second.store.games()) == 2
    with capsys.disabled():
        print(
            f"\ndisk lost: restore {restored_s:.2f} s, rebuild caught up {caught_up_s:.2f} s, "
            f"{len(journal_keys)} events, {len(before['decisions'])} decisions"
        )


async def test_disk_lost_without_a_backup_rebuild_gives_the_round_in_progress_back(
    broker_factory: Any, start_station: Any, tmp_path: Path, capsys: Any
) -> None:
    """No backup at all: a fresh station with the same config and key, and ``rebuild`` —
    the round in progress comes back from the boards' journals: its players, pairings and
    games, each decision confirmed as it was (by its signed txn), the standings as before.
    The round's decisions: an arbiter's foul and a resignation, a draw entered, a flag
    confirmed, a flag dismissed and then a draw entered."""
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in PAIRED4}
    node_cfg = node_config(broker, "node-c", list(faces), tmp_path / "node")
    key = tmp_path / "etc" / "decision.key"
    extra = {"decision_key_file": str(key)}
    first = await start_station(station_config(tmp_path, broker, **extra))
    async with running_node(node_cfg, faces) as node:
        await _wait(lambda: set(faces) <= set(first.ingest.boards))
        await first.import_players(PLAYERS8)
        await first.import_pairings(PAIRS4, send=False)
        for board, (red, black) in PAIRED4.items():
            tc = "1+0" if board in ("7", "8") else "90m+30s"  # boards 7 and 8: flags fall
            args = {"game": f"r1-b{board}", "tc": tc, "red": red, "black": black}
            assert (await first.send_command(board, "set_game", args)).ok
            assert (await first.send_command(board, "start")).ok
        for board in ("5", "6"):
            faces[board].press(Side.RED)
            faces[board].press(Side.BLACK)
        assert (await first.send_command("6", "result", {"winner": None, "reason": "agreed"})).ok
        assert (await first.send_command("5", "foul", {"side": "black", "reason": "phone"})).ok
        assert (await first.send_command("5", "result", {"winner": "red", "reason": "resign"})).ok
        flags: dict[str, dict[str, Any]] = {}
        async with asyncio.timeout(20):
            while len(flags) < 2:
                for board in ("7", "8"):
                    found = await _open(first, board, "flag")
                    if found is not None:
                        flags[board] = found
                await asyncio.sleep(0.05)
        # board 7: the flag confirmed; board 8: the flag dismissed, then a result entered
        _, sent = await first.rule_alert(flags["7"], "confirm")
        assert sent is not None and sent.ok
        _, sent = await first.rule_alert(flags["8"], "dismiss")
        assert sent is not None and sent.ok
        assert (await first.send_command("8", "result", {"winner": None, "reason": "agreed"})).ok
        await _wait(lambda: len(first.ingest.authority.asks.decided) >= 6)
        await _wait(lambda: node.journal.unsent_count() == 0)
        await first.ingest.flush()

        async def picture(station: Any) -> dict[str, Any]:
            return {
                "standings": [s.__dict__ for s in await station.standings()],
                "decisions": await decisions(station),
                "players": sorted(await station.store.player_names()),
                "rounds": [r["round"] for r in await station.store.rounds()],
                "games": [
                    (g["game"], g["board"], g["red"], g["black"], g["result"], g["reason"])
                    for g in await station.store.games()
                ],
            }

        before = await picture(first)
        ruled = [d[:4] for d in before["decisions"] if d[2] in ("confirmed", "dismissed")]
        assert ruled == [
            ("r1-b5", "foul", "confirmed", "black"),
            ("r1-b5", "result", "confirmed", "red"),
            ("r1-b6", "result", "confirmed", None),
            ("r1-b7", "result", "confirmed", "black"),  # the flag confirmed
            ("r1-b8", "result", "confirmed", None),  # the draw entered after ...
            ("r1-b8", "result", "dismissed", "black"),  # ... the flag dismissed
        ], before["decisions"]
        assert len(before["games"]) == 4 and all(g[4] for g in before["games"]), before
        watermarks = {b: first.ingest.seqs.get(b).watermark for b in faces}
        await first.stop()
        shutil.rmtree(first.config.data_dir)  # the disk lost, and no backup anywhere

        async with Probe(broker) as probe:
            await probe.wait_for(
                lambda: all(probe.states.get(b, {}).get("seq") == s for b, s in watermarks.items())
            )
        # the technician's one command, a real process, with the same config and key
        user, password = broker.credentials("station")
        cfg = tmp_path / "rebuild.toml"
        cfg.write_text(
            f'venue = "test"\ndata_dir = "{first.config.data_dir}"\n'
            f'decision_key_file = "{key}"\nrebirth_grace_ms = 100\nrebirth_retry_ms = 500\n'
            f'[http]\nhost = "127.0.0.1"\nport = 0\n'
            f'[broker]\nurl = "mqtt://{broker.host}:{broker.port}"\nusername = "{user}"\n'
            f'password = "{password}"\nclient_id = "qz-station-rebuild"\n',
            encoding="utf-8",
        )
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "qizhong", "station", "rebuild", "--config", str(cfg)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        lines: list[str] = []
        try:
            assert proc.stdout is not None
            while not any(line.startswith("rebuilt from the boards") for line in lines):
                line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 90)
                assert line, "".join(lines)
                lines.append(line.decode())
            took = time.monotonic() - t0
        finally:
            proc.send_signal(signal.SIGTERM)
            lines.append(proc.communicate(timeout=30)[0].decode())
        out = "".join(lines)
        assert proc.returncode == 0, out
        assert "rebuilt from the boards: rounds [1], 8 players added, 4 games" in out, out
        second = await start_station(
            station_config(tmp_path, broker, **extra), serve_http=False, connect=False
        )
        journal = [(r.board, json.loads(r.payload)) for r in node.journal.all_events()]
        journal_keys = sorted((b, int(p["session"]), int(p["seq"])) for b, p in journal)
        assert await stored_keys(second) == journal_keys, "every journaled event stored once"
        after = await picture(second)
        assert after == before
        assert [d for d in after["decisions"] if d[4]] == [], "none left unverified"
        # once more (a restart of the rebuild): nothing made twice
        assert (await recover_rounds(second))["rounds"] == []
    with capsys.disabled():
        print(f"\ndisk lost, no backup: round 1 back from the boards in {took:.2f} s")
