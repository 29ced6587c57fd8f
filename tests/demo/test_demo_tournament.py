"""``qizhong demo --tournament meishan|wulong`` in its short form (8 players, short games): the
whole event is played, and the prize list it prints follows the seed's rules applied to the
games it printed (tests/tournament/seed_rules.py, written from the seeds, not the station)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tournament.seed_rules import SEEDS, Game, knockout_places, rank

pytestmark = [pytest.mark.broker, pytest.mark.slow]

# The seeds' 奖励 for the first eight places: Meishan 录取前30名; Wulong pays 前32名, but 如报名参赛
# 人数低于80人，则受奖面只发总人数的30% — 8 entrants, two prizes (the demo printed eight: an
# outsider organiser)
PRIZES = {
    "meishan": [3000, 1500, 1000, 800, 600, 500, 400, 400],
    "wulong": [5000, 3000] + [0] * 6,
}


def _demo(name: str, work: Path) -> list[str]:
    cmd = [sys.executable, "-m", "qizhong", "demo", "--tournament", name, "--boards", "4",
           "--speed", "100", "--moves", "3", "--seed", "7", "--dir", str(work),
           "--info", str(work / "info.json")]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the demo stops its venue
        out, _ = proc.communicate(timeout=30)
        raise AssertionError(f"the demo did not finish in 240 s:\n{out}") from None
    assert proc.returncode == 0, out
    # the arbiter's page and password, printed and written (they were not: an outsider)
    info = json.loads((work / "info.json").read_text(encoding="utf-8"))
    assert f"password {info['arbiter']['password']}" in out.splitlines()[0], out[:300]
    return out.splitlines()


def _games(lines: list[str]) -> list[Game]:
    games = []
    for line in lines:
        if line.startswith("game "):
            _, rnd, _board, red, black, result, rf, bf = line.split()
            fouls = {"red_fouls": int(rf), "black_fouls": int(bf)}
            games.append(Game(round=int(rnd[1:]), red=red, black=black, result=result, **fouls))
    return games


def _standings(lines: list[str]) -> list[list[str]]:
    return [line.split()[1:] for line in lines if line.startswith("standing ")]


def _check_swiss(rows: list[list[str]], games: list[Game], players: list[str], seed: str) -> None:
    mine = rank(SEEDS[seed], games, players, last=9)
    printed = [(r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6])) for r in rows]
    assert printed == [(r.player, r.points, r.progressive, r.wins, r.fouls, r.black_games)
                       for r in mine]  # fmt: skip


async def test_the_wulong_demo_plays_nine_rounds_and_prints_the_prize_list(tmp_path: Path) -> None:
    lines = _demo("wulong", tmp_path / "w")
    games = _games(lines)
    players = sorted({g.red for g in games} | {g.black for g in games})
    assert len(players) == 8
    for rnd in range(1, 10):  # everyone plays every round
        seated = [p for g in games if g.round == rnd for p in (g.red, g.black)]
        assert sorted(seated) == players, rnd
    rows = _standings(lines)
    assert [int(r[0]) for r in rows] == list(range(1, 9))
    _check_swiss(rows, games, players, "wulong-2015")
    assert [float(r[-1]) for r in rows] == PRIZES["wulong"]
    assert not any(line.startswith("knockout ") for line in lines)


async def test_the_meishan_demo_plays_the_knockout_and_its_armageddon(tmp_path: Path) -> None:
    lines = _demo("meishan", tmp_path / "m")
    games = _games(lines)
    ko = {line.split()[1]: line.split()[2:] for line in lines if line.startswith("knockout ")}
    # the demo's scripted semi-final 1 is drawn: the 10′+3″ armageddon, drawn too: black wins
    assert ko["ko-sf1"][2] == "draw"
    assert ko["ko-sf1-tb"][2:] == ["black", "10m+3s"]
    winner = {gid: (red if res == "red" else black) for gid, (red, black, res, _tc) in ko.items()
              if res in ("red", "black")}  # fmt: skip
    matches = []
    for stage, gid in (("sf1", "ko-sf1"), ("sf2", "ko-sf2"), ("final", "ko-f"), ("third", "ko-3")):
        red, black = ko[gid][:2]
        won = winner.get(gid) or winner[f"{gid}-tb"]
        matches.append((stage, red, black, "red" if won == red else "black"))
    rows = _standings(lines)
    assert [r[1] for r in rows[:4]] == knockout_places(matches)
    four = set(knockout_places(matches))
    # the four are the top four after round 7 by the seed, and play no Swiss game after it
    after7 = rank(SEEDS["meishan-2016"], games, sorted({g.red for g in games} | {g.black
                  for g in games}), last=7)  # fmt: skip
    assert {r.player for r in after7[:4]} == four
    assert not [g for g in games if g.round > 7 and four & {g.red, g.black}]
    rest = sorted({p for g in games for p in (g.red, g.black)} - four)
    _check_swiss(rows[4:], games, rest, "meishan-2016")
    assert [float(r[-1]) for r in rows] == PRIZES["meishan"]
