"""A new station trusts its predecessor's decisions, and nothing else (issue 28, Build 3).

Real broker, real node, real stations. The first station (with a ``decision_key_file``) sends a
board a result and a foul; the node journals the events that settle them, each with the txn the
station signed. The station's disk is lost. A fresh station with the same config (the key kept
with it) is rebuilt from the node's journal alone: the same decisions, confirmed, with nothing
left ``unverified``. A fresh station with another key — or a board account stamping a made-up
``sd-`` txn — gets proposals, not decisions.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.node import Probe, node_config, running_node
from support.station import station_config

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace
from venue_station.intake.signed_txn import SIGNED_BY, TxnSigner

pytestmark = pytest.mark.broker


async def _wait(predicate: Any, timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def decided(station: Any) -> list[tuple[str, str | None, str | None, str | None]]:
    rows = station.ingest.authority.asks.decided.values()
    return sorted(
        (r["type"], r.get("winner"), r.get("side"), r.get("reason"))
        for r in rows
        if r["board"] == "1"
    )


async def stored_decisions(station: Any) -> list[tuple[str, Any, Any]]:
    events = await station.store.game_events("r1-b1", ("result", "foul"))
    return sorted(
        (e["type"], e["data"].get("status"), bool(e["data"].get("unverified"))) for e in events
    )


async def test_a_rebuilt_station_trusts_what_its_predecessor_signed(
    broker_factory: Any, start_station: Any, tmp_path: Path
) -> None:
    broker = broker_factory()
    face = SimulatedFace(mode="idle")
    node_cfg = node_config(broker, "node-a", ["1"], tmp_path / "node")
    key = tmp_path / "config" / "decision.key"
    config = station_config(tmp_path / "a", broker, decision_key_file=str(key))
    first = await start_station(config)
    assert key.exists() and key.stat().st_mode & 0o077 == 0, "made on first start, 0600"
    async with running_node(node_cfg, {"1": face}) as node:
        await _wait(lambda: "1" in first.ingest.boards)
        assert (await first.send_command("1", "set_game", {"game": "r1-b1", "tc": "30m+5s"})).ok
        assert (await first.send_command("1", "start")).ok
        face.press(Side.RED)
        face.press(Side.BLACK)
        foul = await first.send_command("1", "foul", {"side": "black", "reason": "phone"})
        assert foul.ok and foul.txn.startswith("sd-")
        assert (await first.send_command("1", "result", {"winner": "red", "reason": "resign"})).ok
        await _wait(lambda: len(decided(first)) == 2)
        before = decided(first)
        await _wait(lambda: node.journal.unsent_count("1") == 0)
        await first.ingest.flush()
        assert await stored_decisions(first) == [
            ("foul", "confirmed", False),
            ("result", "confirmed", False),
        ]
        last_seq = first.ingest.seqs.get("1").watermark
        await first.stop()
        shutil.rmtree(tmp_path / "a")  # the station's disk is lost; its config and key are not

        async with Probe(broker) as probe:
            await probe.wait_for(lambda: probe.states.get("1", {}).get("seq") == last_seq)
        second = await start_station(
            station_config(tmp_path / "b", broker, decision_key_file=str(key))
        )
        await _wait(lambda: second.ingest.seqs.get("1").watermark == last_seq)
        await second.ingest.flush()
        assert decided(second) == before
        assert all(r["by"] == SIGNED_BY for r in second.ingest.authority.asks.decided.values())
        assert await stored_decisions(second) == [
            ("foul", "confirmed", False),
            ("result", "confirmed", False),
        ]
        assert second.ingest.authority.adopted == 2
        await second.stop()

        # another key (a station that is not this event's): nothing it can trust
        other = tmp_path / "config" / "other.key"
        third = await start_station(
            station_config(tmp_path / "c", broker, decision_key_file=str(other))
        )
        await _wait(lambda: third.ingest.seqs.get("1").watermark == last_seq)
        await third.ingest.flush()
        assert decided(third) == []
        assert await stored_decisions(third) == [
            ("foul", "pending", True),
            ("result", "pending", True),
        ]


def test_a_signed_txn_says_one_board_one_game_one_outcome() -> None:
    signer = TxnSigner(b"k" * 32, "venue-a")
    txn = signer.make("7", "result", {"winner": "red", "reason": "resign"}, game="r1-b7")
    assert txn is not None and len(txn) <= 64
    said = {"status": "confirmed", "winner": "red", "reason": "resign"}
    assert signer.ask_of(txn, "7", "r1-b7", "result", said) == (
        "result",
        {"winner": "red", "reason": "resign"},
    )
    # another board, game, winner, venue's key, a txn edited by a node: not trusted
    assert signer.ask_of(txn, "8", "r1-b7", "result", said) is None
    assert signer.ask_of(txn, "7", "r2-b7", "result", said) is None
    assert signer.ask_of(txn, "7", None, "result", said) is None
    assert signer.ask_of(txn, "7", "r1-b7", "result", {**said, "winner": "black"}) is None
    assert TxnSigner(b"k" * 32, "venue-b").ask_of(txn, "7", "r1-b7", "result", said) is None
    assert TxnSigner(b"x" * 32, "venue-a").ask_of(txn, "7", "r1-b7", "result", said) is None
    forged = txn[:-1] + ("0" if txn[-1] != "0" else "1")
    assert signer.ask_of(forged, "7", "r1-b7", "result", said) is None
    assert signer.ask_of("st-0123456789abcdef", "7", "r1-b7", "result", said) is None
    # a ruling on a proposal: bound to its game, its seq and the status asked
    ruling = signer.make("7", "resolve", {"seq": 12, "status": "confirmed"}, game="r1-b7")
    settled = {"status": "confirmed", "ref": 12, "side": "red", "reason": "flag"}
    assert signer.ask_of(ruling, "7", "r1-b7", "result", settled) == (
        "resolve",
        {"seq": 12, "status": "confirmed"},
    )
    assert signer.ask_of(ruling, "7", "r2-b7", "result", settled) is None
    assert signer.ask_of(ruling, "7", "r1-b7", "result", {**settled, "status": "dismissed"}) is None
    assert signer.ask_of(ruling, "7", "r1-b7", "result", {**settled, "ref": 13}) is None
    # a foul: bound to its game, side and reason
    foul = signer.make("7", "foul", {"side": "black", "reason": "phone"}, game="r1-b7")
    fouled = {"status": "confirmed", "side": "black", "reason": "phone"}
    assert signer.ask_of(foul, "7", "r1-b7", "foul", fouled) is not None
    assert signer.ask_of(foul, "7", "r3-b7", "foul", fouled) is None
    assert signer.make("7", "pause", {}, game="r1-b7") is None


def _event(
    board: str, game: str | None, seq: int, type_: str, data: dict[str, Any], txn: Any
) -> Any:
    from wire_contract.messages import EventEnvelope

    return EventEnvelope.model_validate(
        {
            "board": board, "node": "node-a", "game": game, "session": 1, "seq": seq,
            "ts": 1, "type": type_, "clock": {"red_ms": 1, "black_ms": 1, "running": None},
            "data": data, "txn": txn,
        }
    )  # fmt: skip


@pytest.mark.parametrize(
    ("cmd", "args", "type_", "data"),
    [
        ("result", {"winner": "red", "reason": "resign"}, "result",
         {"status": "confirmed", "winner": "red", "reason": "resign"}),
        ("foul", {"side": "black", "reason": "phone"}, "foul",
         {"status": "confirmed", "side": "black", "reason": "phone", "count": 1}),
        ("resolve", {"seq": 12, "status": "confirmed"}, "result",
         {"status": "confirmed", "ref": 12, "winner": "red", "reason": "flag"}),
    ],
)  # fmt: skip
def test_a_signed_decision_stamped_onto_a_later_game_of_its_board_is_refused(
    cmd: str, args: dict[str, Any], type_: str, data: dict[str, Any]
) -> None:
    """A node keeps every txn it was sent: it could stamp round 1's signed "red wins by
    resignation" onto round 3's game on the same board (and drop the original from its
    journal). A new station with the key must not adopt it: the game is signed too."""
    from venue_station.intake.guard import Authority

    signer = TxnSigner(b"k" * 32, "venue-a")
    txn = signer.make("7", cmd, args, game="r1-b7")

    def station_meeting(game: str) -> Authority:
        authority = Authority()
        authority.signer = signer
        if cmd == "resolve":  # the flag proposal the ruling settles, as the journal says it
            flag = {"status": "pending", "winner": "red", "reason": "flag"}
            authority.judge("7", _event("7", game, 12, "result", flag, None))
        return authority

    replayed = station_meeting("r3-b7")
    stored = replayed.judge("7", _event("7", "r3-b7", 40, type_, data, txn))
    assert stored.data.get("status") == "pending" and stored.data.get("unverified") is True
    assert replayed.adopted == 0 and replayed.asks.decided == {}
    # the same txn on the game it was signed for: adopted, confirmed
    honest = station_meeting("r1-b7")
    stored = honest.judge("7", _event("7", "r1-b7", 20, type_, data, txn))
    assert stored.data.get("status") == "confirmed" and not stored.data.get("unverified")
    assert honest.adopted == 1


def _ready(board: str, data: dict[str, Any], txn: str | None) -> Any:
    from wire_contract.messages import EventEnvelope

    return EventEnvelope.model_validate(
        {
            "board": board, "node": "node-a", "game": data.get("game"), "session": 1, "seq": 3,
            "ts": 1, "type": "ready", "clock": {"red_ms": 1, "black_ms": 1, "running": None},
            "data": data, "txn": txn,
        }
    )  # fmt: skip


def test_only_the_stations_signed_set_game_makes_a_pairing_a_rebuild_trusts() -> None:
    """What a rebuild without a backup makes a round from (venue_station/domain/rebuild.py):
    a ``ready`` whose txn is this station's signed ``set_game`` for that board, game and both
    names. A board cannot make one up, edit the names, move it to another board, or say it
    was signed."""
    from venue_station.intake.guard import Authority
    from venue_station.intake.signed_txn import STATION_SET

    authority = Authority()
    authority.signer = signer = TxnSigner(b"k" * 32, "venue-a")
    pairing = {"game": "r2-b7", "red": "甲", "black": "乙"}
    txn = signer.make("7", "set_game", pairing, game=None)
    assert txn is not None and len(txn) <= 64
    said = {**pairing, "tc": "90m+30s"}

    def trusted(board: str, data: dict[str, Any], txn: str | None) -> bool:
        return authority.judge(board, _ready(board, data, txn)).data.get(STATION_SET) is True

    assert trusted("7", said, txn)
    assert not trusted("8", {**said, "game": "r2-b8"}, txn)  # another board's game
    assert not trusted("7", {**said, "red": "丙"}, txn)  # a name edited by the node
    assert not trusted("7", {**said, "game": "r3-b7"}, txn)  # another round
    assert not trusted("7", said, "st-0123456789abcdef")  # the board's own txn
    assert not trusted("7", said, None)
    with pytest.raises(ValueError, match=STATION_SET):  # self-stamped: the wire refuses it
        _ready("7", {**said, STATION_SET: True}, None)
    other = Authority()
    other.signer = TxnSigner(b"x" * 32, "venue-a")  # another key
    assert other.judge("7", _ready("7", said, txn)).data.get(STATION_SET) is None
