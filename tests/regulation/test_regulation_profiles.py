"""Regulation profiles: the bundled seeds carry the seeds' numbers; every kind of bad profile
fails with the file, the dotted key and the reason."""

from __future__ import annotations

import dataclasses
import datetime
import importlib.resources
from pathlib import Path

import pytest

from clock_service.regulation import Offence, Regulation, RegulationError, Tiebreak
from clock_service.side import Side
from clock_service.timecontrol import TimeControl

MEISHAN_TEXT = (
    importlib.resources.files("clock_service.profiles") / "meishan-2016.toml"
).read_text(encoding="utf-8")

# attribute path -> (Meishan 2016, Wulong 2015), from the seeds (DESIGN.md §2 side by side)
SEED_NUMBERS = [
    ("time_control_text", "30m+5s", "35m+5s"),
    ("scoring.win", 2, 2),
    ("scoring.draw", 1, 1),
    ("scoring.loss", 0, 0),
    ("fouls.forfeit_at", 2, 3),
    ("fouls.progressive_penalty", 1, 0),
    ("clock.board_pause", Offence.FOUL, Offence.FOUL),
    ("clock.switch_off", Offence.FORFEIT, Offence.FORFEIT),
    ("late.minutes", 15, 15),
    ("late.ms", 900_000, 900_000),
    ("move_limit.moves", 40, 50),
    ("move_limit.claimant_checks_counted", 0, 10),
    ("draw.min_moves", 0, 20),
    ("tournament.rounds", 9, 9),
]


