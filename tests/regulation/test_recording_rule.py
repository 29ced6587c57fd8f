"""The 录谱 rule of each seed regulation (issue 29), read from the profile.

Meishan 三、3: "为了配合网上报道，要求前两台，原则上都要录谱。原则上由胜方负责录谱，
和棋由红方负责录谱，若因故不愿录谱或者改时录谱的须征得裁判长同意"; foul (5) "未按规定录谱一次的".
Wulong 四: "要求前10台和大师所在台次必须录谱，由胜方录谱，和棋由红方录谱，
每缺录一次记责任人犯规一次";
foul (6) "未按照规定按时录谱的".
"""

from __future__ import annotations

from dataclasses import replace
from importlib.resources import files

import pytest

from clock_service.recording import RecordingRule, RecordState, record_state
from clock_service.regulation import Regulation, RegulationError
from clock_service.side import Side

RED, BLACK = Side.RED, Side.BLACK

MEISHAN = Regulation.load("meishan-2016")
WULONG = Regulation.load("wulong-2015")


def rule(reg: Regulation) -> RecordingRule:
    assert reg.recording is not None
    return reg.recording


def test_which_boards_must_be_recorded() -> None:
    meishan, wulong = rule(MEISHAN), rule(WULONG)
    assert [b for b in range(1, 6) if meishan.required(board=b, tags=())] == [1, 2]
    assert meishan.required(board=3, tags=("master",)) is False  # Meishan names no masters
    assert [b for b in range(1, 15) if wulong.required(board=b, tags=())] == list(range(1, 11))
    assert wulong.required(board=37, tags=("master",)) is True  # 大师所在台次
    assert wulong.required(board=37, tags=("u14", "women")) is False


@pytest.mark.parametrize("reg", [MEISHAN, WULONG], ids=["meishan", "wulong"])
def test_the_winner_records_red_on_a_draw(reg: Regulation) -> None:
    assert rule(reg).responsible(winner=Side.BLACK) is Side.BLACK
    assert rule(reg).responsible(winner=Side.RED) is Side.RED
    assert rule(reg).responsible(winner=None) is Side.RED  # 和棋由红方录谱


def test_the_offence_is_the_profiles_not_recording_foul() -> None:
    for reg in (MEISHAN, WULONG):
        assert rule(reg).foul == "not_recording"
        assert "录谱" in reg.reason(rule(reg).foul, kind="foul").zh
    assert rule(MEISHAN).chief_consent is True  # 须征得裁判长同意
    assert rule(WULONG).chief_consent is False  # Wulong names no consent (the arbiter rules)


def test_states_against_the_grace() -> None:
    grace = 1_000
    assert record_state(recorded_at=None, grace_ends=grace, now=500, consent=False) is (
        RecordState.DUE
    )
    assert record_state(recorded_at=None, grace_ends=grace, now=1_000, consent=False) is (
        RecordState.MISSING
    )
    assert record_state(recorded_at=900, grace_ends=grace, now=5_000, consent=False) is (
        RecordState.RECORDED
    )
    assert record_state(recorded_at=1_200, grace_ends=grace, now=5_000, consent=False) is (
        RecordState.LATE
    )
    for recorded in (None, 1_200):  # the chief allowed a later or no record
        assert record_state(recorded_at=recorded, grace_ends=grace, now=5_000, consent=True) is (
            RecordState.ALLOWED
        )
    assert record_state(recorded_at=None, grace_ends=None, now=10**9, consent=False) is (
        RecordState.DUE
    )  # no next round announced yet: the grace has not ended
    assert {s for s in RecordState if s.foul_due} == {RecordState.MISSING, RecordState.LATE}


def profile_with(recording: str) -> str:
    text = (files("clock_service.profiles") / "wulong-2015.toml").read_text("utf-8")
    start = text.index("[recording]")
    end = text.index("\n[", start + 1)
    return text[:start] + recording + text[end:]


