"""A board that stamps the station's own txns on decisions (issue 27, docs/security.md).

The attacker holds board 5's broker account (node-c) on the real broker from ``broker-config``:
it reads every command the station sends to its own ``cmd`` topic and stamps that command's
``txn`` on a confirmed result, foul or forfeit. Only the decision command that asked exactly
that outcome decides, and only once; every other txn leaves the event a pending proposal."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import FakeNode, station_config, wait_until

from venue_station.domain.station import Station

pytestmark = pytest.mark.broker
GAME = "r1-b5"
PAIRS = "round,board,red,black\n1,5,许银川,吕钦\n"
RED_RESIGNS = {"winner": "black", "reason": "resignation"}


async def result_of(station: Station, game: str = GAME) -> str | None:
    async with httpx.AsyncClient(base_url=station.http_url, timeout=5) as client:
        games = (await client.get("/api/games")).json()["games"]
    return next(g for g in games if g["game"] == game)["result"]


async def asked(station: Station, attacker: FakeNode, cmd: str, args: dict[str, Any]) -> str:
    """The station sends ``cmd``; the attacker reads its txn off its own cmd topic."""
    before = len(attacker.commands)
    await station.send_command("5", cmd, args)
    await wait_until(lambda: len(attacker.commands) > before, timeout=5)
    board, command = attacker.commands[-1]
    assert (board, command.cmd) == ("5", cmd)
    return command.txn


async def stamped(station: Station, attacker: FakeNode, **kw: Any) -> dict[str, Any]:
    """The attacker's event with a txn, once stored: as the station kept it."""
    assert station.ingest is not None and station.store is not None
    store = station.store
    ev = await attacker.emit("5", game=GAME, **kw)
    found: list[dict[str, Any]] = []

    async def stored() -> bool:
        found[:] = [e for e in await store.events(board="5", limit=10_000) if e["seq"] == ev["seq"]]
        return bool(found)

    async with asyncio.timeout(10):
        while not await stored():
            await asyncio.sleep(0.02)
    return found[0]


# Every command a station sends a board, with arguments the board accepts; none of them asked
# the confirmed result "red resigns" the attacker stamps with its txn.
OTHER_COMMANDS: list[tuple[str, dict[str, Any]]] = [
    ("rebirth", {}),
    ("set_game", {"game": GAME, "tc": "30m+5s"}),
    ("start", {}),
    ("pause", {}),
    ("resume", {}),
    ("adjust", {"side": "red", "delta_ms": 1000}),
    ("clock_probe", {"t0": 1}),
    ("arbiter_mode", {"on": True}),
    ("move_count", {}),
    ("reset", {}),
    ("foul", {"side": "red", "reason": "disturbing"}),  # a foul, not a result
    ("resolve", {"seq": 1, "status": "confirmed"}),  # rules on seq 1, a move
    ("withdraw", {"seq": 1}),  # takes back seq 1, a move: no foul
    ("result", {"winner": "red", "reason": "resignation"}),  # the other side's win
    ("result", {"winner": "black", "reason": "checkmate"}),  # the same winner, another reason
]


