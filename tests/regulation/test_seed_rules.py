"""Issue 15: the rules the arbiter decided by hand, table-driven from the seed sentences.

Each row quotes the sentence of the seed it comes from (M = Meishan 2016 ``000_…``,
W = Wulong 2015 ``001_…``). Written from the seeds before the code that answers them.
"""

from __future__ import annotations

import pytest

from clock_service.outcome import game_outcome
from clock_service.referee import ProposalStatus, Referee
from clock_service.regulation import Handicap, Regulation, handicap_for
from clock_service.side import Side
from clock_service.standings import GameRecord, compute_standings

RED, BLACK = Side.RED, Side.BLACK
M, W = "meishan-2016", "wulong-2015"
BOTH = pytest.mark.parametrize("profile", [M, W])


def reg(profile: str) -> Regulation:
    return Regulation.load(profile)


# -- every foul and immediate-loss reason of both seeds is a code with its wording ---------
FOULS = [
    # (profile, code, the seed's words)
    (M, "disturbing", "对方行棋时间内，无故提出问题，或者其他干扰对方行为的"),
    (M, "board_pause", "对局过程中无故擅暂停棋钟的"),
    (M, "excess_draw_offers", "提议作和次数超过对方2次的"),
    (M, "phone", "比赛间查看手机"),
    (M, "phone_ringing", "手机响铃一次的"),
    (M, "not_recording", "未按规定录谱一次的"),
    (M, "move_rule_violation", "违反行棋规定"),
    (W, "disturbing", "对方行棋时间内，无故提出问题，或者其他干扰对方行为的"),
    (W, "board_pause", "对局过程中无故擅停棋钟的"),
    (W, "excess_draw_offers", "提议作和次数超过对方2次的"),
    (W, "move_rule_violation", "违反行棋规定一次的"),
    (W, "pressed_without_moving", "没有走棋先按钟的"),
    (W, "not_recording", "未按照规定按时录谱的"),
]

FORFEITS = [
    # (profile, code, the seed's words, count, of which code)
    (M, "late", "裁判长宣布比赛开始后15分钟尚未到达其座位的", None, None),
    (M, "misconduct", "有意制造麻烦，无理取闹的", None, None),
    (M, "phone_call", "一盘棋期间接打手机一次的", None, None),
    (M, "fouls", "一盘棋犯规达到2次的", 2, None),
    (M, "suicide_move", "出现“不应将”、“送吃老将”等自杀情况的", None, None),
    (M, "power_switch", "擅自关闭计时钟的", None, None),
    (M, "move_rule_violations", "违反行棋规定2次的", 2, "move_rule_violation"),
    (M, "disobedience", "不服从裁判判决的", None, None),
    (M, "other", "其他影响正常比赛秩序的", None, None),
    (M, "forbidden_repetition", "裁判员裁决后2个回合内必须变招，否则判负", None, None),
    (W, "late", "裁判长宣布比赛开始后15分钟尚未到达其座位的", None, None),
    (W, "misconduct", "有意制造麻烦，无理取闹的", None, None),
    (W, "phone", "行棋期间观看或接打手机的", None, None),
    (W, "fouls", "一盘棋单方犯规达到3次的", 3, None),
    (W, "suicide_move", "出现“不应将”、“送吃老将”等自杀情况的", None, None),
    (W, "power_switch", "擅自关闭计时钟的", None, None),
    (W, "move_rule_violations", "违反行棋规定2次的", 2, "move_rule_violation"),
    (W, "other", "其它影响正常比赛秩序的", None, None),
    (W, "forbidden_repetition", "在2个回合内必须变招，否则判负", None, None),
    (W, "early_draw_not_varied", "20回合内遇到不变作和局面，红方必须变招，不变判负", None, None),
]


@pytest.mark.parametrize(("profile", "code", "words"), FOULS)
def test_every_foul_of_the_seed_is_a_code_with_its_wording(profile: str, code: str, words: str):
    r = reg(profile)
    reason = r.reason(code, kind="foul")
    assert code in r.fouls.reasons
    assert words in reason.zh
    assert reason.en and reason.en.isascii()


