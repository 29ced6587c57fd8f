"""The chaos suite: a simulated round of 100 boards while the broker, the station and nodes die.

Real parts only: Mosquitto from broker-config output, the station and the faulty nodes as
processes (power cut = SIGKILL of a node with a durable journal), the other nodes in one
``qizhong sim`` process, a TCP proxy cutting some nodes off the broker. At the end the store
must equal the union of the journals, every game's stored result must be what its events
say, and every power-cut clock must continue within 1 s. The short form runs in CI; the long
form (``--chaos-long``) does the full counts (docs/chaos.md has its last table).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.chaos import LONG, SHORT, ChaosPlan, ChaosVenue, TcpProxy
from support.chaos_checks import (
    check_clocks,
    check_results,
    compare_store,
    read_journals,
    read_store,
    summary_table,
)
from support.chaos_round import ChaosRound

pytestmark = pytest.mark.broker


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


async def play(plan: ChaosPlan, work: Path) -> str:
    venue = ChaosVenue(work, plan=plan)

    def broker_address() -> tuple[str, int]:
        assert venue.broker is not None
        return venue.broker.host, venue.broker.port

    proxy = TcpProxy(broker_address)
    chaos = ChaosRound(venue, proxy)
    try:
        await chaos.setup()
        await chaos.inject()
        await chaos.finish()
    except BaseException:
        print("\n".join(chaos.log))
        for log in sorted(work.glob("*.log")):
            print(f"--- {log.name}\n{_tail(log)}")
        raise
    finally:
        await asyncio.to_thread(venue.stop)
        await proxy.close()

    journal = read_journals(venue.journals().values())
    events, games = read_store(chaos.db_file)
    comparison = compare_store(journal, events)
    checked, wrong_results = check_results(journal, games)
    cuts = [
        (f.target, venue.node_boards[f.target], f.kill_wall_ms, f.session_before)
        for f in chaos.faults
        if f.kind == "power_cut"
    ]
    clocks, wrong_clocks = check_clocks(journal, cuts)
    table = summary_table(
        plan.name,
        chaos.faults,
        comparison,
        (checked, checked - len(wrong_results)),
        clocks,
        {
            "boards (node processes / in the sim process)": (
                f"{venue.boards} ({len(venue.process_nodes)} nodes / {len(venue.sim_nodes)} nodes)"
            ),
            "flags": sum(ev["type"] == "flag" for ev in journal.values()),
            "results entered at the end / clocks resumed": (
                f"{chaos.results_entered} / {chaos.resumed}"
            ),
            "proxied connections cut / accepted in all": (
                f"{proxy.cut_connections} / {proxy.accepted}"
            ),
        },
    )
    print("\n" + "\n".join(chaos.log) + "\n\n" + table)
    assert comparison.ok, (
        f"store != journals: missing {comparison.missing[:10]}, extra {comparison.extra[:10]}, "
        f"twice {comparison.twice[:10]}, different {comparison.different[:5]}"
    )
    assert not wrong_results, "\n".join(wrong_results[:20])
    assert not wrong_clocks, "\n".join(wrong_clocks[:20])
    assert checked == plan.boards
    assert clocks, "no power-cut board had a game in progress: the clock check checked nothing"
    assert {f.kind for f in chaos.faults} >= {"broker_kill", "station_kill", "power_cut"}
    return table


@pytest.mark.slow
async def test_chaos_round_short(tmp_path: Path) -> None:
    await play(SHORT, tmp_path)


@pytest.mark.slow
@pytest.mark.chaos_long
@pytest.mark.timeout(1800)
async def test_chaos_round_long(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if not request.config.getoption("--chaos-long"):
        pytest.skip("the long form of the chaos suite runs with --chaos-long")
    await play(LONG, tmp_path)  # run with -s: the table goes into docs/chaos.md