async def test_no_other_commands_txn_decides_a_game(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    await station.import_pairings(PAIRS, send=False)
    async with FakeNode(venue_broker, "node-c", ["5"]) as attacker:
        await attacker.emit("5", game=GAME)  # seq 1: a move
        for cmd, args in OTHER_COMMANDS:
            txn = await asked(station, attacker, cmd, args)
            decisions = [
                {"type": "result", "data": {**RED_RESIGNS, "status": "confirmed"}},
                {
                    "type": "foul",
                    "data": {"side": "red", "reason": "phone", "status": "confirmed", "count": 1},
                },
                {
                    "type": "forfeit",
                    "data": {"side": "red", "reason": "late", "status": "confirmed"},
                },
                {
                    "type": "forfeit",
                    "data": {"side": "red", "reason": "late", "status": "confirmed", "ref": 1},
                },
            ]
            for decision in decisions:
                kept = await stamped(station, attacker, txn=txn, **decision)
                assert kept["data"]["status"] == "pending", (cmd, decision)
                assert kept["data"]["unverified"] is True, (cmd, decision)
            assert await result_of(station) is None, cmd
    assert station.store is not None
    assert not any(
        e["data"].get("status") == "confirmed"
        for e in await station.store.events(board="5", types=["result", "foul", "forfeit"])
    )


async def test_the_result_command_decides_only_what_it_asked_and_once(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    await station.import_pairings(PAIRS, send=False)
    async with FakeNode(venue_broker, "node-c", ["5"]) as attacker:
        txn = await asked(station, attacker, "result", RED_RESIGNS)
        # the asked txn on another outcome: a proposal
        other = {"winner": "red", "reason": "resignation", "status": "confirmed"}
        kept = await stamped(station, attacker, type="result", data=other, txn=txn)
        assert (kept["data"]["status"], kept["data"].get("unverified")) == ("pending", True)
        assert await result_of(station) is None
        # the asked txn on the asked outcome: decided
        asked_outcome = {**RED_RESIGNS, "status": "confirmed"}
        kept = await stamped(station, attacker, type="result", data=asked_outcome, txn=txn)
        assert kept["data"]["status"] == "confirmed" and not kept["data"].get("unverified")
        assert await result_of(station) == "0-1"
        # the same txn again, even on the same outcome: decides nothing more
        kept = await stamped(station, attacker, type="result", data=asked_outcome, txn=txn)
        assert kept["data"].get("unverified") is True
        # nor can the spent txn turn the game around
        kept = await stamped(station, attacker, type="result", data=other, txn=txn)
        assert kept["data"].get("unverified") is True
        assert await result_of(station) == "0-1"
    # a restart remembers what each txn asked and that it is spent
    await station.stop()
    again = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    async with FakeNode(venue_broker, "node-c", ["5"]) as attacker:
        attacker.seq["5"] = 4
        kept = await stamped(again, attacker, type="result", data=asked_outcome, txn=txn)
        assert kept["data"].get("unverified") is True
    assert await result_of(again) == "0-1"


async def test_a_resolve_decides_only_the_ruling_it_asked(
    venue_broker, tmp_path: Path, start_station
) -> None:
    """The alert buttons' ``resolve`` (seq S, status): the event that settles S with that
    status decides; the same txn on anything else is a proposal."""
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    await station.import_pairings(PAIRS, send=False)
    async with FakeNode(venue_broker, "node-c", ["5"]) as attacker:
        pending = {"side": "red", "reason": "phone", "status": "pending", "count": 0}
        proposal = await stamped(station, attacker, type="foul", data=pending)
        seq = proposal["seq"]
        txn = await asked(station, attacker, "resolve", {"seq": seq, "status": "confirmed"})
        wrong: list[dict[str, Any]] = [
            {"type": "result", "data": {**RED_RESIGNS, "status": "confirmed"}},
            {"type": "foul", "data": {**pending, "status": "dismissed", "ref": seq}},
            {
                "type": "foul",
                "data": {**pending, "side": "black", "status": "confirmed", "ref": seq},
            },
            {"type": "foul", "data": {**pending, "status": "confirmed", "ref": seq + 1}},
            {"type": "foul", "data": {**pending, "status": "confirmed"}},  # no ref: a new foul
        ]
        for decision in wrong:
            kept = await stamped(station, attacker, txn=txn, **decision)
            assert kept["data"].get("unverified") is True, decision
        ruling = {**pending, "status": "confirmed", "count": 1, "ref": seq}
        kept = await stamped(station, attacker, type="foul", data=ruling, txn=txn)
        assert kept["data"]["status"] == "confirmed" and not kept["data"].get("unverified")
        fouls = await station.player_fouls()
        assert fouls["许银川"]["confirmed"] == 1
        # a foul below the regulation's limit forfeits nothing, whatever txn it carries
        forfeit = {"side": "red", "reason": "fouls", "status": "confirmed"}
        kept = await stamped(station, attacker, type="forfeit", data=forfeit, txn=txn)
        assert kept["data"].get("unverified") is True
        assert await result_of(station) is None


async def test_a_foul_that_reaches_the_limit_carries_its_forfeit_and_result(
    venue_broker, tmp_path: Path, start_station
) -> None:
    """meishan-2016: two confirmed fouls of one side lose the game. The arbiter's second foul
    command decides the foul, the forfeit it reaches and the result it makes, each once."""
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    await station.import_pairings(PAIRS, send=False)
    foul = {"side": "black", "reason": "disturbing", "status": "confirmed"}
    forfeit = {"side": "black", "reason": "fouls", "status": "confirmed"}
    result = {"winner": "red", "reason": "fouls", "status": "confirmed"}
    async with FakeNode(venue_broker, "node-c", ["5"]) as attacker:
        first = await asked(station, attacker, "foul", {"side": "black", "reason": "disturbing"})
        # the first foul's txn may not jump ahead to a forfeit
        kept = await stamped(station, attacker, type="forfeit", data=forfeit, txn=first)
        assert kept["data"].get("unverified") is True
        kept = await stamped(station, attacker, type="foul", data={**foul, "count": 1}, txn=first)
        assert not kept["data"].get("unverified")
        second = await asked(station, attacker, "foul", {"side": "black", "reason": "disturbing"})
        for type_, data in (("foul", {**foul, "count": 2}), ("forfeit", forfeit)):
            kept = await stamped(station, attacker, type=type_, data=data, txn=second)
            assert not kept["data"].get("unverified"), type_
        # the result must be the one the forfeit makes: not black's win
        flipped = {**result, "winner": "black"}
        kept = await stamped(station, attacker, type="result", data=flipped, txn=second)
        assert kept["data"].get("unverified") is True
        kept = await stamped(station, attacker, type="result", data=result, txn=second)
        assert not kept["data"].get("unverified")
    assert await result_of(station) == "1-0"


async def test_a_withdraw_takes_back_only_the_foul_it_named_and_the_loss_it_made(
    venue_broker, tmp_path: Path, start_station
) -> None:
    """The arbiter's 撤销 (``withdraw`` {seq}): the named confirmed foul dismissed decides, and
    with it the loss by fouls it completed (its forfeit and result dismissed), each once; the
    same txn on another foul, another side or a result of its own is a proposal."""
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    await station.import_pairings(PAIRS, send=False)
    foul = {"side": "black", "reason": "disturbing", "status": "confirmed"}
    forfeit = {"side": "black", "reason": "fouls", "status": "confirmed"}
    result = {"winner": "red", "reason": "fouls", "status": "confirmed"}
    seqs: list[int] = []
    async with FakeNode(venue_broker, "node-c", ["5"]) as attacker:
        for count in (1, 2):
            txn = await asked(station, attacker, "foul", {"side": "black", "reason": "disturbing"})
            kept = await stamped(
                station, attacker, type="foul", data={**foul, "count": count}, txn=txn
            )
            assert not kept["data"].get("unverified")
            seqs.append(kept["seq"])
        loss = []
        for type_, data in (("forfeit", forfeit), ("result", result)):
            kept = await stamped(station, attacker, type=type_, data=data, txn=txn)
            assert not kept["data"].get("unverified"), type_
            loss.append(kept["seq"])
        assert await result_of(station) == "1-0"

        back = await asked(station, attacker, "withdraw", {"seq": seqs[0]})
        dismissed = {**foul, "status": "dismissed", "count": 1}
        wrong: list[dict[str, Any]] = [
            {"type": "foul", "data": {**dismissed, "ref": seqs[1]}},  # the other foul
            {"type": "foul", "data": {**dismissed, "side": "red", "ref": seqs[0]}},
            {"type": "result", "data": {**result, "status": "dismissed", "ref": loss[1]}},
            {
                "type": "result",
                "data": {"winner": "black", "reason": "arbiter", "status": "confirmed"},
            },
        ]
        for decision in wrong:
            kept = await stamped(station, attacker, txn=back, **decision)
            assert kept["data"].get("unverified") is True, decision
        assert await result_of(station) == "1-0"
        for type_, data in (
            ("foul", {**dismissed, "ref": seqs[0]}),
            ("forfeit", {**forfeit, "status": "dismissed", "ref": loss[0]}),
            ("result", {**result, "status": "dismissed", "ref": loss[1]}),
        ):
            kept = await stamped(station, attacker, type=type_, data=data, txn=back)
            assert not kept["data"].get("unverified"), type_
        assert await result_of(station) is None
        fouls = await station.player_fouls()
        assert (fouls["吕钦"]["confirmed"], fouls["吕钦"]["dismissed"]) == (1, 1)
        # spent: the same txn takes back nothing more
        kept = await stamped(
            station, attacker, type="foul", data={**dismissed, "ref": seqs[1]}, txn=back
        )
        assert kept["data"].get("unverified") is True
