"""What issue 28's fault checks (tests/chaos/test_station_faults.py, test_node_card_full.py)
share: a round started through the arbiter's API, the station's alarms, the journals and
the store compared, and a venue whose chosen boards are serial clocks the test presses.

- :func:`start_round`: every board online, round 1 paired and started (``at`` +0.5 s).
- :func:`alarm_codes`: what ``/api/station`` lists.
- :func:`all_journals`, :func:`caught_up`: every journaled (board, session, seq); until the
  store holds them all.
- :class:`SerialVenue`: a :class:`ChaosVenue` whose boards in ``serial`` are the serial clock
  emulator's (``face = "serial"`` at its URL) instead of simulated faces.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from support.chaos import ChaosVenue
from support.chaos_round import Api, journal_keys, store_keys, until

__all__ = ["SerialVenue", "alarm_codes", "all_journals", "caught_up", "start_round"]


def alarm_codes(api: Api) -> list[str] | None:
    """What ``/api/station`` lists (None: no answer)."""
    body = api.call("GET", "/api/station")
    if not isinstance(body, dict) or not isinstance(body.get("alarms"), list):
        return None
    return [a["code"] for a in body["alarms"]]


async def start_round(venue: ChaosVenue, api: Api) -> None:
    await asyncio.to_thread(api.login)

    def online() -> bool:
        views = api.boards()
        return len(views) >= venue.boards and all(v["online"] for v in views.values())

    await until(online, timeout_s=60, what="every board online")
    rows = ["round,board,red,black"] + [
        f"1,{b},P{2 * b - 1:03d},P{2 * b:03d}" for b in range(1, venue.boards + 1)
    ]
    reply = await asyncio.to_thread(
        api.call, "POST", "/api/pairings", "\n".join(rows) + "\n", raw=True
    )
    assert isinstance(reply, dict) and not reply.get("error"), reply
    await until(
        lambda: all((v.get("state") or {}).get("phase") == "ready" for v in api.boards().values()),
        timeout_s=30, what="every game set",
    )  # fmt: skip
    at = int(time.time() * 1000) + 500
    reply = await asyncio.to_thread(
        api.call, "POST", "/api/venue/cmd", {"cmd": "start", "args": {"at": at}}
    )
    assert isinstance(reply, dict) and reply.get("ok"), reply


def all_journals(venue: ChaosVenue) -> set[tuple[str, int, int]]:
    out: set[tuple[str, int, int]] = set()
    for path in venue.journals().values():
        out |= journal_keys(path)
    return out


def stop_nodes(venue: ChaosVenue) -> None:
    """Every node ends (``LocalVenue.stop_nodes``), cleanly, the station and the broker left
    up: the boards that play by themselves journal nothing more, so a store that catches up
    after this holds everything (caught up while they played, the next event may meet a
    stopped station)."""
    venue.stop_nodes()
    ended = {node: proc.returncode for node, proc in venue.nodes.items()}
    assert set(ended.values()) == {0}, f"nodes ended with {ended}"


async def caught_up(venue: ChaosVenue, db: Path, timeout_s: float) -> float:
    """Seconds until the store at ``db`` holds every journaled event; a failure names the
    events the store lacks as their journals hold them (marked sent or not, their type)."""
    began = time.monotonic()
    try:
        await until(
            lambda: store_keys(db) >= all_journals(venue), timeout_s=timeout_s,
            what="the store to hold every journaled event",
        )  # fmt: skip
    except AssertionError as exc:
        missing = sorted(all_journals(venue) - store_keys(db))
        journaled = _as_journaled(venue, missing)
        raise AssertionError(f"{exc}: {len(missing)} missing, {journaled}") from None
    return time.monotonic() - began


def _as_journaled(venue: ChaosVenue, keys: list[tuple[str, int, int]]) -> list[str]:
    """The first keys as their journals hold them: board/session/seq, type, sent or not."""
    out: list[str] = []
    for path in venue.journals().values():
        if not path.exists():
            continue
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            for board, session, seq in keys[:10]:
                row = db.execute(
                    "SELECT json_extract(payload, '$.type'), sent FROM outbox WHERE board = ? "
                    "AND seq = ? AND json_extract(payload, '$.session') = ?",
                    (board, seq, session),
                ).fetchone()
                if row is not None:
                    out.append(f"{board}/{session}/{seq} {row[0]} {'sent' if row[1] else 'unsent'}")
        finally:
            db.close()
    return out


# a board's block in LocalVenue's node.toml: its simulated face and its table
_SIMULATED = (
    r'(\[\[board\]\]\nid = "{board}"\n)face = "simulated"\n'
    r"\[board\.simulated\]\n(?:[^\[\n][^\n]*\n)*"
)


@dataclass
class SerialVenue(ChaosVenue):
    """Boards in ``serial`` (board → ``socket://`` URL of a ClockEmulator) are serial clocks."""

    serial: dict[str, str] = field(default_factory=dict)

    def _node_toml(self, node: str) -> Path:
        path = super()._node_toml(node)
        text = path.read_text(encoding="utf-8")
        for board, url in self.serial.items():
            if board in self.node_boards[node]:
                pattern = _SIMULATED.format(board=re.escape(board))
                text, n = re.subn(pattern, rf'\1face = "serial"\nurl = "{url}"\n', text)
                assert n == 1, f"board {board} not found in {path}"
        path.write_text(text, encoding="utf-8")
        return path
