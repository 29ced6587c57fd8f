"""Pairings and players CSV: Chinese names, and each bad input named by its line."""

from __future__ import annotations

import pytest

from venue_station.domain.pairings import Pairing, parse_pairings, parse_players
from venue_station.errors import PairingsError

GOOD = "round,board,red,black\n7,1,王天一,郑惟桐\n7,12,许银川,吕钦\n"


def test_a_good_file_with_chinese_names() -> None:
    assert parse_pairings(GOOD.encode("utf-8")) == [
        Pairing(7, "1", "王天一", "郑惟桐", 2),
        Pairing(7, "12", "许银川", "吕钦", 3),
    ]


def test_an_excel_bom_and_blank_lines_are_accepted() -> None:
    data = ("\ufeff" + GOOD + "\n\n").encode("utf-8")
    assert len(parse_pairings(data)) == 2


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("round,board,white,black\n", 1, "header must be round,board,red,black"),
        ("", 1, "empty file"),
        ("round,board,red,black\n", 1, "no pairings"),
        ("round,board,red,black\n7,1,王天一\n", 2, "expected 4 fields"),
        ("round,board,red,black\nseven,1,王天一,郑惟桐\n", 2, "round 'seven' is not a number"),
        ("round,board,red,black\n7,1 号,王天一,郑惟桐\n", 2, "board '1 号'"),
        ("round,board,red,black\n7,1,,郑惟桐\n", 2, "red player is empty"),
        (
            "round,board,red,black\n7,1,王天一,郑惟桐\n7,1,许银川,吕钦\n",
            3,
            "duplicate board 1 in round 7 (first on line 2)",
        ),
        (
            "round,board,red,black\n7,1,王天一,郑惟桐\n7,2,王天一,吕钦\n",
            3,
            "player '王天一' is already paired in round 7",
        ),
    ],
)
def test_each_bad_input_names_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(PairingsError) as info:
        parse_pairings(text.encode(), source="r7.csv")
    assert info.value.line == line
    assert words in str(info.value)
    assert str(info.value).startswith(f"r7.csv: line {line}: ")


def test_an_unknown_player_is_refused_when_a_list_is_loaded() -> None:
    with pytest.raises(PairingsError, match=r"line 3: unknown player '吕钦' \(black\)"):
        parse_pairings(GOOD, players={"王天一", "郑惟桐", "许银川"})


def test_a_file_that_is_not_utf8_says_so() -> None:
    with pytest.raises(PairingsError, match="not UTF-8"):
        parse_pairings(GOOD.encode("gbk"))


def test_players_csv() -> None:
    rows = parse_players("name,club,rating\n王天一,杭州,2700\n郑惟桐,四川,\n")
    assert rows == [
        {"name": "王天一", "club": "杭州", "rating": 2700},
        {"name": "郑惟桐", "club": "四川", "rating": None},
    ]
    # a repeated name: told apart by the number in the file, as the TRF import does
    rows = parse_players("name,rating\n张伟,2100\n王天一,2700\n张伟,2050\n")
    assert [(r["name"], r["rating"]) for r in rows] == [
        ("张伟 (1)", 2100),
        ("王天一", 2700),
        ("张伟 (3)", 2050),
    ]
    with pytest.raises(PairingsError, match=r"line 4: player '张伟 \(1\)' listed twice"):
        parse_players("name\n张伟\n张伟\n张伟 (1)\n")
    # the same name from the same club twice is a repeated row, not two namesakes (an
    # outsider's 洪智 ×2 became two players for good); from two clubs, two players
    with pytest.raises(PairingsError, match=r"line 3: player '洪智' of '广东' listed twice"):
        parse_players("name,club\n洪智,广东\n洪智,广东\n")
    two = parse_players("name,club\n张伟,武隆\n张伟,涪陵\n")
    assert [r["name"] for r in two] == ["张伟 (1)", "张伟 (2)"]
    with pytest.raises(PairingsError, match="line 2: rating 'high'"):
        parse_players("name,rating\n王天一,high\n")
