"""Scale run: one station and one Mosquitto with up to 2,000 simulated boards at 10x the real
move rate: events lost, ingest lag, station CPU and memory, broker CPU, and the curve of e2e
latency (event ts -> received by the station) against the number of boards, as a ratio to the
raw broker QoS 1 round trip of the same run.

One venue (qizhong.simulation.venue.LocalVenue without node processes) whose roster holds every size
side by side: Mosquitto from broker-config output, ``qizhong station`` as a process; each size
plays its own nodes in ``qizhong sim`` processes (one per 500 boards, non-durable journals)
that set and start a game on every board themselves. After the measurement window the arbiter
pauses every clock, the backlog drains, and the fleet's journals are compared with the
station's store (events lost must be 0).

    python benchmarks/scale.py            # 100, 500, 1,000 boards 2 min each, 2,000 for 5 min
    python benchmarks/scale.py --quick    # 100 and 300 boards, a few seconds each
    python benchmarks/scale.py --sizes 100,500,1000   # the full run's windows, chosen sizes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, parse_args, percentiles
from _station_bench import private_broker, qos1_round_trips

from qizhong.simulation.arbiter_client import ArbiterClient
from qizhong.simulation.venue import BOARDS_PER_NODE, LocalVenue

SPEED = 10.0  # players think 10x faster than real ones
MEAN_MOVE_S = 20.0  # a real player's mean thinking time
SIM_BOARDS = 500  # boards per sim process
CLK_TCK = os.sysconf("SC_CLK_TCK")
Key = tuple[str, int, int]
DOCS = Path(__file__).resolve().parent.parent / "docs"


class BenchVenue(LocalVenue):
    """Broker and station only: the boards are played by ``qizhong sim`` processes."""

    def start_node(self, node: str) -> None:
        return None


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_mb(pid: int) -> tuple[float, float]:
    """(resident now, peak resident) in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found.get("VmRSS", 0.0), found.get("VmHWM", 0.0)


def baseline(venue: LocalVenue, samples: int) -> list[float]:
    """The raw round trip on a twin Mosquitto (same roster and config, no station on it)."""
    node, boards = next(iter(venue.node_boards.items()))
    with private_broker(venue.roster, prefix="qz-scale-raw-") as broker:
        topic = f"qz/v1/scale/board/{boards[0]}/event"
        return asyncio.run(
            qos1_round_trips(
                broker, samples, topic=topic, publisher=node, payload=lambda i: b'{"probe": true}'
            )
        )


def wait_for(check: Any, timeout_s: float, what: str, every_s: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every_s)
    raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def journal_rows(sim_dir: Path) -> tuple[set[Key], set[Key], int]:
    """Every journaled (board, session, seq) of the fleet, those the broker acknowledged, and
    how many are not published yet."""
    keys: set[Key] = set()
    acked: set[Key] = set()
    for path in sim_dir.glob("*/journal.sqlite3"):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            for board, session, seq, sent in db.execute(
                "SELECT json_extract(payload,'$.board'), json_extract(payload,'$.session'), "
                "seq, sent FROM outbox"
            ):
                key = (str(board), int(session), int(seq))
                keys.add(key)
                if sent:
                    acked.add(key)
        finally:
            db.close()
    return keys, acked, len(keys) - len(acked)


def store_rows(db_file: Path) -> list[tuple[str, int, int, int, int]]:
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute("SELECT board, session, seq, ts, received_ms FROM events").fetchall()
    finally:
        db.close()


def sim_backlog_max(log: Path) -> int:
    """The largest outbox backlog the sim reported (its JSON stats lines, every 5 s): events
    journaled but not yet published, i.e. latency spent in the simulated fleet itself."""
    most = 0
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                most = max(most, int(json.loads(line).get("backlog", 0)))
            except ValueError:
                continue
    return most


