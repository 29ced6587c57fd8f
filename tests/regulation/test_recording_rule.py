"""The 录谱 rule of each seed regulation (issue 29), read from the profile.

Meishan 三、3: "为了配合网上报道，要求前两台，原则上都要录谱。原则上由胜方负责录谱，
和棋由红方负责录谱，若因故不愿录谱或者改时录谱的须征得裁判长同意"; foul (5) "未按规定录谱一次的".
Wulong 四: "要求前10台和大师所在台次必须录谱，由胜方录谱，和棋由红方录谱，
每缺录一次记责任人犯规一次";
foul (6) "未按照规定按时录谱的".
"""

from __future__ import annotations

from importlib.resources import files

import pytest

from clock_service.recording import RecordingRule, RecordState, record_state
from clock_service.regulation import Regulation, RegulationError
from clock_service.side import Side

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
