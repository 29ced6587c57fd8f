"""Which engine refuses which line (``clock_service.trf.engines``), from the engines' published
rules (docs/pairing.md "What each engine reads"): each rule broken once in the golden file after
round 3, and the stand-in engine (tests/support/trf_engine.py) refusing what they refuse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.trf_engine import EngineRefused, pair

from clock_service.trf.engines import BBP, JAVAFO, SWISS_MANAGER, refusals

GOLDEN = Path(__file__).parent / "golden"
ENGINE = Path(__file__).resolve().parents[1] / "support" / "trf_engine.py"


def golden(name: str = "xiangqi-r3.trf") -> str:
    return (GOLDEN / name).read_bytes().decode()


def line_no(text: str, start: str) -> int:
    return next(n for n, x in enumerate(text.split("\r\n"), 1) if x.startswith(start))


def test_the_golden_export_is_read_by_every_engine() -> None:
    assert refusals(golden()) == []
    assert refusals(golden("fide-2016.trf"), pairing=False) == []


@pytest.mark.parametrize(
    ("old", "new", "engine", "column", "word"),
    [
        # the line of the export before issue 26: bbpPairings refused every file
        ("162  W 2.0    D 1.0", "162  W 2.0    D 1.0    X 1.0", BBP, 24, "symbol X not supported"),
        ("162  W 2.0    D 1.0", "162  W 2.0    D 1.0    A 0.0", BBP, 24, "code A"),
        ("162  W 2.0    D 1.0", "162  W 2.0    Q 1.0", BBP, 15, "Invalid line"),
        ("162  W 2.0    D 1.0", "162 W 2.0    D 1.0", BBP, 6, "Invalid line"),
        ("BBW  2.0", "BBW 2.0", BBP, 5, "Invalid line"),
        ("BBW  2.0", "BBW  2.50", BBP, 5, "Invalid line"),
        ("152 W", "152 W ", BBP, 6, "Invalid line"),
        ("XXS W=2 D=1 PAB=2", "XXS W=2 D=1", JAVAFO, 0, "XXS PAB=1.0 but bbpPairings reads 2.0"),
        ("XXS W=2 D=1 PAB=2", "XXS W=2 D=1 PAB=2 Q=1", JAVAFO, 5, "XXS"),
        (
            "  5.0    1     5 w 1",
            "  5.5    1     5 w 1",
            BBP,
            81,
            "does not match the game results",
        ),
        ("  5.0    1     5 w 1", "  5.0    1     5 W 1", BBP, 97, "colour 'W'"),
        ("     5 w 1     4 b 1", "     5 w 1     4 b  ", BBP, 109, "paired, no result"),
        ("     5 w 1     4 b 1", "     5 w 1     4 w 1", BBP, 102, "contradicts the entry"),
        ("     5 w 1     4 b 1", "     5 w 1     4 b =", BBP, 81, "does not match"),
        ("192", "192 FIDE_DUTCH_2099", BBP, 5, "unsupported tournament type"),
        ("###", "299 1", BBP, 1, "abnormal assignment points"),
    ],
)
def test_each_rule(old: str, new: str, engine: str, column: int, word: str) -> None:
    text = golden()
    if old in ("192", "###"):
        text = text.replace("062 7\r\n", f"062 7\r\n{new}\r\n", 1)
    else:
        assert old in text
        text = text.replace(old, new, 1)
    found = [r for r in refusals(text) if r.engine == engine and word in r.reason]
    assert found, [str(r) for r in refusals(text)]
    where = new[:3] if new[:3] in ("162", "BBW", "152", "XXS", "192", "299") else "001    1"
    if engine == JAVAFO and column == 0:
        where = "BBD"  # the last point line: where the engines part
    assert found[0].line == line_no(text, where), str(found[0])
    assert found[0].column == column, str(found[0])


def test_javafo_reads_rounds_only_from_xxr_and_not_240() -> None:
    text = golden().replace("XXR 5\r\n", "")
    assert any(r.engine == JAVAFO and "XXR" in r.reason for r in refusals(text))
    assert not any(r.engine == BBP for r in refusals(text))  # 142 is enough for bbpPairings
    # an absence only in 240, not in the player's own column: JaVaFo would pair him
    text = golden().replace("  0000 - Z  0000 - Z", "  0000 - Z")
    found = [r for r in refusals(text) if r.engine == JAVAFO]
    assert found and "240 is not read: player 7" in found[0].reason
    assert found[0].line == line_no(text, "240")


def test_a_half_point_bye_ahead_counts_in_the_points() -> None:
    # player 7 asks for a half-point bye in round 4: 0000 - H in his column, 1 point counted
    text = (
        golden()
        .replace("  0.0    7     3 b -", "  1.0    7     3 b -")
        .replace("  0000 - Z  0000 - Z", "  0000 - Z  0000 - H")
    )
    text = text.replace("240 Z 004 0007", "240 H 004 0007")
    assert refusals(text) == []
    uncounted = text.replace("  1.0    7     3 b -", "  0.0    7     3 b -")
    assert [r.engine for r in refusals(uncounted)] == [JAVAFO]  # bbp takes both, JaVaFo not


def test_swiss_manager_judged_by_the_trf_2026_description() -> None:
    text = golden().replace("     5 w 1     4 b 1", "     5 w 1     4 bx1")
    assert any(r.engine == SWISS_MANAGER and r.column == 108 for r in refusals(text))


def test_the_stand_in_engine_pairs_and_refuses() -> None:
    pairs = pair(golden().encode())
    seated = sorted(x for p in pairs for x in p if x)
    assert seated == [1, 2, 3, 4, 5, 6] and all(b for _, b in pairs)  # 7 absent, 6 present
    assert (3, 4) not in pairs and (4, 3) not in pairs  # 260: 3 and 4 may not meet in round 4
    with pytest.raises(EngineRefused, match="symbol X not supported"):
        pair(golden().replace("D 1.0", "D 1.0    X 1.0", 1).encode())
    with pytest.raises(EngineRefused, match="cut short"):  # a paired round, no results
        pair(golden("xiangqi-r4-paired.trf").encode())


def test_the_stand_in_engine_on_the_command_line(tmp_path: Path) -> None:
    src, out = tmp_path / "in.trf", tmp_path / "out.txt"
    src.write_bytes(golden().encode())
    run = subprocess.run(
        [sys.executable, str(ENGINE), "--dutch", str(src), "-p", str(out)], capture_output=True
    )
    assert run.returncode == 0, run.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "3" and len(lines) == 4
    src.write_bytes(golden().replace("BBW  2.0", "BBW 2.0").encode())
    run = subprocess.run(
        [sys.executable, str(ENGINE), "--dutch", str(src), "-p", str(out)], capture_output=True
    )
    assert run.returncode == 3
    assert run.stderr.decode().startswith(f"Error parsing file {src}: Invalid line")
