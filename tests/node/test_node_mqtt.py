"""The node against a real private Mosquitto: a game, commands, status, broker outage."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.node import Probe, node_config, running_node

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker


def _seqs(events: list[dict]) -> list[int]:
    return [e["seq"] for e in events]


async def test_a_whole_game_reaches_the_station_in_order(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-a", ["1"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"1": face}) as node:
        await probe.wait_for(lambda: probe.status.get("1", {}).get("state") == "online")
        reply = await probe.command(
            "1", "set_game", {"game": "r1-b1", "tc": "30m+5s", "red": "王天一", "black": "郑惟桐"}
        )
        assert reply == {"txn": reply["txn"], "ok": True, "error": None}
        assert (await probe.command("1", "start"))["ok"]
        await probe.wait_for(lambda: probe.states.get("1", {}).get("phase") == "running")
        for side in [Side.RED, Side.BLACK] * 3:
            face.press(side)
            await asyncio.sleep(0.01)
        await probe.wait_for(lambda: len(probe.board_events("1", "move")) == 6)
        assert (await probe.command("1", "result", {"winner": "red", "reason": "checkmate"}))["ok"]
        await probe.wait_for(lambda: probe.states["1"]["phase"] == "finished")
        await probe.wait_for(lambda: probe.board_events("1", "result"))
        events = probe.board_events("1")
        assert [e["type"] for e in events[:2]] == ["ready", "started"]
        assert events[-1]["type"] == "result" and events[-1]["data"]["winner"] == "red"
        assert _seqs(events) == list(range(1, len(events) + 1))
        assert {e["session"] for e in events} == {node.session}
        moves = probe.board_events("1", "move")
        assert [m["data"]["move"] for m in moves] == [1, 1, 2, 2, 3, 3]
        # Fischer: each completed move adds 5 s, so red has more than the base after 3 moves.
        state = probe.states["1"]
        assert state["moves"] == {"red": 3, "black": 3}
        assert state["red_ms"] > 30 * 60_000 and state["result"]["winner"] == "red"
        assert state["red"] == "王天一"
    # a clean stop says offline
    await probe_status_after_stop(venue_broker, "1", "offline")


async def probe_status_after_stop(broker, board: str, expected: str) -> None:
    async with Probe(broker) as probe:
        await probe.wait_for(lambda: board in probe.status)
        assert probe.status[board]["state"] == expected


async def test_the_flag_falls_at_the_exact_instant(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-a", ["2"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"2": face}):
        await probe.command("2", "set_game", {"game": "flag", "tc": "1+0"})
        await probe.command("2", "start")
        await probe.wait_for(lambda: probe.board_events("2", "flag"), timeout=5)
        flag = probe.board_events("2", "flag")[0]
        # stood_after_ms: the proof's length on an idle face (nothing in flight), a few ms
        assert flag["data"]["side"] == "red" and set(flag["data"]) == {"side", "stood_after_ms"}
        assert 0 <= flag["data"]["stood_after_ms"] < 500, flag
        assert flag["clock"]["red_ms"] == 0 and flag["clock"]["running"] is None
        result = probe.board_events("2", "result")
        await probe.wait_for(lambda: probe.board_events("2", "result"))
        result = probe.board_events("2", "result")[0]
        assert result["data"]["winner"] == "black" and result["data"]["status"] == "pending"
        # a press after the flag changes nothing
        face.press(Side.RED)
        await asyncio.sleep(0.1)
        assert not probe.board_events("2", "move")
        # the arbiter confirms the proposed result
        reply = await probe.command("2", "resolve", {"seq": result["seq"], "status": "confirmed"})
        assert reply["ok"], reply
        await probe.wait_for(lambda: probe.states["2"]["result"] is not None)
        assert probe.states["2"]["result"]["winner"] == "black"


async def test_a_board_pause_is_a_pending_foul_until_resolved(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-a", ["1"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"1": face}):
        await probe.command("1", "set_game", {"game": "g", "tc": "30m+5s"})
        await probe.command("1", "start")
        await probe.wait_for(lambda: probe.board_events("1", "started"))
        face.press(Side.RED)
        face.pause_key()
        await probe.wait_for(lambda: probe.board_events("1", "foul"))
        paused = probe.board_events("1", "paused")[0]
        assert paused["data"] == {"by": "board", "side_on_move": "black"}
        foul = probe.board_events("1", "foul")[0]
        assert foul["data"]["side"] == "black" and foul["data"]["status"] == "pending"
        assert (await probe.command("1", "resolve", {"seq": foul["seq"], "status": "confirmed"}))[
            "ok"
        ]
        await probe.wait_for(lambda: probe.states["1"]["fouls"]["black"] == 1)
        # second confirmed foul under Meishan forfeits
        face.pause_key()  # resume from the board
        await probe.wait_for(lambda: probe.states["1"]["phase"] == "running")
        face.pause_key()
        await probe.wait_for(lambda: len(probe.board_events("1", "foul")) == 3)
        second = probe.board_events("1", "foul")[2]
        await probe.command("1", "resolve", {"seq": second["seq"], "status": "confirmed"})
        await probe.wait_for(lambda: probe.states["1"]["result"] is not None)
        assert probe.states["1"]["result"]["winner"] == "red"
        assert probe.board_events("1", "forfeit")[0]["data"]["reason"] == "fouls"


async def test_power_switch_off_is_a_pending_forfeit_unless_arbiter_mode(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-b", ["3"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"3": face}):
        await probe.command("3", "set_game", {"game": "g", "tc": "30m+5s"})
        await probe.command("3", "start")
        await probe.wait_for(lambda: probe.board_events("3", "started"))
        face.power_off()
        await probe.wait_for(lambda: probe.board_events("3", "forfeit"))
        shutdown = probe.board_events("3", "shutdown")[0]["data"]
        assert shutdown["cause"] == "power_switch" and shutdown["authorised"] is False
        assert probe.board_events("3", "forfeit")[0]["data"]["status"] == "pending"
        face.power_on()
        face.pause_key()  # the players cannot restart a clock that was switched off
        await asyncio.sleep(0.2)
        assert not probe.board_events("3", "resumed")
        await probe.command("3", "arbiter_mode", {"on": True})
        await probe.command("3", "resume")
        face.power_off()
        await probe.wait_for(lambda: len(probe.board_events("3", "shutdown")) == 2)
        assert probe.board_events("3", "shutdown")[1]["data"]["authorised"] is True
        await asyncio.sleep(0.1)
        assert len(probe.board_events("3", "forfeit")) == 1


async def test_resume_all_leaves_a_board_whose_forfeit_waits(venue_broker, tmp_path):
    """全部继续 ran a clock switched off without permission while its forfeit still waited for
    the arbiter (an outsider chief). The board refuses the venue's resume, naming the forfeit;
    the board's own resume (the arbiter at that board) still runs it; another board resumes."""
    faces = {"3": SimulatedFace(mode="idle"), "4": SimulatedFace(mode="idle")}
    config = node_config(venue_broker, "node-b", list(faces), tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, faces):
        for board in faces:
            await probe.command(board, "set_game", {"game": f"g{board}", "tc": "30m+5s"})
            await probe.command(board, "start")
        await probe.wait_for(lambda: all(probe.board_events(b, "started") for b in faces))
        faces["3"].power_off()
        await probe.wait_for(lambda: probe.board_events("3", "forfeit"))
        faces["3"].power_on()
        assert (await probe.command("4", "pause"))["ok"]
        txn = await probe.venue_command("resume")
        await probe.wait_for(lambda: all((b, txn) in probe.board_replies for b in faces))
        refused, done = probe.board_replies[("3", txn)], probe.board_replies[("4", txn)]
        assert done["ok"] and not refused["ok"], (done, refused)
        assert refused["code"] == "forfeit_pending", refused
        assert refused["args"] == {"side": "red", "reason": "power_switch"}, refused
        await probe.wait_for(lambda: probe.board_events("4", "resumed"))
        assert not probe.board_events("3", "resumed")
        assert (await probe.command("3", "resume"))["ok"]  # the arbiter at the board decides
        await probe.wait_for(lambda: probe.board_events("3", "resumed"))


