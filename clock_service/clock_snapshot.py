"""The checks on a ``GameClock.snapshot()`` read back from a journal: every field's type and
range, so a damaged checkpoint is refused with the first bad field named."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clock_service.side import Side
from clock_service.timecontrol import TimeControl

__all__ = ["check_snapshot"]


def check_snapshot(
    snapshot: object, *, version: int, side_keys: tuple[str, ...], phases: set[str]
) -> dict[str, Any]:
    """The snapshot's fields, type-checked; ValueError names the first bad one."""

    def bad(where: str, why: str) -> ValueError:
        return ValueError(f"snapshot {where}: {why}")

    if not isinstance(snapshot, Mapping):
        raise bad("", f"must be a mapping, not {type(snapshot).__name__}")
    expected = {"v", "tc", "black_tc", "phase", "side_on_move", "flag", "started", "red", "black"}
    optional = {"handicap"}  # absent in snapshots from before handicap games
    missing, unknown = expected - set(snapshot), set(snapshot) - expected - optional
    if missing or unknown:
        raise bad("keys", f"missing {sorted(missing)}, unknown {sorted(map(str, unknown))}")
    if snapshot["v"] != version:
        raise bad("'v'", f"version {snapshot['v']!r} is not {version}")
    checks: dict[str, Callable[[object], bool]] = {
        "tc": lambda v: isinstance(v, str),
        "black_tc": lambda v: v is None or isinstance(v, str),
        "phase": lambda v: v in phases,
        "side_on_move": lambda v: v in {s.value for s in Side},
        "flag": lambda v: v is None or v in {s.value for s in Side},
        "started": lambda v: isinstance(v, bool),
    }
    for key, ok in checks.items():
        if not ok(snapshot[key]):
            raise bad(repr(key), f"bad value {snapshot[key]!r}")
    for key in ("tc", "black_tc"):
        if snapshot[key] is not None:
            try:
                TimeControl.parse(snapshot[key])
            except ValueError as exc:
                raise bad(repr(key), str(exc)) from None
    for side in ("red", "black"):
        values = snapshot[side]
        if not isinstance(values, Mapping) or set(values) != set(side_keys):
            raise bad(repr(side), f"must be a mapping with exactly the keys {list(side_keys)}")
        for key in side_keys:
            value = values[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise bad(f"{side}.{key}", f"must be a non-negative int, not {value!r}")
        if values["turn_ns"] > values["used_ns"]:
            raise bad(f"{side}.turn_ns", "is more than used_ns")
    return dict(snapshot)