@pytest.mark.parametrize(("profile", "code", "words", "count", "of"), FORFEITS)
def test_every_immediate_loss_of_the_seed_is_a_code_with_its_count(
    profile: str, code: str, words: str, count: int | None, of: str | None
):
    r = reg(profile)
    reason = r.reason(code, kind="forfeit")
    assert code in r.forfeits.reasons
    assert words in reason.zh
    assert reason.en and reason.en.isascii()
    assert reason.count == count
    assert reason.of == of


def test_meishan_has_no_wulong_only_reasons():
    r = reg(M)
    for code in ("pressed_without_moving",):
        assert code not in r.fouls.reasons
    for code in ("early_draw_not_varied", "phone"):
        assert code not in r.forfeits.reasons
    with pytest.raises(ValueError, match="pressed_without_moving"):
        r.reason("pressed_without_moving", kind="foul")


# -- “违反行棋规定2次的” 立即判负: the referee proposes the loss at the reason's count ----------
@BOTH
def test_second_move_rule_violation_loses_whatever_the_total(profile: str):
    ref = Referee(reg(profile))
    (first,) = ref.arbiter_foul(RED, "move_rule_violation")
    assert first.status is ProposalStatus.CONFIRMED
    assert not ref.finished
    out = ref.arbiter_foul(RED, "move_rule_violation")
    forfeits = [p for p in out if p.kind.value == "forfeit"]
    results = [p for p in out if p.kind.value == "result"]
    assert [(f.side, f.reason) for f in forfeits] == [(RED, "move_rule_violations")]
    assert [(r.winner, r.reason) for r in results] == [(BLACK, "move_rule_violations")]
    assert ref.finished


def test_wulong_two_fouls_of_different_reasons_are_not_yet_a_loss():
    ref = Referee(reg(W))  # “一盘棋单方犯规达到3次的”
    ref.arbiter_foul(BLACK, "move_rule_violation")
    out = ref.arbiter_foul(BLACK, "disturbing")
    assert [p.kind.value for p in out] == ["foul"]
    assert not ref.finished
    out = ref.arbiter_foul(BLACK, "pressed_without_moving")
    assert [(p.kind.value, p.reason) for p in out][1:] == [
        ("forfeit", "fouls"),
        ("result", "fouls"),
    ]


def test_one_violation_per_side_is_no_loss():
    ref = Referee(reg(W))
    ref.arbiter_foul(RED, "move_rule_violation")
    out = ref.arbiter_foul(BLACK, "move_rule_violation")
    assert [p.kind.value for p in out] == ["foul"]


def test_meishan_phone_ringing_is_a_foul():
    ref = Referee(reg(M))  # “比赛间查看手机或手机响铃一次的” 记犯规1次
    (foul,) = ref.arbiter_foul(RED, "phone_ringing")
    assert foul.kind.value == "foul" and foul.count == 1


# -- “开赛15分钟未到场者判负” applies to each player: the double forfeit ---------------------
MIN15 = 15 * 60_000


@BOTH
@pytest.mark.parametrize(
    ("after_ms", "red_moves", "black_moves", "late"),
    [
        (MIN15 - 1, 0, 0, ()),
        (MIN15, 0, 0, (RED, BLACK)),  # neither has moved: both are proposed, the arbiter sees
        (MIN15, 1, 0, (BLACK,)),
        (MIN15, 1, 1, ()),
    ],
)
def test_late_side_reports_both_when_neither_has_moved(
    profile: str, after_ms: int, red_moves: int, black_moves: int, late: tuple[Side, ...]
):
    ref = Referee(reg(profile))
    start = 1_000_000
    got = ref.late_sides(
        now_ms=start + after_ms, round_start_ms=start, red_moves=red_moves, black_moves=black_moves
    )
    assert got == late


@BOTH
def test_both_late_proposes_a_double_forfeit_and_confirming_both_gives_0_0(profile: str):
    ref = Referee(reg(profile))
    (red_late,) = ref.late(RED)
    out = ref.late(BLACK)
    black_late = out[0]
    assert [(p.kind.value, p.reason, p.status.value) for p in out[1:]] == [
        ("result", "double_forfeit", "pending")
    ]
    ref.resolve(red_late.id, "confirmed")
    out = ref.resolve(black_late.id, "confirmed")
    result = out[-1]
    assert (result.kind.value, result.reason, result.status.value) == (
        "result",
        "double_forfeit",
        "confirmed",
    )
    assert result.winner is None
    assert ref.result is not None and ref.result.reason == "double_forfeit"