async def test_bad_commands_are_refused_and_change_nothing(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-b", ["4"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"4": face}) as node:
        await probe.command("4", "set_game", {"game": "g", "tc": "30m+5s"})
        await probe.wait_for(lambda: probe.states.get("4", {}).get("phase") == "ready")
        before = dict(probe.states["4"])
        cases = [
            ("pause", {}, "not running"),
            ("launch", {}, "unknown cmd"),
            ("adjust", {"side": "blue", "delta_ms": 5}, "adjust args"),
            ("adjust", {"side": "red"}, "delta_ms"),
            ("set_game", {"game": "x", "tc": "30q"}, "unit"),
            ("resolve", {"seq": 1, "status": "confirmed"}, "not a proposal"),
        ]
        for cmd, args, why in cases:
            reply = await probe.command("4", cmd, args)
            assert reply["ok"] is False and why in reply["error"], (cmd, reply)
        await probe.raw_command("4", b"\xff not json")
        await probe.raw_command("4", json.dumps([1, 2]))
        # a replayed txn is answered again but applied once
        first = await probe.command("4", "adjust", {"side": "red", "delta_ms": 10_000}, txn="t-1")
        probe.replies.pop("t-1")
        again = await probe.command("4", "adjust", {"side": "red", "delta_ms": 10_000}, txn="t-1")
        assert first == again and first["ok"]
        await asyncio.sleep(0.2)
        assert len(probe.board_events("4", "adjusted")) == 1
        state = probe.states["4"]
        assert state["red_ms"] == before["red_ms"] + 10_000
        assert state["black_ms"] == before["black_ms"] and state["phase"] == "ready"
        counters = node.links["4"].counters
        assert counters["commands_rejected"] >= len(cases) + 2
        assert counters["commands_repeated"] == 1
        # the node account cannot command another node's board, and nothing arrives there
        assert "3" not in node.boards


async def test_broker_killed_mid_game_loses_nothing(broker_factory, tmp_path):
    broker = broker_factory()
    face = SimulatedFace(mode="idle")
    config = node_config(broker, "node-a", ["1"], tmp_path)
    received: list[dict] = []
    async with running_node(config, {"1": face}) as node:
        async with Probe(broker) as probe:
            await probe.command("1", "set_game", {"game": "g", "tc": "30m+5s"})
            await probe.command("1", "start")
            for side in [Side.RED, Side.BLACK] * 2:
                face.press(side)
            await probe.wait_for(lambda: len(probe.board_events("1", "move")) == 4)
            received += probe.events
        broker.kill()
        await asyncio.sleep(0.2)
        for side in [Side.RED, Side.BLACK] * 3:  # played while the broker is down
            face.press(side)
            await asyncio.sleep(0.01)
        await node.journal.idle()  # the writer thread has committed them
        assert node.journal.unsent_count("1") == 6
        broker.restart()
        async with Probe(broker) as probe:
            await asyncio.wait_for(node.links["1"].connected.wait(), 10)
            await probe.wait_for(lambda: len(probe.board_events("1", "move")) >= 6, timeout=10)
            await probe.wait_for(lambda: probe.states.get("1", {}).get("moves", {}).get("red") == 5)
            received += probe.events
    by_seq: dict[int, dict] = {}
    for event in received:
        if event["seq"] in by_seq:  # at least once: a duplicate must be the same event
            assert {**by_seq[event["seq"]], "replay": True} == {**event, "replay": True}
        by_seq[event["seq"]] = event
    assert sorted(by_seq) == list(range(1, max(by_seq) + 1))
    late_moves = [e for e in by_seq.values() if e["type"] == "move"][4:]
    assert len(late_moves) == 6 and all(e["replay"] for e in late_moves)


async def test_a_running_clock_is_checkpointed_on_schedule_between_events(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-b", ["4"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"4": face}) as node:
        await probe.command("4", "set_game", {"game": "g", "tc": "30m+5s"})
        await probe.command("4", "start")
        await probe.wait_for(lambda: probe.board_events("4", "started"))
        started_used = node.journal.board("4").checkpoint["clock"]["red"]["used_ns"]
        await asyncio.sleep(1.3)  # no event since the start: only the schedule writes
        used_ns = node.journal.board("4").checkpoint["clock"]["red"]["used_ns"]
        assert used_ns - started_used >= 500_000_000
