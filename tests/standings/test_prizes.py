"""The prize list's pure core (clock_service/prizes.py): the profiles' tables as the seeds write
them, shared places, the 30 % rule, lists that do not combine, and a bad [prizes] table."""

from __future__ import annotations

import importlib.resources

import pytest

from clock_service.prizes import PrizeBand, PrizeList, PrizeTable, Shrink, award, award_all
from clock_service.profile_table import RegulationError
from clock_service.regulation import Regulation

# 001 (Wulong) 八、1: 第一名5000元，第二名3000元，第三名1500元，第四名1200元，第五名1000元，
# 第六名800元；7-12名每人600元；13-18名每人500元；19-24名每人400元；25-32名每人300元
WULONG_OPEN = [5000, 3000, 1500, 1200, 1000, 800] + [600] * 6 + [500] * 6 + [400] * 6 + [300] * 8
# 2、3: 第一名600元，第二名500元，第三名400元，4-6名每人300元
WULONG_GROUP = [600, 500, 400, 300, 300, 300]
# 000 (Meishan) 八: 第1名3000元；第2名1500；第3名1000元；第4名800元；第5名600元；第6名500元；
# 第7—8名各400元；第9-12名各300元，第13—20名各200元；第21—30名各100元
MEISHAN = [3000, 1500, 1000, 800, 600, 500, 400, 400] + [300] * 4 + [200] * 8 + [100] * 10


