"""A live-entered game on the public /live page (issue 29, acceptance): move by move, within
1 s of each entry, beside the running clocks.

Real parts: the venue's Mosquitto from ``broker-config`` (ACL and the federation bridge), a real
nats-server (JetStream) from the generated centre config, the station with its record routes,
the hub's record relay and web, and chromium on ``/live`` and on the one-game spectator page.
node-a plays board 1's clock (a ``ready`` event, a press per move, a state snapshot after each);
the chief enters the published game 柳大华 vs 杨官璘 (1982, tests/xiangqi/data) move by move
through ``POST /api/records/1/moves``. Each move shows on the page (the diagram's piece on its new
square, the move in Chinese notation with its clock) within 1 s; the delays are printed.

Nothing across the boundary is trusted: node-a's account cannot publish a record (the ACL), and
what the venue's centre account can publish there — bytes that are no JSON, a record with an
illegal move, a record past the wire's ply bound — is counted by the hub and dropped; the page's
bounds and the relay keep working.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
import uvicorn
from support.broker import STANDARD_NODES, mqtt_client
from support.nats import HUB_USER, NatsCentre
from support.station import ARBITER, ARBITER_PASSWORD, envelope, station_config
from support.web import open_page

from broker_config import Roster, free_port
from broker_config.acl import rules_for
from clock_service.xiangqi import START_FEN, Move, Position, wxf
from federation_hub.live_records import LiveRecords
from federation_hub.store import HubStore
from federation_hub.web import LiveConfig, build_app
from wire_contract.bounds import MAX_RECORD_PLIES

pytestmark = [
    pytest.mark.browser,
    pytest.mark.broker,
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="session"),
]

DATA = Path(__file__).parents[1] / "xiangqi" / "data" / "liu_dahua_yang_guanlin_1982.pgn"
TEXT = DATA.read_text("utf-8")
CHINESE = re.findall(
    r"[\u4e00-\u9fff][\u4e00-\u9fff\uff10-\uff19][进退平][\u4e00-\u9fff\uff10-\uff19]", TEXT
)
ICCS = re.findall(r"\b[a-i][0-9][a-i][0-9]\b", TEXT)
PLIES = 16
R = "qz/v1/va"
PAIRS = "round,board,red,black\n1,1,张三,李四\n1,2,王五,赵六\n"
SIZE = {"width": 1280, "height": 900, "timeout_ms": 10_000}
CARD = '[data-venue="va"][data-board="1"]'
GLYPH = {"C": "炮", "N": "马", "R": "车", "P": "兵", "c": "炮", "n": "马", "r": "车", "p": "卒",
         "B": "相", "b": "象", "A": "仕", "a": "士", "K": "帅", "k": "将"}  # fmt: skip


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def state(seq: int, red_ms: int, black_ms: int, running: str) -> bytes:
    return json.dumps(
        {
            "v": 1,
            "board": "1",
            "node": "node-a",
            "session": 1,
            "seq": seq,
            "ts": wall_ms(),
            "game": "r1-b1",
            "tc": "30m+5s",
            "phase": "running",
            "running": running,
            "red_ms": red_ms,
            "black_ms": black_ms,
            "moves": {"red": (seq + 1) // 2, "black": seq // 2},
            "flag": None,
            "fouls": {"red": 0, "black": 0},
            "result": None,
            "red": "张三",
            "black": "李四",
        }
    ).encode()


def square_of(iccs_square: str) -> tuple[int, int]:
    """(row from the top, column) of an ICCS square on the drawn board."""
    return 9 - int(iccs_square[1]), "abcdefghi".index(iccs_square[0])


async def shown_ply(page: Any, selector: str) -> int:
    value = await page.eval_on_selector(selector, "e => e.dataset.ply || '-1'")
    return int(value)


async def test_a_live_entered_game_appears_on_live_move_by_move(
    broker_factory: Any, tmp_path: Path, start_station: Any, browser: Any
) -> None:
    assert len(CHINESE) == len(ICCS) == 125
    centre = NatsCentre.start(nodes=1, venues={"va": ("venue-va", "pw-va")})
    relay = LiveRecords(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    relay_task = asyncio.create_task(relay.run())
    store = await HubStore.open(f"sqlite:///{tmp_path / 'hub.db'}")
    ws = f"ws://127.0.0.1:{centre.nodes[0].ws_port}"
    port = free_port()
    app = build_app(
        store, relay.counters, live=LiveConfig(ws), records=lambda: list(relay.views.values())
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    web_task = asyncio.create_task(server.serve())
    base = f"http://127.0.0.1:{port}"
    pages = contextlib.AsyncExitStack()
    try:
        await asyncio.wait_for(relay.ready.wait(), 20)
        user, password = centre.users.venues["va"]
        roster = Roster.build(
            venue="va",
            nodes=STANDARD_NODES,
            arbiters=["arb"],
            federation={"urls": centre.mqtt_urls(), "username": user, "password": password},
        )
        # Only the station's account may write a record; a board's own account may not.
        station_rules = rules_for(roster, roster.station.username)
        assert f"topic write {R}/station/record/+" in station_rules
        assert not any("station/record" in r and "write" in r for r in rules_for(roster, "node-a"))
        venue = broker_factory(roster)
        station = await start_station(station_config(tmp_path, venue, venue="va"))
        await station.import_pairings(PAIRS, send=False)
        while not server.started:
            await asyncio.sleep(0.05)
        live = await pages.enter_async_context(open_page(browser, **SIZE))
        one = await pages.enter_async_context(open_page(browser, **SIZE))
        await live.goto(f"{base}/live")
        await one.goto(f"{base}/live/va/1")
        for p in (live, one):
            await p.wait_for_selector('#conn[data-state="live"]')

        async with (
            mqtt_client(venue, "node-a") as node,
            mqtt_client(venue, "arb") as watcher,  # an arbiter reads the venue's topics
            httpx.AsyncClient(base_url=station.http_url, timeout=10) as chief,
        ):
            r = await chief.post(
                "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
            )
            chief.headers["X-CSRF-Token"] = r.json()["csrf"]
            await watcher.subscribe(f"{R}/station/record/#", qos=1)
            seen: list[dict[str, Any]] = []

            async def watch() -> None:
                async for message in watcher.messages:
                    seen.append(json.loads(message.payload))  # type: ignore[arg-type]

            watching = asyncio.create_task(watch())
            seq = 1
            ready = {"game": "r1-b1", "tc": "30m+5s", "red": "张三", "black": "李四"}
            ev = envelope("1", seq, type="ready", data=ready, game="r1-b1")
            await node.publish(f"{R}/board/1/event", json.dumps(ev).encode(), qos=1)
            red_ms = black_ms = 1_800_000
            await node.publish(f"{R}/board/1/state", state(0, red_ms, black_ms, "red"), qos=1)
            # a board's account trying the station's topic: the broker drops it (ACL)
            forged = {"v": 1, "board": "1", "game": "r1-b1", "round": 1, "start_fen": START_FEN,
                      "moves": ["a0a1"], "clocks": [None], "ts": wall_ms()}  # fmt: skip
            await node.publish(f"{R}/station/record/1", json.dumps(forged).encode(), qos=1)
            await live.wait_for_selector(f"{CARD} .side.red .time")

            delays: list[float] = []
            for ply in range(PLIES):
                side = "red" if ply % 2 == 0 else "black"
                used = 20_000 + 1_000 * ply
                if side == "red":
                    red_ms -= used
                else:
                    black_ms -= used
                seq += 1
                press = {"side": side, "used_ms": used, "move": ply // 2 + 1}
                ev = envelope(
                    "1", seq, type="move", data=press, game="r1-b1",
                    red_ms=red_ms, black_ms=black_ms,
                    running="black" if side == "red" else "red",
                )  # fmt: skip
                await node.publish(f"{R}/board/1/event", json.dumps(ev).encode(), qos=1)
                other = "black" if side == "red" else "red"
                await node.publish(f"{R}/board/1/state", state(ply + 1, red_ms, black_ms, other))
                await asyncio.sleep(0.1)  # the press reaches the station before the move's entry
                t0 = time.perf_counter()
                r = await chief.post(
                    "/api/records/1/moves", json={"move": CHINESE[ply], "ply": ply}
                )
                assert r.status_code == 200, r.text
                await live.wait_for_function(
                    f"n => (document.querySelector('{CARD} .record') || {{dataset: {{}}}})"
                    ".dataset.ply === n",
                    arg=str(ply + 1),
                    polling="raf",
                    timeout=10_000,
                )
                delays.append(time.perf_counter() - t0)
                # the piece stands on its new square, the move is written in Chinese
                row, col = square_of(ICCS[ply][2:])
                cell = f"{CARD} .xq .cell[data-r='{row}'][data-c='{col}']"
                glyph = await live.inner_text(cell)
                origin = (
                    f"{CARD} .xq .cell[data-r='{square_of(ICCS[ply][:2])[0]}']"
                    f"[data-c='{square_of(ICCS[ply][:2])[1]}']"
                )
                assert (await live.inner_text(origin)).strip() == ""
                assert glyph in GLYPH.values(), glyph
                last = await live.inner_text(f"{CARD} .record .moves li:last-child")
                assert CHINESE[ply] in last, (last, CHINESE[ply])
                assert re.search(r"\d+:\d\d", last), last  # the move's clock

            # the running clocks beside the record
            red_text = await live.inner_text(f"{CARD} .side.red .time")
            assert re.fullmatch(r"\d+:\d\d", red_text), red_text
            assert "张三" in await live.inner_text(CARD)
            # the spectator page shows the one game, the same moves, only that board
            await one.wait_for_function(
                f"document.querySelector('{CARD} .record')?.dataset.ply === '{PLIES}'"
            )
            items = await one.eval_on_selector_all(
                f"{CARD} .record .moves li", "l => l.map(x => x.textContent)"
            )
            assert [CHINESE[i] in items[i] for i in range(PLIES)] == [True] * PLIES
            # numbered by 回合, as the score sheet and the PGN: red's move opens the number
            numbers = await one.eval_on_selector_all(
                f"{CARD} .record .moves li .no", "l => l.map(x => x.textContent)"
            )
            assert numbers[:4] == ["1.", "", "2.", ""], numbers
            assert await one.locator(".board").count() == 1
            # a page opened now gets the record at once (from the hub's kept views)
            late = await pages.enter_async_context(open_page(browser, **SIZE))
            await late.goto(f"{base}/live/va/1?lang=en")
            await late.wait_for_function(
                f"document.querySelector('{CARD} .record')?.dataset.ply === '{PLIES}'"
            )
            text = await late.inner_text(f"{CARD} .record")
            first = wxf(Position.from_fen(START_FEN), Move.from_iccs(ICCS[0]))  # C8.5
            assert "Moves" in text and first in text, text  # English: WXF letters and moves
            assert not re.search(r"[\u4e00-\u9fff]", text), text

            # the forged record never got through: the venue broker carried only the station's
            async with asyncio.timeout(5):
                while len(seen) < PLIES:
                    await asyncio.sleep(0.05)
            watching.cancel()
            assert [r["moves"] for r in seen] == [ICCS[: n + 1] for n in range(PLIES)]
            assert all(r["clocks"][-1] is not None for r in seen)  # each move met its press
            assert [m[0] for m in relay.views[("va", "1")]["moves"]] == CHINESE[:PLIES]

        # What the venue's account can publish at the centre is checked, counted, dropped.
        fed = await nats.connect(centre.urls, user=user, password=password)
        try:
            subject = "fed.qz.v1.va.station.record.2"
            bad_move = {**forged, "board": "2", "moves": ["a0a5"]}  # a rook through its pawn
            too_long = {**forged, "board": "2", "moves": ["h2e2"] * (MAX_RECORD_PLIES + 1),
                        "clocks": [None] * (MAX_RECORD_PLIES + 1)}  # fmt: skip
            for body in (b"\xff not json", json.dumps(bad_move).encode(),
                         json.dumps(too_long).encode()):  # fmt: skip
                await fed.publish(subject, body)
            await fed.flush()
            async with asyncio.timeout(10):
                while relay.counts["records_dropped_bad_payload"] < 2:
                    await asyncio.sleep(0.05)
                while relay.counts["records_dropped_illegal_move"] < 1:
                    await asyncio.sleep(0.05)
            assert ("va", "2") not in relay.views
            async with httpx.AsyncClient() as client:
                metrics = (await client.get(f"{base}/api/metrics")).json()
            assert metrics["records_dropped_illegal_move"] == 1
            assert metrics["records_forwarded"] >= PLIES
        finally:
            await fed.close()
        assert await live.eval_on_selector("#ignored", "e => e.dataset.total") == "0"
        p50, worst = statistics.median(delays), max(delays)
        print(f"\nlive record delays over {PLIES} moves: p50 {p50 * 1000:.0f} ms, "
              f"max {worst * 1000:.0f} ms")  # fmt: skip
        assert worst < 1.0, delays
    finally:
        await pages.aclose()
        server.should_exit = True
        relay_task.cancel()
        await asyncio.gather(web_task, relay_task, return_exceptions=True)
        await store.close()
        centre.close()


async def test_a_handicap_record_is_replayed_with_its_given_moves() -> None:
    """A 让二先 game's record (the receiver's first two moves in a row) is what was played: the
    hub replays it with the record's ``handicap``; without it the same moves are refused."""
    from federation_hub.live_records import RecordRefused, public_view
    from wire_contract.records import GameRecord

    body = {
        "board": "1", "game": "r1-b1", "round": 1,
        "start_fen": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        "moves": ["h2e2", "h0g2", "h9g7"], "clocks": [None, None, None], "ts": 1,
    }  # fmt: skip
    view = public_view(
        "v", GameRecord.model_validate({**body, "handicap": {"receiver": "red", "moves": 2}})
    )
    assert view["to_move"] == "red" and [m[0] for m in view["moves"]] == [
        "炮二平五",
        "马二进三",
        "马８进７",
    ]
    with pytest.raises(RecordRefused, match="ply 2"):
        public_view("v", GameRecord.model_validate(body))