@pytest.mark.parametrize(
    ("table", "key", "reason"),
    [
        ('[recording]\ntop_boards = 10\nresponsible = "winner"\non_draw = "red"\n'
         'grace = "next_round"\nchief_consent = false\nfoul = "not_recorded"\n',
         "recording.foul", "not one of fouls.reasons"),
        ('[recording]\ntop_boards = 10\nresponsible = "loser"\non_draw = "red"\n'
         'grace = "next_round"\nchief_consent = false\nfoul = "not_recording"\n',
         "recording.responsible", "'loser'"),
        ('[recording]\ntop_boards = 10\nresponsible = "winner"\non_draw = "red"\n'
         'grace = "next_round"\nchief_consent = "yes"\nfoul = "not_recording"\n',
         "recording.chief_consent", "true or false"),
        ('[recording]\ntop_boards = 10\ndeadline = "next_round"\n'
         'responsible = "winner"\non_draw = "red"\n'
         'grace = "next_round"\nchief_consent = false\nfoul = "not_recording"\n',
         "recording.deadline", "unknown key"),
    ],
)  # fmt: skip
def test_a_bad_recording_table_names_the_key(table: str, key: str, reason: str) -> None:
    with pytest.raises(RegulationError) as error:
        Regulation.from_toml(profile_with(table), source="test.toml")
    assert key in str(error.value) and reason in str(error.value)


def test_a_wulong_round_some_top_boards_recorded_some_not() -> None:
    """Issue 29's acceptance, the pure core: the missing ones get the pending foul against the
    winner (red on a draw) at the grace's end; a confirmed one counts in the standings."""
    from clock_service.recording import BoardGame, recording_duties
    from clock_service.standings import GameRecord, compute_standings

    next_round_starts = 10_000
    games = [
        BoardGame(board=1, tags=(), winner=RED, recorded_at=5_000),  # recorded in time
        BoardGame(board=2, tags=(), winner=BLACK),  # missing: black won, black records
        BoardGame(board=3, tags=(), winner=None),  # missing: a draw, red records
        BoardGame(board=4, tags=(), winner=RED, recorded_at=12_000),  # late
        BoardGame(board=5, tags=(), winner=RED, played=False),  # a forfeit: nothing to record
        *[BoardGame(board=b, tags=(), winner=RED, recorded_at=1) for b in range(6, 11)],
        BoardGame(board=11, tags=(), winner=BLACK),  # not required
        BoardGame(board=30, tags=("master",), winner=BLACK),  # a master's board: missing
    ]
    not_yet = [replace(g, recorded_at=None) if g.board == 4 else g for g in games]
    before = recording_duties(rule(WULONG), not_yet, grace_ends=next_round_starts, now=9_999)
    assert not any(d.foul_due for d in before)  # nothing pending before the grace ends
    after = recording_duties(rule(WULONG), games, grace_ends=next_round_starts, now=10_000)
    assert [d.board for d in after] == [1, 2, 3, 4, *range(6, 11), 30]
    pending = [(d.board, d.responsible, d.state.value) for d in after if d.foul_due]
    assert pending == [
        (2, BLACK, "missing"),
        (3, RED, "missing"),
        (4, RED, "late"),
        (30, BLACK, "missing"),
    ]
    # Wulong gives the chief no consent: it does not clear a duty (the arbiter dismisses it).
    consented = [BoardGame(board=2, tags=(), winner=BLACK, consent=True)]
    assert recording_duties(rule(WULONG), consented, grace_ends=1, now=2)[0].foul_due
    # Meishan's chief may allow it: 须征得裁判长同意.
    (allowed,) = recording_duties(rule(MEISHAN), consented, grace_ends=1, now=2)
    assert allowed.state is RecordState.ALLOWED and not allowed.foul_due
    # The arbiter confirms board 2's and board 3's fouls and dismisses the others: the
    # standings count the confirmed ones against the responsible player.
    players = {2: ("甲", "乙"), 3: ("丙", "丁")}
    results = {2: "black", 3: "draw"}
    confirmed = [d for d in after if d.board in (2, 3)]
    records = [
        GameRecord(
            round=1,
            red=players[d.board][0],
            black=players[d.board][1],
            result=results[d.board],
            red_fouls=int(d.responsible is RED),
            black_fouls=int(d.responsible is BLACK),
        )
        for d in confirmed
    ]
    fouls = {r.player: r.fouls for r in compute_standings(WULONG, records)}
    assert fouls == {"乙": 1, "丙": 1, "甲": 0, "丁": 0}  # black won board 2; red drew board 3
    # Meishan also takes 1 累进分 per confirmed foul (记犯规1次，并扣累进分1分).
    progressive = {r.player: r.progressive for r in compute_standings(MEISHAN, records)}
    plain = {r.player: r.progressive for r in compute_standings(WULONG, records)}
    assert progressive["乙"] == plain["乙"] - 1 and progressive["甲"] == plain["甲"]