def run_size(
    venue: LocalVenue, nodes: list[str], window_s: float, rtt: list[float], index: int
) -> dict[str, Any]:
    """Play ``nodes`` (a slice of the roster no earlier size used) for ``window_s``."""
    assert venue.broker is not None and venue.station_proc is not None
    work = venue.work
    boards = sum(len(venue.node_boards[n]) for n in nodes)
    mine = {b for n in nodes for b in venue.node_boards[n]}
    journals = work / f"sim-{index}"
    # One sim process per SIM_BOARDS boards: one Python process cannot play 2,000 boards
    # at 10x (its outbox backlog, not the station, would be measured); several use the cores.
    per = max(1, SIM_BOARDS // BOARDS_PER_NODE)
    sims = []
    for part, first in enumerate(range(0, len(nodes), per)):
        log = open(work / f"sim-{index}-{part}.log", "ab")  # noqa: SIM115 — the process owns it
        sims.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "qizhong",
                    "sim",
                    "--start",
                    "--roster",
                    str(work / "roster.toml"),
                    "--broker-dir",
                    str(venue.broker.dir),
                    "--data-dir",
                    str(journals),
                    "--nodes",
                    ",".join(nodes[first : first + per]),
                    "--speed",
                    str(SPEED),
                    "--mean-move-s",
                    str(MEAN_MOVE_S),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    try:
        api = ArbiterClient(venue.url)
        api.login("arbiter", venue.arbiter_password)

        def online() -> bool:
            if any(sim.poll() is not None for sim in sims):
                raise RuntimeError(f"a sim exited: see {work}/sim-{index}-*.log")
            body = api.request("GET", "/api/boards")
            rows = body.get("boards", []) if isinstance(body, dict) else body
            return sum(bool(v.get("online")) for v in rows if str(v["board"]) in mine) >= boards

        started = time.monotonic()
        wait_for(online, 60 + boards / 10, f"{boards} boards online")
        connect_s = time.monotonic() - started
        time.sleep(min(10.0, window_s / 4))  # warm-up: the games start, the first burst drains
        pids = {"station": venue.station_proc.pid, "broker": venue.broker.pid}
        pids.update({f"sim{i}": sim.pid for i, sim in enumerate(sims)})
        cpu0 = {k: cpu_s(p) for k, p in pids.items() if p}
        t0_ms, t0 = time.time_ns() // 1_000_000, time.monotonic()
        time.sleep(window_s)  # the measurement window itself
        elapsed = time.monotonic() - t0
        t1_ms = time.time_ns() // 1_000_000
        cpu = {k: (cpu_s(p) - cpu0[k]) / elapsed for k, p in pids.items() if p}
        rss, peak = memory_mb(venue.station_proc.pid)
        try:
            api.request("POST", "/api/venue/cmd", {"cmd": "pause", "args": {}})
        except (OSError, ValueError) as exc:  # a busy station answers late (or not in JSON)
            print(f"  {boards} boards: pause-all answered late ({exc})", flush=True)
        db_file = work / "station" / "station.db"

        def stored_keys() -> set[Key]:
            return {
                (str(b), int(s), int(q)) for b, s, q, _t, _r in store_rows(db_file) if b in mine
            }

        def drained() -> bool:
            keys, _acked, unsent = journal_rows(journals)
            return unsent == 0 and keys <= stored_keys()

        drain_started = time.monotonic()
        try:
            # The backlog waits at the broker now (bounded intake), so it drains at the
            # station's pace: allow for a few minutes of it at the largest sizes.
            wait_for(drained, 120 + boards * 0.3, "the backlog to drain", every_s=1.0)
        except RuntimeError as exc:
            print(f"  {boards} boards: {exc}", flush=True)
        drain_s = time.monotonic() - drain_started
        # The backlog drained through the bounded intake: the station's peak after it, and the
        # broker's (where the backlog waited).
        _rss, peak_drained = memory_mb(venue.station_proc.pid)
        _rss, broker_peak = memory_mb(venue.broker.pid) if venue.broker.pid else (0.0, 0.0)
    finally:
        for sim in sims:
            if sim.poll() is None:
                sim.send_signal(signal.SIGTERM)
        for sim in sims:
            try:
                sim.wait(120)
            except subprocess.TimeoutExpired:
                sim.kill()
                sim.wait(30)
    keys, acked, unsent = journal_rows(journals)
    rows = [r for r in store_rows(db_file) if r[0] in mine]
    stored = {(str(b), int(s), int(q)) for b, s, q, _ts, _r in rows}
    e2e = [r - ts for _b, _s, _q, ts, r in rows if t0_ms <= ts <= t1_ms]
    lat = percentiles(e2e) if e2e else {"p50": 0.0, "p99": 0.0, "max": 0.0}
    raw = percentiles(rtt)
    result = {
        "boards": boards,
        "window_s": round(elapsed, 1),
        "connect_s": round(connect_s, 1),
        "events_journaled": len(keys),
        "events_stored": len(stored),
        # Lost: acknowledged by the broker (marked sent in the journal) yet never stored.
        "events_lost": len(acked - stored),
        "events_not_stored": len(keys - stored),
        "events_unknown": len(stored - keys),
        "unsent_at_stop": unsent,
        "events_per_s": round(len(e2e) / elapsed, 1),
        "e2e_p50_ms": round(lat["p50"], 1),
        "e2e_p99_ms": round(lat["p99"], 1),
        "e2e_max_ms": round(lat["max"], 1),
        "raw_qos1_p50_ms": round(raw["p50"], 3),
        "raw_qos1_p99_ms": round(raw["p99"], 3),
        "station_cpu": round(cpu["station"], 3),
        "broker_cpu": round(cpu["broker"], 3),
        "sim_processes": len(sims),
        "sim_cpu": round(sum(v for k, v in cpu.items() if k.startswith("sim")), 3),
        "station_rss_mb": round(rss, 1),
        "station_peak_rss_mb": round(peak, 1),
        "station_peak_rss_drained_mb": round(peak_drained, 1),
        "broker_peak_rss_mb": round(broker_peak, 1),
        "sim_backlog_max": sum(sim_backlog_max(log) for log in work.glob(f"sim-{index}-*.log")),
        "drain_s": round(drain_s, 1),
        "load_avg_1m": os.getloadavg()[0],
    }
    print(json.dumps(result), flush=True)
    return result


def run_sizes(sizes: list[int], windows: dict[int, float], samples: int) -> list[dict[str, Any]]:
    """One venue whose roster holds every size side by side; each size plays its own nodes."""
    work = Path(tempfile.mkdtemp(prefix="qz-scale-"))
    venue = BenchVenue(work, boards=sum(sizes), speed=SPEED, venue="scale")
    try:
        venue.start()
        rtt = baseline(venue, samples)
        nodes, curve = list(venue.node_boards), []
        for index, size in enumerate(sizes):
            count = -(-size // BOARDS_PER_NODE)
            mine, nodes = nodes[:count], nodes[count:]
            curve.append(run_size(venue, mine, windows[size], rtt, index))
        return curve
    finally:
        venue.stop()
        shutil.rmtree(work, ignore_errors=True)


def plot(curve: list[dict[str, Any]], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    sizes = [r["boards"] for r in curve]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    ax.plot(sizes, [r["e2e_p50_ms"] for r in curve], "o-", label="e2e p50 (event ts → station)")
    ax.plot(sizes, [r["e2e_p99_ms"] for r in curve], "s-", label="e2e p99")
    ax.plot(sizes, [r["raw_qos1_p50_ms"] for r in curve], "^--", label="raw broker QoS 1 RTT p50")
    for r in curve:  # what was actually played: a starved fleet plays fewer moves
        ax.annotate(
            f"{r['events_per_s']:.0f} ev/s",
            (r["boards"], r["e2e_p50_ms"]),
            textcoords="offset points",
            xytext=(0, -14),
            ha="center",
            fontsize=8,
        )
    ax.set_xlabel(f"simulated boards (players ×{SPEED:g}: one move per board every 2 s)")
    ax.set_ylabel("latency (ms, log scale)")
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title("qizhong: e2e latency against venue size (one station, one Mosquitto)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)


FULL_WINDOWS = {100: 120.0, 500: 120.0, 1000: 120.0, 2000: 300.0}
MAX_SIZE = 5000  # boards in one size: the roster and the sims are built for it up front


def sizes_arg(text: str) -> list[int]:
    """``--sizes 100,500,1000``: ascending, each 1..MAX_SIZE (a clear error otherwise)."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give board counts like 100,500,1000") from None
    if not sizes or any(not 1 <= s <= MAX_SIZE for s in sizes) or sizes != sorted(set(sizes)):
        raise argparse.ArgumentTypeError(f"{text!r}: ascending, distinct, each 1..{MAX_SIZE}")
    return sizes


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plot", type=Path, default=None, help="where to write the PNG")
    parser.add_argument(
        "--sizes",
        type=sizes_arg,
        default=None,
        help="board counts of the full run (default 100,500,1000,2000); windows as the full run's",
    )


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0], _options)
    if args.quick:
        sizes, windows, main_size = [100, 300], {100: 3.0, 300: 3.0}, 300
        samples = 100
    else:
        sizes = args.sizes or [100, 500, 1000, 2000]
        main_size = sizes[-1]
        # Up to 1,000 boards a 2-minute window; beyond, 5 minutes (the full run's 2,000).
        windows = {s: FULL_WINDOWS.get(s, 120.0 if s <= 1000 else 300.0) for s in sizes}
        samples = 500
    curve = run_sizes(sizes, windows, samples)
    full = not args.quick and args.sizes is None
    default = DOCS / "scale.png" if full else Path(tempfile.gettempdir()) / "qz-scale.png"
    plotted = plot(curve, args.plot or default)
    big = next(r for r in curve if r["boards"] == main_size)
    emit(
        {
            "benchmark": "scale",
            "boards": main_size,
            "window_s": big["window_s"],
            "events_per_s": big["events_per_s"],
            "events_lost": sum(r["events_lost"] for r in curve),
            "ingest_lag_p99_ms": big["e2e_p99_ms"],
            "e2e_p50_ms": big["e2e_p50_ms"],
            "station_cpu": big["station_cpu"],
            "station_peak_rss_mb": big["station_peak_rss_mb"],
            "station_peak_rss_drained_mb": max(r["station_peak_rss_drained_mb"] for r in curve),
            "broker_peak_rss_mb": max(r["broker_peak_rss_mb"] for r in curve),
            "broker_cpu": big["broker_cpu"],
            "sim_cpu": big["sim_cpu"],
            "sim_backlog_max": big["sim_backlog_max"],
            "raw_qos1_p50_ms": big["raw_qos1_p50_ms"],
            "curve": {r["boards"]: [r["e2e_p50_ms"], r["e2e_p99_ms"]] for r in curve},
            "plot": plotted,
            "ratio_p99": round(big["e2e_p99_ms"] / max(big["raw_qos1_p99_ms"], 1e-3), 1),
            "ratio": round(big["e2e_p50_ms"] / max(big["raw_qos1_p50_ms"], 1e-3), 1),
        }
    )


if __name__ == "__main__":
    main()