@BOTH
def test_one_late_side_dismissed_leaves_the_other_forfeited(profile: str):
    ref = Referee(reg(profile))
    (red_late,) = ref.late(RED)
    black_late = ref.late(BLACK)[0]
    ref.resolve(black_late.id, "dismissed")
    out = ref.resolve(red_late.id, "confirmed")
    assert out[-1].kind.value == "result" and out[-1].winner is BLACK
    assert out[-1].reason == "late"


# -- the one outcome function: pending vs confirmed, the 0:0 ---------------------------------
def ev(seq: int, type_: str, **data: object) -> dict[str, object]:
    return {"seq": seq, "type": type_, "data": data}


@BOTH
@pytest.mark.parametrize(
    ("events", "status", "result", "points"),
    [
        ([], "undecided", None, None),
        # 先超时判负 is proposed: a flag alone, or its pending result, counts nowhere yet
        ([ev(1, "flag", side="red")], "pending", "black", None),
        (
            [
                ev(1, "flag", side="red"),
                ev(2, "result", winner="black", reason="flag", status="pending"),
            ],
            "pending",
            "black",
            None,
        ),
        (
            [
                ev(1, "flag", side="red"),
                ev(2, "result", winner="black", reason="flag", status="pending"),
                ev(3, "result", winner="black", reason="flag", status="confirmed", ref=2),
            ],
            "confirmed",
            "black",
            "0:2",
        ),
        (
            [
                ev(1, "flag", side="red"),
                ev(2, "result", winner="black", reason="flag", status="pending"),
                ev(3, "result", winner="black", reason="flag", status="dismissed", ref=2),
            ],
            "undecided",
            None,
            None,
        ),
        (
            [ev(5, "result", winner=None, reason="agreed", status="confirmed")],
            "confirmed",
            "draw",
            "1:1",
        ),
        # both absent at 15 minutes and both forfeits confirmed: 0:0
        (
            [
                ev(1, "forfeit", side="red", reason="late", status="pending"),
                ev(2, "forfeit", side="black", reason="late", status="pending"),
                ev(3, "forfeit", side="red", reason="late", status="confirmed", ref=1),
                ev(4, "forfeit", side="black", reason="late", status="confirmed", ref=2),
            ],
            "confirmed",
            "double_forfeit",
            "0:0",
        ),
        (
            [
                ev(1, "forfeit", side="red", reason="late", status="pending"),
                ev(2, "forfeit", side="black", reason="late", status="pending"),
            ],
            "pending",
            "double_forfeit",
            None,
        ),
        (
            [ev(9, "result", winner=None, reason="double_forfeit", status="confirmed")],
            "confirmed",
            "double_forfeit",
            "0:0",
        ),
        # the arbiter's result after a confirmed one: the latest confirmed stands
        (
            [
                ev(1, "result", winner="red", reason="resign", status="confirmed"),
                ev(2, "result", winner="black", reason="suicide_move", status="confirmed"),
            ],
            "confirmed",
            "black",
            "0:2",
        ),
    ],
)
def test_the_one_outcome_function(
    profile: str,
    events: list[dict[str, object]],
    status: str,
    result: str | None,
    points: str | None,
):
    out = game_outcome(events, reg(profile))
    assert out.status == status
    assert out.outcome == result
    assert (None if out.points is None else f"{out.points[0]}:{out.points[1]}") == points
    assert out.counts == (status == "confirmed")


@BOTH
def test_a_double_forfeit_in_the_standings_is_a_loss_for_both(profile: str):
    r = reg(profile)
    games = [
        GameRecord(1, "甲", "乙", "double_forfeit", forfeit=True),
        GameRecord(1, "丙", "丁", "draw"),
    ]
    rows = {row.player: row for row in compute_standings(r, games)}
    assert rows["甲"].points == rows["乙"].points == r.scoring.loss
    assert rows["甲"].wins == rows["乙"].wins == 0
    assert rows["丙"].points == r.scoring.draw


