"""A pairing engine's answer, the plain pairs list: the number of pairs, then "white black"
start ranks in board order, ``N 0`` a bye."""

from __future__ import annotations

from pathlib import Path

import pytest

from clock_service.trf.document import TrfError
from clock_service.trf.pairs import pairs_text, parse_pairs

GOLDEN = Path(__file__).parent / "golden"


def test_golden_lists() -> None:
    assert parse_pairs((GOLDEN / "round4.pairs").read_text()) == [(1, 6), (3, 2), (4, 5)]
    pairs = parse_pairs((GOLDEN / "with-bye.pairs").read_bytes())
    assert pairs == [(2, 1), (3, 4), (6, 5), (8, 9), (7, 0)]
    assert pairs_text(pairs) == (GOLDEN / "with-bye.pairs").read_text()


def test_crlf_and_blank_trailing_lines() -> None:
    assert parse_pairs("2\r\n1 2\r\n3  4\r\n\r\n") == [(1, 2), (3, 4)]


@pytest.mark.parametrize(
    ("text", "line", "word"),
    [
        ("", 1, "empty"),
        ("two\n1 2\n", 1, "number of pairs"),
        ("2\n1 2\n", 1, "2 pairs announced, 1 given"),
        ("1\n1 2\n3 4\n", 3, "1 pairs announced"),
        ("1\n1\n", 2, "two start ranks"),
        ("1\n1 x\n", 2, "start rank"),
        ("1\n3 3\n", 2, "himself"),
        ("2\n1 2\n2 3\n", 3, "already paired on line 2"),
        ("1\n0 4\n", 2, "bye"),
        ("2\n1 0\n2 0\n", 3, "second bye"),
        ("1\n10000 1\n", 2, "1..9999"),
    ],
)
def test_bad_lists(text: str, line: int, word: str) -> None:
    with pytest.raises(TrfError) as info:
        parse_pairs(text)
    assert info.value.line == line, str(info.value)
    assert word in info.value.reason, str(info.value)


def test_the_number_of_pairs_is_bounded() -> None:
    with pytest.raises(TrfError, match=r"not 0\.\.5000") as info:
        parse_pairs("5001\n" + "".join(f"{2 * i + 1} {2 * i + 2}\n" for i in range(5001)))
    assert info.value.line == 1
    most = "5000\n" + "".join(f"{2 * i + 1} {2 * i + 2}\n" for i in range(4999)) + "9999 0\n"
    assert len(parse_pairs(most)) == 5000  # 9999 players: 4999 games and a bye