def _yuan_by_place(prize_list: PrizeList) -> list[int]:
    return [prize_list.fen_of(p) // 100 for p in range(1, prize_list.places + 1)]


def test_the_profiles_pay_what_the_seeds_say() -> None:
    wulong = Regulation.load("wulong-2015").prizes
    assert wulong is not None and wulong.combinable  # 以上奖项可重复领取
    by_key = {p.key: p for p in wulong.lists}
    assert _yuan_by_place(by_key["open"]) == WULONG_OPEN
    assert sum(WULONG_OPEN) == 23900  # 公开组（合计23900元）
    assert by_key["open"].shrink == Shrink(80, 30)
    assert _yuan_by_place(by_key["mixed"]) == WULONG_GROUP and by_key["mixed"].tags == (
        "u14",
        "women",
    )
    assert _yuan_by_place(by_key["local"]) == WULONG_GROUP and by_key["local"].tags == ("local",)
    assert wulong.total_fen == 28700 * 100  # 总奖金28700元
    meishan = Regulation.load("meishan-2016").prizes
    assert meishan is not None and len(meishan.lists) == 1
    assert _yuan_by_place(meishan.lists[0]) == MEISHAN  # 录取前30名


def _open(shrink: Shrink | None = None) -> PrizeList:
    bands = (PrizeBand(1, 1, 500_000), PrizeBand(2, 2, 300_000), PrizeBand(3, 4, 100_000))
    return PrizeList("open", "公开组", "Open", (), bands, shrink)


def test_places_in_order_and_nothing_past_the_last() -> None:
    ranked = [(n, i + 1) for i, n in enumerate("甲乙丙丁戊")]
    done = award(_open(), ranked, registered=5)
    assert [(a.player, a.place, a.fen) for a in done.awards] == [
        ("甲", 1, 500_000),
        ("乙", 2, 300_000),
        ("丙", 3, 100_000),
        ("丁", 4, 100_000),
    ]
    assert done.paid_fen == 1_000_000 and not done.shrunk


def test_shared_places_split_their_prizes_equally() -> None:
    # 乙 丙 丁 share 2nd–4th: (3000 + 1000 + 1000) / 3 = 1666.66 each (rounded down to the fen)
    done = award(_open(), [("甲", 1), ("乙", 2), ("丙", 2), ("丁", 2), ("戊", 5)], registered=5)
    assert [(a.player, a.place, a.to, a.fen) for a in done.awards] == [
        ("甲", 1, 1, 500_000),
        ("乙", 2, 4, 166_666),
        ("丙", 2, 4, 166_666),
        ("丁", 2, 4, 166_666),
    ]
    assert all(a.shared for a in done.awards[1:])
    # sharing the last paid place with the first unpaid one: the paid one is split
    done = award(_open(), [("甲", 1), ("乙", 2), ("丙", 3), ("丁", 4), ("戊", 4)], registered=5)
    assert [(a.player, a.fen) for a in done.awards][-2:] == [("丁", 50_000), ("戊", 50_000)]


def test_the_thirty_percent_rule() -> None:
    shrink = Shrink(80, 30)
    # 如报名参赛人数低于80人，则受奖面只发总人数的30% (rounded down)
    assert [shrink.paid(32, n) for n in (0, 3, 4, 10, 16, 70, 79, 80, 200)] == [
        0, 0, 1, 3, 4, 21, 23, 32, 32,
    ]  # fmt: skip
    ranked = [(n, i + 1) for i, n in enumerate("甲乙丙丁戊己庚辛壬癸")]
    done = award(_open(shrink), ranked, registered=10)
    assert done.shrunk and done.paid_places == 3
    assert [a.player for a in done.awards] == ["甲", "乙", "丙"]


def test_lists_that_do_not_combine_pass_over_the_winners_of_earlier_lists() -> None:
    group = PrizeList("mixed", "综合组", "Mixed", ("u14",), (PrizeBand(1, 2, 60_000),))
    ranked = [[("甲", 1), ("乙", 2), ("丙", 3)], [("乙", 1), ("丙", 2), ("丁", 3)]]
    apart = award_all(PrizeTable(False, (_open(), group)), ranked, registered=4)
    assert [a.player for a in apart[1].awards] == ["丁"]  # 乙 and 丙 took open prizes
    assert [a.place for a in apart[1].awards] == [1]
    both = award_all(PrizeTable(True, (_open(), group)), ranked, registered=4)
    assert [a.player for a in both[1].awards] == ["乙", "丙"]


# the Wulong profile up to its [prizes], with another [prizes] after it
PROFILE_TEXT = (
    (importlib.resources.files("clock_service.profiles") / "wulong-2015.toml")
    .read_text(encoding="utf-8")
    .split("[prizes]")[0]
    .rstrip()
)


@pytest.mark.parametrize(
    ("prizes", "where", "words"),
    [
        ("combinable = 1\n[[prizes.lists]]", "prizes.combinable", "a boolean"),
        (
            'combinable = true\n[[prizes.lists]]\nkey = "open"\nzh = "公"\nen = "O"\n'
            "places = [{ from = 1, to = 2, yuan = 5 }, { from = 2, to = 3, yuan = 1 }]",
            "prizes.lists[0].places",
            "no gap, no overlap",
        ),
        (
            'combinable = true\n[[prizes.lists]]\nkey = "open"\nzh = "公"\nen = "O"\n'
            'places = [{ from = 1, to = 1, yuan = "5000" }]',
            "prizes.lists[0].places[0]",
            "integers",
        ),
        (
            'combinable = true\n[[prizes.lists]]\nkey = "open"\nzh = "公"\nen = "O"\n'
            "places = [{ from = 1, to = 1, yuan = 5 }]\nshrink = { below = 80, percent = 300 }",
            "prizes.lists[0].shrink.percent",
            "out of range",
        ),
        (
            'combinable = true\n[[prizes.lists]]\nkey = "open"\nzh = "公"\nen = "O"\n'
            "places = [{ from = 1, to = 1, yuan = 5 }]\npaces = 3",
            "prizes.lists[0].paces",
            "unknown key",
        ),
    ],
)
def test_a_bad_prizes_table_names_its_key(prizes: str, where: str, words: str) -> None:
    base = PROFILE_TEXT + "\n\n[prizes]\n" + prizes + "\n"
    with pytest.raises(RegulationError) as caught:
        Regulation.from_toml(base, source="test.toml")
    assert caught.value.key == where and words in caught.value.reason, caught.value