def _attr(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize(("path", "meishan", "wulong"), SEED_NUMBERS)
def test_bundled_profiles_carry_the_seed_numbers(path: str, meishan: object, wulong: object):
    assert _attr(Regulation.load("meishan-2016"), path) == meishan
    assert _attr(Regulation.load("wulong-2015"), path) == wulong


@pytest.mark.parametrize("name", Regulation.bundled())
def test_bundled_profile_details(name: str):
    reg = Regulation.load(name)
    assert reg.name == name
    assert reg.time_control == TimeControl.parse(reg.time_control_text)
    assert reg.standings.order == (
        Tiebreak.POINTS,
        Tiebreak.PROGRESSIVE,
        Tiebreak.WINS,
        Tiebreak.FOULS,
        Tiebreak.BLACK_GAMES,
        Tiebreak.DROP_ROUNDS,
    )
    assert "board_pause" in reg.fouls.reasons
    assert {"late", "power_switch", "fouls"} <= set(reg.forfeits.reasons)
    assert repr(reg) == f"<Regulation {name} {reg.time_control_text}>"


def test_only_wulong_lists_pressing_without_moving_as_a_foul():
    assert "pressed_without_moving" in Regulation.load("wulong-2015").fouls.reasons
    assert "pressed_without_moving" not in Regulation.load("meishan-2016").fouls.reasons


def test_meishan_knockout_and_tiebreak_game():
    knockout = Regulation.load("meishan-2016").knockout
    assert knockout is not None and knockout.tiebreak is not None
    assert (knockout.after_round, knockout.players, knockout.colours) == (7, 4, "lot")
    assert knockout.pairings == ((1, 4), (2, 3))
    assert knockout.tiebreak.time_control == TimeControl.parse("10m+3s")
    assert knockout.tiebreak.draw_winner is Side.BLACK
    assert knockout.tiebreak.colour_choice == "slow_game_black"
    assert Regulation.load("wulong-2015").knockout is None


def test_wulong_schedule():
    t = Regulation.load("wulong-2015").tournament
    got = [(s.date.day, s.start.strftime("%H:%M"), s.rounds) for s in t.sessions]
    assert got == [(19, "09:00", 2), (19, "13:30", 3), (20, "09:00", 2), (20, "13:30", 2)]
    meishan = Regulation.load("meishan-2016").tournament
    assert meishan.dates == (datetime.date(2016, 12, 10), datetime.date(2016, 12, 11))
    assert meishan.sessions == ()  # the seed's 日程安排 is blank


def test_regulation_is_frozen():
    reg = Regulation.load("meishan-2016")
    with pytest.raises(dataclasses.FrozenInstanceError):
        reg.fouls.forfeit_at = 5  # type: ignore[misc]


def test_load_by_path_and_from_text_agree(tmp_path: Path):
    path = tmp_path / "copy.toml"
    path.write_text(MEISHAN_TEXT, encoding="utf-8")
    assert Regulation.load(path) == Regulation.load("meishan-2016")
    assert Regulation.load(str(path)) == Regulation.from_toml(MEISHAN_TEXT)


def test_all_checks_count_is_spelled_all():
    text = MEISHAN_TEXT.replace("claimant_checks_counted = 0", 'claimant_checks_counted = "all"')
    assert Regulation.from_toml(text).move_limit.claimant_checks_counted is None


def test_a_draw_winner_of_none_is_allowed():
    text = MEISHAN_TEXT.replace('draw_winner = "black"', 'draw_winner = "none"')
    knockout = Regulation.from_toml(text).knockout
    assert knockout is not None and knockout.tiebreak is not None
    assert knockout.tiebreak.draw_winner is None


def test_profile_without_knockout_or_source_loads():
    text = MEISHAN_TEXT.split("[knockout]")[0].replace('source = "000_90e870e6d41019dd.txt"', "")
    reg = Regulation.from_toml(text)
    assert reg.knockout is None and reg.source == ""


# (id, text to replace in the Meishan profile, replacement, dotted key, words in the reason)
BAD_PROFILES = [
    ("unknown top key", "name = ", "colour = 1\nname = ", "colour", "unknown key"),
    (
        "unknown key, hint",
        "forfeit_at = 2",
        "forfeit_at = 2\nforfiet_at = 2",
        "fouls.forfiet_at",
        "did you mean 'forfeit_at'",
    ),
    ("unknown table", "[draw]", "[draws]\nx = 1\n[draw]", "draws", "unknown key"),
    (
        "wrong type str for int",
        "forfeit_at = 2",
        'forfeit_at = "2"',
        "fouls.forfeit_at",
        "an integer expected, got a string",
    ),
    (
        "wrong type bool for int",
        "minutes = 15",
        "minutes = true",
        "late.minutes",
        "an integer expected, got a boolean",
    ),
    ("wrong type float", "win = 2", "win = 2.0", "scoring.win", "got a float"),
    (
        "wrong type int for str",
        'colours = "lot"',
        "colours = 1",
        "knockout.colours",
        "a string expected",
    ),
    ("wrong type table", "[scoring]", "scoring = 1\n[scorin]", "scoring", "a table expected"),
    ("missing top value", 'name = "meishan-2016"', "", "name", "missing value"),
    ("missing nested value", "loss = 0", "", "scoring.loss", "missing value"),
    ("missing table", "[late]\nminutes = 15", "", "late", "missing value"),
    (
        "bad time control",
        'time_control = "30m+5s"',
        'time_control = "30x+5s"',
        "time_control",
        "bad time control",
    ),
    (
        "empty time control",
        'time_control = "30m+5s"',
        'time_control = ""',
        "time_control",
        "must not be empty",
    ),
    (
        "bad tiebreak time control",
        'time_control = "10m+3s"',
        'time_control = "10m+"',
        "knockout.tiebreak.time_control",
        "bad time control",
    ),
    ("out of range", "forfeit_at = 2", "forfeit_at = 0", "fouls.forfeit_at", "out of range"),
    ("negative", "draw = 1", "draw = -1", "scoring.draw", "out of range"),
    (
        "bad offence",
        'board_pause = "foul"',
        'board_pause = "maybe"',
        "clock.board_pause",
        "is not one of 'none', 'foul', 'forfeit'",
    ),
    (
        "bad reason code",
        "[fouls.reasons.phone]",
        "[fouls.reasons.Phone]",
        "fouls.reasons.Phone",
        "is not a code",
    ),
    (
        "reason without English",
        'en = "Looking at a phone during the game"',
        "",
        "fouls.reasons.phone.en",
        "missing value",
    ),
    (
        "English wording not ASCII",
        'en = "Looking at a phone during the game"',
        'en = "查看手机"',
        "fouls.reasons.phone.en",
        "must be ASCII",
    ),
    (
        "count of an unknown foul",
        'of = "move_rule_violation"',
        'of = "move_rule_violaton"',
        "forfeits.reasons.move_rule_violations.of",
        "is not one of fouls.reasons",
    ),
    (
        "count out of range",
        "count = 2",
        "count = 0",
        "forfeits.reasons.move_rule_violations.count",
        "out of range 1..100",
    ),
    (
        "unknown key in a reason",
        'en = "Looking at a phone during the game"',
        'en = "Looking at a phone during the game"\nfoo = 1',
        "fouls.reasons.phone.foo",
        "unknown key",
    ),
    (
        "bad checks text",
        "claimant_checks_counted = 0",
        'claimant_checks_counted = "some"',
        "move_limit.claimant_checks_counted",
        "an integer expected",
    ),
    ("bad tiebreak name", '"wins",', '"victories",', "standings.order[2]", "is not one of"),
    ("order without points first", '"points", ', "", "standings.order", "start with 'points'"),
    (
        "drop_rounds not last",
        '"wins", "fouls", "black_games", "drop_rounds"',
        '"drop_rounds", "wins"',
        "standings.order",
        "only be the last",
    ),
    (
        "bad date",
        "dates = [2016-12-10,",
        'dates = ["2016-12-10",',
        "tournament.dates[0]",
        "a date (2016-12-10) expected",
    ),
    (
        "sessions do not add up",
        "dates = [2016-12-10, 2016-12-11]",
        "[[tournament.sessions]]\ndate = 2016-12-10\nstart = 09:00:00\nrounds = 4",
        "tournament.sessions",
        "hold 4 rounds, not 9",
    ),
    (
        "session missing start",
        "dates = [2016-12-10, 2016-12-11]",
        "[[tournament.sessions]]\ndate = 2016-12-10\nrounds = 9",
        "tournament.sessions[0].start",
        "missing value",
    ),
    (
        "bad pairing",
        "pairings = [[1, 4], [2, 3]]",
        "pairings = [[1, 5], [2, 3]]",
        "knockout.pairings[0]",
        "not a pair of standings 1..4",
    ),
    (
        "knockout after last round",
        "after_round = 7",
        "after_round = 9",
        "knockout.after_round",
        "before the last round",
    ),
    (
        "bad draw winner",
        'draw_winner = "black"',
        'draw_winner = "blue"',
        "knockout.tiebreak.draw_winner",
        "is not one of",
    ),
    ("bad name", 'name = "meishan-2016"', 'name = "眉山"', "name", "must match"),
]


@pytest.mark.parametrize(
    ("old", "new", "key", "reason"),
    [case[1:] for case in BAD_PROFILES],
    ids=[c[0] for c in BAD_PROFILES],
)
def test_bad_profile_names_file_key_and_reason(
    tmp_path: Path, old: str, new: str, key: str, reason: str
):
    assert old in MEISHAN_TEXT, "the test case no longer matches the bundled profile"
    path = tmp_path / "bad.toml"
    path.write_text(MEISHAN_TEXT.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RegulationError) as info:
        Regulation.load(path)
    err = info.value
    assert (err.source, err.key) == (str(path), key)
    assert reason in err.reason
    assert str(err).startswith(f"{path}: {key}: ")
    assert isinstance(err, ValueError)


def test_toml_syntax_error_names_the_file():
    with pytest.raises(RegulationError, match=r"^club\.toml: not valid TOML: .*line 1"):
        Regulation.from_toml("name = = 1", source="club.toml")


def test_missing_file_lists_the_bundled_profiles(tmp_path: Path):
    with pytest.raises(RegulationError, match="no such profile; bundled profiles: meishan-2016"):
        Regulation.load(tmp_path / "nope.toml")
    with pytest.raises(RegulationError, match="no such profile"):
        Regulation.load("meishan-2017")


def test_unreadable_file(tmp_path: Path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"title = '\xe9'")
    with pytest.raises(RegulationError, match="cannot read"):
        Regulation.load(path)
