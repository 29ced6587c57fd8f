"""Standings, criterion by criterion of the seeds' order (积分、累进分、胜局、犯规、后走局数、
去除第一轮得分…), Meishan and Wulong side by side; byes, forfeits, tags, bad input, exports.

Each player under test gets a *line*: one token per round against a fresh filler opponent, so
the line alone decides his numbers. A token is the result (W/D/L), the colour (r/b), optional
fouls (a digit) and ``f`` for a forfeit; ``B`` is a bye, ``-`` no game. The players under test
carry the tag ``t`` and are ranked among themselves with ``tag="t"``.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from clock_service.regulation import Regulation, Tiebreak
from clock_service.standings import (
    Bye,
    GameRecord,
    Policy,
    Standing,
    StandingsError,
    compute_standings,
    standings_csv,
    standings_json,
)

MEISHAN, WULONG = "meishan-2016", "wulong-2015"
_TOKEN = re.compile(r"^(?P<res>[WDL])(?P<col>[rb])(?P<fouls>\d?)(?P<forfeit>f?)$")


def build(lines: dict[str, str]) -> tuple[list[GameRecord], list[Bye], dict[str, set[str]]]:
    games: list[GameRecord] = []
    byes: list[Bye] = []
    players: dict[str, set[str]] = {}
    for name, line in lines.items():
        players[name] = {"t"}
        for rnd, token in enumerate(line.split(), start=1):
            if token == "-":
                continue
            if token == "B":
                byes.append(Bye(rnd, name))
                continue
            m = _TOKEN.match(token)
            assert m, token
            filler = f"{name}-opp{rnd}"
            players[filler] = set()
            me_red = m["col"] == "r"
            red, black = (name, filler) if me_red else (filler, name)
            res = {"W": "red" if me_red else "black", "L": "black" if me_red else "red"}
            fouls = int(m["fouls"] or 0)
            games.append(
                GameRecord(
                    rnd,
                    red,
                    black,
                    res.get(m["res"], "draw"),
                    forfeit=bool(m["forfeit"]),
                    red_fouls=fouls if me_red else 0,
                    black_fouls=0 if me_red else fouls,
                )
            )
    return games, byes, players


def ranked(profile: str, lines: dict[str, str], **kw: object) -> list[Standing]:
    games, byes, players = build(lines)
    return compute_standings(
        Regulation.load(profile),
        games,
        byes=byes,
        players=players,
        tag="t",
        **kw,  # type: ignore[arg-type]
    )


# (id, profile, lines, expected order, decided_by, rounds dropped, reason zh, reason en)
CASES = [
    ("points", WULONG, {"A": "Wr Wb", "B": "Wr Lb"}, "AB",
     Tiebreak.POINTS, 0, "积分 4 > 2", "points 4 > 2"),
    # 2+2 running totals after a win in round 1 beat 0+2 after a win in round 2.
    ("progressive", WULONG, {"B": "Lr Wb", "A": "Wr Lb"}, "AB",
     Tiebreak.PROGRESSIVE, 0, "累进分 4 > 2", "progressive 4 > 2"),
    # Both 4 points and 累进分 10 (4+4+4+... vs 2+2+...): only the wins differ.
    ("wins", WULONG, {"A": "Dr Db Dr Db", "B": "Wr Lb Lr Wb"}, "BA",
     Tiebreak.WINS, 0, "胜局 2 > 0", "wins 2 > 0"),
    ("fouls fewer is better (Wulong: no deduction)", WULONG, {"B": "Wr1 Lb", "A": "Wr Lb"}, "AB",
     Tiebreak.FOULS, 0, "犯规 0 < 1", "fouls 0 < 1"),
    ("fouls cost 累进分 in Meishan", MEISHAN, {"B": "Wr1 Lb", "A": "Wr Lb"}, "AB",
     Tiebreak.PROGRESSIVE, 0, "累进分 4 > 3", "progressive 4 > 3"),
    ("black games more is better", WULONG, {"B": "Wr Lr", "A": "Wb Lb"}, "AB",
     Tiebreak.BLACK_GAMES, 0, "后走局数 2 > 0", "games as black 2 > 0"),
    # Equal on every criterion (4 points, 累进分 10, 2 wins); without round 1: 4 > 2 points.
    ("drop round 1", WULONG, {"A": "Wr Lb Lr Wb", "B": "Lr Wb Wr Lb"}, "BA",
     Tiebreak.POINTS, 1, "去除第1轮后，积分 4 > 2", "without round 1: points 4 > 2"),
    # Round 1 alike, so only dropping rounds 1-2 separates them.
    ("drop rounds 1-2", MEISHAN, {"A": "Dr Wb Lr Lb Wr", "B": "Dr Lb Wr Wb Lr"}, "BA",
     Tiebreak.POINTS, 2, "去除第1–2轮后，积分 4 > 2", "without rounds 1–2: points 4 > 2"),
    # After a drop every criterion is compared again: the foul left with round 1.
    ("drop recompares fouls", WULONG, {"B": "Wr Lr1", "A": "Wr1 Lr"}, "AB",
     Tiebreak.FOULS, 1, "去除第1轮后，犯规 0 < 1", "without round 1: fouls 0 < 1"),
    ("drop recompares Meishan's deduction", MEISHAN, {"B": "Wr Lr1", "A": "Wr1 Lr"}, "AB",
     Tiebreak.PROGRESSIVE, 1, "去除第1轮后，累进分 0 > -1", "without round 1: progressive 0 > -1"),
    # A bye scores a win's 2 points but is no 胜局 by default.
    ("bye is no win", WULONG, {"A": "B Lr", "B": "Wr Lr"}, "BA",
     Tiebreak.WINS, 0, "胜局 1 > 0", "wins 1 > 0"),
    # A game lost by forfeit as black still counts as a game as black by default.
    ("forfeit as black counts as a black game", WULONG, {"B": "Wr Lr", "A": "Wr Lbf"}, "AB",
     Tiebreak.BLACK_GAMES, 0, "后走局数 1 > 0", "games as black 1 > 0"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("profile", "lines", "order", "decided", "dropped", "zh", "en"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_tiebreak_step(
    profile: str,
    lines: dict[str, str],
    order: str,
    decided: Tiebreak,
    dropped: int,
    zh: str,
    en: str,
) -> None:
    rows = ranked(profile, lines)
    assert "".join(r.player for r in rows) == order
    first, second = rows
    assert (first.rank, second.rank, first.shared, second.shared) == (1, 2, False, False)
    assert (first.decided_by, first.dropped_rounds) == (decided, dropped)
    assert (first.reason_zh, first.reason_en, first.tiebreak_reason) == (zh, en, zh)
    assert (second.reason_zh, second.decided_by) == ("", None)


@pytest.mark.parametrize("profile", [MEISHAN, WULONG])
def test_a_tie_through_every_step_is_a_shared_place(profile: str) -> None:
    lines = {"B": "Wr1 Db Lr", "A": "Wr1 Db Lr", "C": "Lr Lb Lr"}
    rows = ranked(profile, lines)
    assert [(r.rank, r.player, r.shared) for r in rows] == [
        (1, "A", True),
        (1, "B", True),
        (3, "C", False),
    ]
    assert rows[0].reason_zh == "并列：各项区分办法均相同"
    assert rows[0].reason_en == "shared: equal on every criterion"
    assert rows[0].decided_by is None
    assert rows[1].decided_by is Tiebreak.POINTS


def test_meishan_and_wulong_side_by_side_on_fouls() -> None:
    lines = {"A": "Wr2 Wb Lr", "B": "Wr Wb Lr"}
    meishan = {r.player: r for r in ranked(MEISHAN, lines)}
    wulong = {r.player: r for r in ranked(WULONG, lines)}
    # Running totals 2, 4, 4 = 10; Meishan deducts 1 per foul.
    assert (meishan["A"].progressive, meishan["B"].progressive) == (8, 10)
    assert (wulong["A"].progressive, wulong["B"].progressive) == (10, 10)
    assert meishan["A"].fouls == wulong["A"].fouls == 2
    assert meishan["B"].decided_by is Tiebreak.PROGRESSIVE
    assert wulong["B"].decided_by is Tiebreak.FOULS


@pytest.mark.parametrize(
    ("policy", "lines", "order", "decided"),
    [
        (Policy(bye_counts_as_win=True), {"A": "B Lr", "B": "Wr Lr"}, "AB", None),
        (Policy(), {"A": "Wrf Lb", "B": "Wr Lb"}, "AB", None),
        (Policy(forfeit_counts_as_win=False), {"A": "Wrf Lb", "B": "Wr Lb"}, "BA", Tiebreak.WINS),
        (Policy(forfeit_counts_as_black_game=False), {"A": "Lbf", "B": "Lb"}, "BA",
         Tiebreak.BLACK_GAMES),
        # Only points and 累进分 compared again after a drop: the foul no longer separates.
        (Policy(drop_recompare=(Tiebreak.POINTS, Tiebreak.PROGRESSIVE)),
         {"A": "Wr Lr1", "B": "Wr1 Lr"}, "AB", None),
    ],
)  # fmt: skip
def test_policy_for_what_the_seeds_leave_open(
    policy: Policy, lines: dict[str, str], order: str, decided: Tiebreak | None
) -> None:
    rows = ranked(WULONG, lines, policy=policy)
    assert "".join(r.player for r in rows) == order
    assert rows[0].decided_by is decided
    assert rows[0].shared is (decided is None)


def test_bye_points_default_to_a_win_and_can_be_given() -> None:
    reg = Regulation.load(WULONG)
    rows = compute_standings(reg, [], byes=[Bye(1, "A"), Bye(1, "B", points=1)])
    assert [(r.player, r.points, r.games, r.wins) for r in rows] == [
        ("A", 2, 0, 0),
        ("B", 1, 0, 0),
    ]


def test_after_round_and_unplayed_games() -> None:
    reg = Regulation.load(WULONG)
    games = [
        GameRecord(1, "A", "B", "black"),
        GameRecord(2, "A", "B", "red"),
        GameRecord(3, "A", "B", None),  # paired, not played yet
    ]
    after1 = compute_standings(reg, games, after_round=1)
    assert [(r.player, r.points, r.games) for r in after1] == [("B", 2, 1), ("A", 0, 1)]
    now = compute_standings(reg, games)
    # Round 3 has no result yet, so it is not played and adds no 累进分 term (每一轮积分之和
    # sums the scores after the rounds played): running totals 2+2 vs 0+2.
    assert [(r.player, r.points, r.progressive, r.games) for r in now] == [
        ("B", 2, 4, 2),
        ("A", 2, 2, 2),
    ]
    assert compute_standings(reg, []) == []


def test_players_without_games_get_a_row() -> None:
    reg = Regulation.load(MEISHAN)
    rows = compute_standings(
        reg, [GameRecord(1, "A", "B", "draw")], players={"A": (), "B": (), "C": ()}
    )
    assert [(r.rank, r.player, r.points) for r in rows] == [(1, "B", 1), (2, "A", 1), (3, "C", 0)]
    assert rows[0].decided_by is Tiebreak.BLACK_GAMES  # B played black, A red
    assert rows[2].games == 0


def test_tags_rank_within_a_group_in_the_event_order() -> None:
    reg = Regulation.load(WULONG)
    players = {"A": {"local"}, "B": {"u14"}, "C": {"women", "local"}, "D": set(), "E": {"u14"}}
    games = [
        GameRecord(1, "A", "B", "red"),
        GameRecord(1, "C", "D", "red"),
        GameRecord(2, "A", "C", "red"),
        GameRecord(2, "B", "D", "red"),
        GameRecord(3, "E", "D", "draw"),
        GameRecord(3, "B", "C", "black"),
    ]
    event = compute_standings(reg, games, players=players)
    combined = compute_standings(reg, games, players=players, tag=("u14", "women"))
    local = compute_standings(reg, games, players=players, tag="local")
    order = [r.player for r in event]
    assert [r.player for r in combined] == [p for p in order if players[p] & {"u14", "women"}]
    assert [r.player for r in local] == [p for p in order if "local" in players[p]]
    assert [r.rank for r in combined] == list(range(1, len(combined) + 1))
    # C wins prizes in two groups (以上奖项可重复领取) and keeps the event rank in both.
    c_event = next(r for r in event if r.player == "C")
    assert {r.event_rank for r in combined + local if r.player == "C"} == {c_event.rank}
    assert next(r for r in combined if r.player == "C").tags == frozenset({"women", "local"})


def test_shared_place_inside_a_group_follows_the_group() -> None:
    reg = Regulation.load(WULONG)
    players = {"A": {"g"}, "B": set(), "C": {"g"}}
    games = [
        GameRecord(1, "A", "X1", "red"),
        GameRecord(1, "B", "X2", "red"),
        GameRecord(1, "C", "X3", "red"),
    ]
    players |= {"X1": set(), "X2": set(), "X3": set()}
    rows = compute_standings(reg, games, players=players, tag="g")
    assert [(r.rank, r.player, r.shared, r.event_rank) for r in rows] == [
        (1, "A", True, 1),
        (1, "C", True, 1),
    ]


BAD = [
    ("self-play", lambda: GameRecord(1, "A", "A", "red"), "cannot play himself"),
    ("result", lambda: GameRecord(1, "A", "B", "white"), "result 'white'"),
    ("forfeit draw", lambda: GameRecord(1, "A", "B", "draw", forfeit=True),
     "forfeit needs a winner"),
    ("negative fouls", lambda: GameRecord(1, "A", "B", "red", red_fouls=-1), "red_fouls -1"),
    ("bool fouls", lambda: GameRecord(1, "A", "B", "red", black_fouls=True), "black_fouls True"),
    ("round 0", lambda: GameRecord(0, "A", "B", "red"), "round 0"),
    ("empty name", lambda: GameRecord(1, " ", "B", "red"), "player ' '"),
    ("bye points", lambda: Bye(1, "A", points=-2), "points -2"),
    ("bye round", lambda: Bye("1", "A"), "round '1'"),  # type: ignore[arg-type]
]  # fmt: skip


@pytest.mark.parametrize(("make", "says"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_records_say_what_and_where(make: object, says: str) -> None:
    with pytest.raises(StandingsError, match=re.escape(says)):
        make()  # type: ignore[operator]


def _call(**kw: object) -> None:
    reg = Regulation.load(WULONG)
    games = kw.pop("games", [GameRecord(1, "A", "B", "red")])
    compute_standings(reg, games, **kw)  # type: ignore[arg-type]


CALL_BAD = [
    ("twice in a round",
     {"games": [GameRecord(1, "A", "B", "red"), GameRecord(1, "C", "A", "red")]},
     "games[1] <GameRecord r1 C-A red>: 'A' is already in round 1: games[0]"),
    ("game and bye", {"byes": [Bye(1, "B")]}, "byes[0]"),
    ("beyond the last round", {"games": [GameRecord(10, "A", "B", "red")]},
     "round 10 > the regulation's 9"),
    ("unknown player", {"players": {"A": ()}}, "player 'B' is not in the players list"),
    ("tags as a string", {"players": {"A": "u14", "B": ()}},
     "players['A']: tags must be a collection"),
    ("tag without players", {"tag": "u14"}, "filtering needs the players' tags"),
    ("after_round", {"after_round": 12}, "after_round 12 is not a round 0..9"),
    ("drop_rounds in recompare", {"policy": Policy(drop_recompare=(Tiebreak.DROP_ROUNDS,))},
     "cannot contain drop_rounds"),
]  # fmt: skip


@pytest.mark.parametrize(("kw", "says"), [b[1:] for b in CALL_BAD], ids=[b[0] for b in CALL_BAD])
def test_bad_input_to_compute_standings(kw: dict[str, object], says: str) -> None:
    with pytest.raises(StandingsError, match=re.escape(says)):
        _call(**kw)


def test_csv_and_json_exports_round_trip() -> None:
    rows = ranked(MEISHAN, {"A": "Wr1 Lb", "B": "Wr Lb", "C": "Lr Lb"})
    text = standings_csv(rows)
    read = list(csv.DictReader(io.StringIO(text)))
    assert [r["player"] for r in read] == ["B", "A", "C"]
    assert read[0]["reason_zh"] == "累进分 4 > 3"
    assert (read[0]["decided_by"], read[0]["shared"], read[0]["tags"]) == ("progressive", "0", "t")
    assert [int(r["progressive"]) for r in read] == [r.progressive for r in rows]
    doc = json.loads(
        standings_json(rows, regulation=Regulation.load(MEISHAN), after_round=2, tag="t")
    )
    assert (doc["v"], doc["regulation"], doc["after_round"], doc["tag"]) == (1, MEISHAN, 2, "t")
    assert doc["standings"][0] == rows[0].as_dict()
    assert doc["standings"][0]["reason_en"] == "progressive 4 > 3"
    assert "累进分" in standings_json(rows)  # zh kept as text, not \\u escapes