# -- “成年男子棋手对阵少儿棋手和非大师女子棋手通让二先（不论先后手）” (W only) --------------------
@pytest.mark.parametrize(
    ("red_tags", "black_tags", "expected"),
    [
        ((), ("u14",), Handicap(BLACK, 2)),  # an adult man against a junior, whatever colour
        (("u14",), (), Handicap(RED, 2)),
        ((), ("women",), Handicap(BLACK, 2)),  # against a woman who is not a master
        (("women",), (), Handicap(RED, 2)),
        ((), ("women", "master"), None),  # a woman master receives nothing
        ((), (), None),  # two men
        (("women",), ("u14",), None),  # no adult man in the game
        (("u14",), ("u14",), None),
        (("local",), ("u14", "local"), Handicap(BLACK, 2)),  # other tags change nothing
    ],
)
def test_wulong_handicap_from_the_players_tags(
    red_tags: tuple[str, ...], black_tags: tuple[str, ...], expected: Handicap | None
):
    assert handicap_for(reg(W), red_tags, black_tags) == expected


@pytest.mark.parametrize(("red_tags", "black_tags"), [((), ("u14",)), (("women",), ())])
def test_meishan_has_no_handicap(red_tags: tuple[str, ...], black_tags: tuple[str, ...]):
    assert reg(M).handicap is None
    assert handicap_for(reg(M), red_tags, black_tags) is None


# -- a double forfeit in the knockout: a match needs a winner (knockout.double_forfeit) -------
def test_meishan_knockout_double_forfeit_sends_the_higher_seed_through():
    import random

    from clock_service.knockout import Knockout

    ko = Knockout.start(["一", "二", "三", "四"], random.Random(1), regulation=reg(M))
    assert reg(M).knockout is not None and reg(M).knockout.double_forfeit == "higher_seed"
    ko.record("ko-sf1", "double_forfeit")  # 第一名对第四名, both absent
    ko.record("ko-sf2", "red")
    final = ko.game("ko-f")
    assert "一" in (final.red, final.black)


def test_a_profile_can_leave_a_knockout_double_forfeit_to_the_arbiter(tmp_path):
    import random

    from clock_service.knockout import Knockout, KnockoutError

    text = _bundled_text(M).replace(
        'colours = "lot"', 'colours = "lot"\ndouble_forfeit = "arbiter"'
    )
    r = Regulation.from_toml(text, source="club.toml")
    ko = Knockout.start(["一", "二", "三", "四"], random.Random(1), regulation=r)
    with pytest.raises(KnockoutError, match="arbiter"):
        ko.record("ko-sf1", "double_forfeit")
    bad = text.replace('double_forfeit = "arbiter"', 'double_forfeit = "replay"')
    with pytest.raises(ValueError, match=r"knockout\.double_forfeit: 'replay' is not one of"):
        Regulation.from_toml(bad, source="club.toml")


def _bundled_text(name: str) -> str:
    import importlib.resources

    return (importlib.resources.files("clock_service.profiles") / f"{name}.toml").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("old", "new", "key", "reason"),
    [
        (
            "moves = 2                          # 让二先",
            "moves = 1  #",
            "handicap.moves",
            "out of range 2..10",
        ),
        ('tags = ["u14"]', 'tags = ["U 14"]', "handicap.receivers[0].tags[0]", "not a code"),
        (
            'not_tags = ["master"]',
            'not_tags = ["master"]\nfoo = 1',
            "handicap.receivers[1].foo",
            "unknown key",
        ),
        ("[handicap.givers]", "[handicap.giverz]", "handicap.givers", "missing value"),
    ],
)
def test_a_bad_handicap_rule_names_the_key(old: str, new: str, key: str, reason: str):
    text = _bundled_text(W)
    assert old in text
    with pytest.raises(ValueError) as info:
        Regulation.from_toml(text.replace(old, new, 1), source="club.toml")
    assert f"club.toml: {key}: " in str(info.value) and reason in str(info.value)
