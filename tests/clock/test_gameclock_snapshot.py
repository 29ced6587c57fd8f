"""GameClock's snapshot and restore (a node restarting mid-game), its events as the wire
names them, its constructor and repr.
"""

from __future__ import annotations

import json

import pytest
from support.fake_time import clock

from clock_service import (
    Adjusted,
    Flagged,
    GameClock,
    Moved,
    Paused,
    Phase,
    Resumed,
    Side,
    Started,
    TimeControl,
)

RED, BLACK = Side.RED, Side.BLACK

# -- snapshot and restore --------------------------------------------------------------------


def test_snapshot_is_plain_json_and_restores_paused_by_default(t):
    c = clock(t, "40/90m+30s:30m+30s", black="1h")
    c.start()
    t.advance(ms=1500)
    c.press(RED)
    t.advance(ms=700)
    snap = c.snapshot()
    assert json.loads(json.dumps(snap)) == snap and snap["v"] == 1
    assert snap["phase"] == "running" and snap["black_tc"] == "1h"
    t.advance(s=1000)  # power is off for a while
    restored = GameClock.restore(json.loads(json.dumps(snap)), now=t)
    assert (restored.phase, restored.side_on_move) == (Phase.PAUSED, BLACK)
    assert restored.remaining_ms(BLACK) == 3_600_000 - 700
    assert restored.remaining_ms(RED) == c.remaining_ms(RED)
    assert restored.resume() == (Resumed(BLACK),)
    t.advance(ms=300)
    assert restored.press(BLACK) == (Moved(BLACK, 1000, 1),)


def test_restore_running_on_request(t):
    c = clock(t)
    c.start()
    t.advance(s=3)
    restored = GameClock.restore(c.snapshot(), now=t, resume=True)
    assert restored.running is RED
    t.advance(s=1)
    assert restored.remaining_ms(RED) == 1_800_000 - 4_000


def test_restore_a_finished_clock_and_a_fresh_one(t):
    c = clock(t, "1s")
    assert GameClock.restore(c.snapshot(), now=t).phase is Phase.IDLE
    c.start()
    t.advance(s=2)
    snap = c.snapshot()  # the flag is derived, not yet settled: the snapshot says so anyway
    assert (snap["phase"], snap["flag"]) == ("finished", "red")
    restored = GameClock.restore(snap, now=t)
    assert (restored.flag, restored.phase, restored.settle()) == (RED, Phase.FINISHED, ())


def _mutated(t, path, value):
    c = clock(t, "30m:3x30s")
    c.start()
    t.advance(s=1)
    snap = c.snapshot()
    target = snap
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return snap


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("v",), 2, "snapshot 'v': version 2 is not 1"),
        (("tc",), "30x", "snapshot 'tc': time control '30x'"),
        (("tc",), 30, "snapshot 'tc': bad value 30"),
        (("phase",), "flying", "snapshot 'phase': bad value 'flying'"),
        (("side_on_move",), "white", "snapshot 'side_on_move'"),
        (("flag",), "red", "'flag' must be set exactly when 'phase' is 'finished'"),
        (("started",), 1, "snapshot 'started'"),
        (("extra",), 1, "unknown \\['extra'\\]"),
        (("flag",), _DELETE, "missing \\['flag'\\]"),
        (("red", "main_ns"), -1, "snapshot red.main_ns: must be a non-negative int"),
        (("red", "moves"), "3", "snapshot red.moves"),
        (("black", "used_ns"), True, "snapshot black.used_ns"),
        (("black", "turn_ns"), 5, "black.turn_ns: is more than used_ns"),
        (("red", "periods"), 4, "byo-yomi state does not fit"),
        (("red", "bogus"), 4, "snapshot 'red': must be a mapping with exactly the keys"),
        (("black",), [], "snapshot 'black': must be a mapping"),
    ],
)
def test_restore_rejects_malformed(t, path, value, error):
    with pytest.raises(ValueError, match=error):
        GameClock.restore(_mutated(t, path, value), now=t)


def test_restore_rejects_no_time_without_flag(t):
    snap = _mutated(t, ("black", "main_ns"), 0)
    snap["black"]["periods"] = 0
    with pytest.raises(ValueError, match="snapshot black: no time left but no flag"):
        GameClock.restore(snap, now=t)
    with pytest.raises(ValueError, match="must be a mapping"):
        GameClock.restore([], now=t)  # type: ignore[arg-type]


# -- events, construction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "type_", "data", "text"),
    [
        (Started(RED), "started", {"side_on_move": "red"}, "<started side_on_move=red>"),
        (Moved(RED, 8123, 21), "move", {"side": "red", "used_ms": 8123, "move": 21},
         "<move side=red used_ms=8123 move=21>"),
        (Paused(BLACK), "paused", {"side_on_move": "black"}, "<paused side_on_move=black>"),
        (Resumed(BLACK), "resumed", {"side_on_move": "black"}, "<resumed side_on_move=black>"),
        (Flagged(RED), "flag", {"side": "red"}, "<flag side=red>"),
        (Adjusted(BLACK, -5000), "adjusted", {"side": "black", "delta_ms": -5000},
         "<adjusted side=black delta_ms=-5000>"),
    ],
)  # fmt: skip
def test_event_types_match_the_wire(event, type_, data, text):
    assert (event.type, event.data(), repr(event)) == (type_, data, text)


def test_constructor_validates(t):
    with pytest.raises(TypeError, match="tc must be a TimeControl"):
        GameClock("30m+5s", now=t)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="now must be a callable"):
        GameClock(TimeControl.parse("30m"), now=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        GameClock(TimeControl.parse("30m"), t)  # type: ignore[misc]


def test_repr_is_readable(t):
    c = clock(t, "6m", black="4m")
    assert repr(c) == (
        "<GameClock idle on_move=red flag=None red=360000ms/0 black=240000ms/0 tc=6m black_tc=4m>"
    )
