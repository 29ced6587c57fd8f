"""The station's state survives its machine (issue 28): continuous backups and a restore.

A real station (SQLite) with players, two rounds and decided games (results, a confirmed flag, a
confirmed forfeit) backs itself up to the folder its ``[backup]`` names: at a round's end and
every ``every_s``. Its database is then deleted (the laptop's disk lost), ``qizhong station
restore --from`` the last backup says what it restored, and a new station on it shows the same
standings, games and results. Restore refuses a running station's database and a file that is not
a qizhong store; a backup that cannot be written is an alarm and the station goes on.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from support.station import station_config
from support.trf_boards import Boards

from qizhong.cli.main import main
from venue_station.domain.station import Station

PLAYERS = ["甲", "乙", "丙", "丁", "戊", "己"]
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n2,1,乙,丙\n2,2,丁,戊\n2,3,己,甲\n"


def write_toml(path: Path, data: dict[str, Any]) -> Path:
    lines = [f'venue = "{data["venue"]}"', f'data_dir = "{data["data_dir"]}"']
    lines += ["[backup]", f'dir = "{data["backup"]}"', "every_s = 3600"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def wait_for(check: Any, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.1)


async def play_round_one(station: Station) -> Boards:
    await station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
    await station.import_pairings(PAIRS, send=False)
    boards = Boards(station)
    boards.decide("1", "r1-b1", "red")
    boards.decide("2", "r1-b2", "flag")
    boards.decide("3", "r1-b3", "forfeit")
    await boards.flush()
    return boards


async def test_backup_at_round_end_then_disk_lost_then_restore(
    tmp_path: Path, start_station: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    backups = tmp_path / "usb" / "qz-backup"
    backups.mkdir(parents=True)  # the stick, mounted (a missing folder here would be refused)
    config = station_config(tmp_path, backup={"dir": str(backups), "every_s": 3600})
    station: Station = await start_station(config, serve_http=False, connect=False)
    boards = await play_round_one(station)
    # every game of round 1 has its result: a backup now, not an hour later
    await wait_for(lambda: station.backup is not None and station.backup.taken >= 1, 12)
    boards.decide("1", "r2-b1", "draw")  # round 2 under way: one decided, two not
    await boards.flush()
    assert station.backup is not None and await station.backup.backup_now()
    standings = await station.standings()
    games = await station.require_store().games()
    assert sum(1 for g in games if g["result"]) == 4
    assert station.health()["backup"]["taken"] == 2
    files = sorted(backups.glob("station-*.db"))
    assert len(files) == 2 and not list(backups.glob("*.tmp"))

    # restore refuses a running station's database
    cfg_file = write_toml(
        tmp_path / "station.toml",
        {"venue": "test", "data_dir": str(config.data_dir), "backup": str(backups)},
    )
    assert main(["station", "restore", "--config", str(cfg_file), "--from", str(files[-1])]) == 2
    assert "running" in capsys.readouterr().err
    await station.stop()

    # the disk is lost
    for p in config.data_dir.glob("station.db*"):
        p.unlink()
    assert main(["station", "restore", "--config", str(cfg_file), "--from", str(files[-1])]) == 0
    said = capsys.readouterr().out
    assert "6 players" in said and "2 rounds" in said and "6 games" in said, said
    assert "4 decided results" in said, said

    again = station_config(tmp_path, backup={"dir": str(backups), "every_s": 3600})
    reborn: Station = await start_station(again, serve_http=False, connect=False)
    assert await reborn.standings() == standings
    after = await reborn.require_store().games()
    pick = ("game", "red", "black", "winner", "result", "reason")
    assert [{k: g[k] for k in pick} for g in after] == [{k: g[k] for k in pick} for g in games]
    # the restored store goes on with its own series: its backups beside the old ones
    assert reborn.backup is not None and reborn.backup.series == station.backup.series


async def test_restore_refuses_what_is_not_a_qizhong_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "station"
    cfg = write_toml(
        tmp_path / "station.toml",
        {"venue": "test", "data_dir": str(data), "backup": str(tmp_path / "b")},
    )
    text = tmp_path / "notes.db"
    text.write_text("players: 6\n", encoding="utf-8")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE players (name TEXT)")
    con.commit()
    con.close()
    for bad, word in ((text, "not an SQLite"), (other, "not a qizhong"), (tmp_path / "x", "read")):
        assert main(["station", "restore", "--config", str(cfg), "--from", str(bad)]) == 2
        assert word in capsys.readouterr().err
    assert not (data / "station.db").exists()


@pytest.mark.allow_error_log  # the failed backup is logged at ERROR, as it should be
async def test_a_backup_that_cannot_be_written_is_an_alarm_and_the_station_goes_on(
    tmp_path: Path, start_station: Any
) -> None:
    blocker = tmp_path / "usb"
    blocker.write_text("not a folder", encoding="utf-8")  # the stick is not what it should be
    config = station_config(tmp_path, backup={"dir": str(blocker / "qz"), "every_s": 3600})
    station: Station = await start_station(config, serve_http=False, connect=False)
    assert station.backup is not None and not await station.backup.backup_now()
    codes = [a["code"] for a in station.alarms()]
    assert codes == ["backup_failing"]
    await play_round_one(station)  # the station still stores what arrives
    assert len(await station.require_store().games(1)) == 3
    blocker.unlink()
    assert not await station.backup.backup_now()  # no folder: not made on the station's disk
    assert "USB stick mounted" in (station.backup.last_error or "")
    (blocker / "qz").mkdir(parents=True)  # the stick is mounted
    assert await station.backup.backup_now()
    assert station.alarms() == []
