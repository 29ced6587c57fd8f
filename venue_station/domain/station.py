"""``Station``: the venue's domain as one library object: the store, the collector and ingest,
the command bus, alerts, results, standings and the knockout. It knows nothing of HTTP.

    station = Station(StationConfig.load("station.toml"))
    await station.run()            # until request_stop() (the CLI wires SIGINT/SIGTERM to it)

or, in tests: ``async with Station(config) as station: ...`` (started and cleanly stopped).
The web (API, pages, SSE) is ``web_server.WebServer``, started beside a Station;
``web_server.StationWithWeb`` is both in one call (the CLI, benchmarks, tests).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from pathlib import Path
from typing import Any

from clock_service.regulation import Regulation, handicap_for
from clock_service.standings import Standing
from venue_station.config import StationConfig
from venue_station.domain import tournament_desk
from venue_station.domain.commands import CommandBus, CommandResult
from venue_station.domain.decisions_out import DecisionOutbox
from venue_station.domain.import_guard import check_not_withdrawn, guard_rounds
from venue_station.domain.knockout import KnockoutDesk
from venue_station.domain.pairings import parse_pairings, parse_players
from venue_station.domain.records import RecordDesk
from venue_station.domain.records_out import relay_records
from venue_station.domain.rulings import Ruling, plan_ruling
from venue_station.domain.standings import final_standings_of, standings_of
from venue_station.domain.supervisor import Supervisor
from venue_station.domain.trf_state import load_state
from venue_station.errors import ConfigError, StationError
from venue_station.intake.collector import Collector
from venue_station.intake.ingest import BoardView, Ingest
from venue_station.live.alerts import AlertSpec
from venue_station.live.fanout import EventFanout
from venue_station.live.metrics import Metrics
from venue_station.live.results import (
    DECISIVE_TYPES,
    Outcome,
    derive_game,
    tournament_fouls,
)
from venue_station.store.backup import BackupLoop, running_lock, sqlite_path
from venue_station.store.database import Store, board_key, game_id
from wire_contract.messages import Topics
from wire_contract.wallclock import wall_ms

__all__ = ["Station"]

log = logging.getLogger(__name__)
FLUSH_AT_STOP_S = 1.5


class Station:
    def __init__(self, config: StationConfig, *, connect: bool = True) -> None:
        self.config = config
        self.connect = connect
        self.topics = Topics(config.venue)
        self.metrics = Metrics()
        http = config.http
        self.hub = EventFanout(max_total=http.sse_max, per_address=http.sse_per_address)
        self.regulation = _regulation(config)
        self.tc = self.regulation.time_control_text
        self.scoring = self.regulation.scoring
        self.knockout = KnockoutDesk(self.require_store, self.hub, self.regulation)
        # 录谱: the records of the games; every change on the SSE stream (without legal moves)
        self.records = RecordDesk(self.require_store, self.regulation, self._board_game)
        self.records.listen(lambda view: self.hub.publish("record", view.as_dict(legal=False)))
        self.store: Store | None = None
        self.ingest: Ingest | None = None
        self.bus: CommandBus | None = None
        self.collector: Collector | None = None
        self.decisions: DecisionOutbox | None = None
        self.session = 0
        self.started_ms = 0
        self.supervisor = Supervisor()
        self.backup: BackupLoop | None = None
        self._running_fd: int | None = None
        self._stop = asyncio.Event()

    # -- life -------------------------------------------------------------------------------
    async def start(self, *, timeout: float = 15.0) -> None:
        """Open the store, start the tasks, then wait up to ``timeout`` s for the broker."""
        await self.open()
        await self.wait_connected(timeout)
        dialect = self.require_store().dialect
        log.info("station %s up: session %d, db %s", self.config.venue, self.session, dialect)

    async def open(self) -> None:
        """Everything but waiting for the broker: what a web server needs to serve the station."""
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        db_file = sqlite_path(self.config.db_url)
        if db_file is not None:  # `qizhong station restore` refuses while this is held
            db_file.parent.mkdir(parents=True, exist_ok=True)
            self._running_fd = running_lock(db_file)
        self.store = store = await Store.open(self.config.db_url)
        self.session = await store.next_station_session()
        await self._start_backups(store, db_file)
        self.started_ms = wall_ms()
        self.bus = CommandBus(
            self.topics, store, self.metrics, timeout_s=self.config.command_timeout_s
        )
        self.ingest = Ingest(
            store,
            venue=self.config.venue,
            metrics=self.metrics,
            hub=self.hub,
            known_boards=self.config.known_boards(),
            on_reply=self.bus.on_reply,
            clock_probe_s=self.config.clock_probe_s,
            regulation=self.regulation,
        )
        await self.ingest.load()
        self.bus.on_sent = self.ingest.authority.sent
        ingest, supervisor = self.ingest, self.supervisor
        self.metrics.gauges.update(
            {
                "qz_tasks_down": lambda: len(supervisor.down()),
                "qz_task_restarts": lambda: sum(s.restarts for s in supervisor.states.values()),
                "qz_writer_stuck": lambda: int(ingest.writer_health.stuck()),
                "qz_set_aside": lambda: ingest.writer_health.set_aside,
                "qz_boards_flooding": lambda: len(ingest.flood.throttled()),
                # What the anonymous streams were spared (docs/station.md, SSE).
                "qz_public_superseded": lambda: self.hub.public.superseded,
                "qz_public_left_off": lambda: self.hub.public.left_off,
                "qz_public_streams_dropped": lambda: self.hub.public.slow_dropped,
            }
        )
        self.supervisor.start("writer", self.ingest.run_writer)
        if self.connect:
            self.collector = collector = Collector(
                self.config.broker, self.topics, self.ingest, session=self.session
            )
            self.bus.publish = collector.publish
            self.supervisor.start("collector", collector.run)
            # The station's decisions to the hub; every one again at each start (issue 27).
            outbox = self.decisions = DecisionOutbox(self.topics.station_decision)
            outbox.put_all(ingest.authority.asks.decided.values())
            ingest.authority.asks.on_decided = outbox.put
            self.supervisor.start(
                "decisions", lambda: outbox.run(collector.publish, collector.connected)
            )
            relay_records(self, collector)  # the records to the hub, retained (issue 29)
            self.supervisor.start("gaps", self._watch_gaps)
            ingest.clock_truth.probing = True  # a node looking behind is judged by round trips
            self.supervisor.start(
                "clock-probes",
                lambda: ingest.clock_probes.run(
                    collector.publish, ingest.probe_targets, collector.connected.is_set
                ),
            )

    async def _start_backups(self, store: Store, db_file: Path | None) -> None:
        cfg = self.config.backup
        if cfg.dir is None or db_file is None:
            return
        series = await store.get_meta("store_id")
        if series is None:  # this store's backups are a series of their own (backup.py)
            series = uuid.uuid4().hex[:8]
            await store.set_meta("store_id", series)
        self.backup = loop = BackupLoop(
            db_file, cfg.dir, series=series, every_s=cfg.every_s, keep=cfg.keep
        )
        self.supervisor.start("backup", loop.run)

    async def wait_connected(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the broker (the collector goes on trying after)."""
        if self.collector is None:
            return
        try:
            async with asyncio.timeout(timeout):
                await self.collector.connected.wait()
        except TimeoutError:
            log.warning("not connected to the broker %s yet; still trying", self.config.broker.url)

    async def stop(self, *, clean: bool = True) -> None:
        """Stop. ``clean``: store everything received and say ``offline``; else drop it all
        on the floor like a crash would (tests use that to prove nothing is lost).

        Bounded in every state (a stuck writer, a task restarting): within ~5 s, whatever is
        not stored by then is left to the nodes' journals (they replay it)."""
        await self.stop_work(clean=clean)
        await self.close_store()

    async def stop_work(self, *, clean: bool = True) -> None:
        """The first half of ``stop``: everything but closing the store (what serves reads
        from it, like the web, stops between the two)."""
        self._stop.set()
        if clean and self.collector is not None:
            await self.collector.say_offline()
        await self.supervisor.cancel("collector")
        if clean and self.ingest is not None:
            try:
                async with asyncio.timeout(FLUSH_AT_STOP_S):
                    await self.ingest.flush()
            except TimeoutError:
                log.warning(
                    "stopping with %d message(s) not stored (the writer is stuck)",
                    self.ingest.pending(),
                )
        self.hub.close()
        await self.supervisor.cancel_all(timeout=1.0)

    async def close_store(self) -> None:
        if self.store is not None:
            try:
                async with asyncio.timeout(1.0):
                    await self.store.close()
            except TimeoutError:
                log.warning("the database did not close within 1 s")
        if self._running_fd is not None:
            os.close(self._running_fd)
            self._running_fd = None

    def request_stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        await self.start()
        try:
            await self._stop.wait()
        finally:
            await self.stop()

    async def __aenter__(self) -> Station:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- gaps -------------------------------------------------------------------------------
    async def _watch_gaps(self) -> None:
        grace = self.config.rebirth_grace_ms / 1000
        retry = self.config.rebirth_retry_ms / 1000
        assert self.ingest is not None and self.bus is not None
        while True:
            await asyncio.sleep(0.05)
            if self.collector is None or not self.collector.connected.is_set():
                continue
            now = time.monotonic()
            for board, seqs in self.ingest.seqs.open_gaps().items():
                if seqs.gap_since is None or now - seqs.gap_since < grace:
                    continue
                if self.ingest.replays.flowing(board, now):
                    continue  # the replay asked is coming in: asking again would restart it
                backoff = retry * 2 ** min(max(seqs.rebirths - 1, 0), 4)
                if seqs.last_rebirth is not None and now - seqs.last_rebirth < backoff:
                    continue
                seqs.last_rebirth, seqs.rebirths = now, seqs.rebirths + 1
                self.metrics.rebirths_sent += 1
                log.info("board %s: asking for a rebirth to fill %s", board, seqs.missing(3))
                try:
                    missing = seqs.missing(1)
                    args = {"from_seq": missing[0][0]} if missing else {}
                    if missing:
                        self.ingest.replays.asked(board, missing[0][0], now)
                    await self.bus.send(board, "rebirth", args, wait=False)
                except ConnectionError:
                    continue
                if seqs.rebirths == 4:
                    spec = AlertSpec(
                        f"gap:{board}:{seqs.watermark}",
                        "gap",
                        board,
                        wall_ms(),
                        detail={"missing": [list(r) for r in seqs.missing()]},
                    )
                    self.ingest.raise_alert(spec)

    # -- domain operations used by the API --------------------------------------------------
    def require_store(self) -> Store:
        """The store, once started (``StationError`` before)."""
        if self.store is None:
            raise StationError("the station is not started")
        return self.store

    async def send_command(
        self,
        board: str | None,
        cmd: str,
        args: dict[str, Any] | None = None,
        *,
        user: str | None = None,
    ) -> CommandResult:
        assert self.bus is not None and self.ingest is not None
        expect = (
            ()
            if board is not None
            else [
                b
                for b, v in self.ingest.boards.items()
                if v.status and v.status["state"] == "online"
            ]
        )
        if cmd == "set_game" and board is not None and isinstance((args or {}).get("game"), str):
            self.ingest.authority.bind(str((args or {})["game"]), board)  # a spare clock too
        return await self.bus.send(board, cmd, args, user=user, expect=expect)

    async def rule_alert(
        self, alert: dict[str, Any], action: str, *, user: str | None = None
    ) -> tuple[Ruling, CommandResult | None]:
        """Rule on an alert (ack | confirm | dismiss): the board is told by the command that
        settles the proposal it carries (``rulings.plan_ruling``), with the station's txn;
        raises ``RulingRefused`` (a code and its reason) when the ruling cannot be made.
        The alert's own status is the caller's to store once the board agreed."""
        assert self.ingest is not None
        await self.ingest.flush()  # the proposal the alert carries may be in the queue still
        game = alert.get("game")
        events = await self.require_store().game_events(game) if game else []
        events = [e for e in events if not (e["data"].get("unverified") and e["data"].get("ref"))]
        decided = derive_game([e for e in events if e["type"] in DECISIVE_TYPES]).decided
        ruling = plan_ruling(alert, action, events, decided=decided)
        if ruling.cmd is None:
            return ruling, None
        return ruling, await self.send_command(alert["board"], ruling.cmd, ruling.args, user=user)

    def _board_game(self, board: str) -> str | None:
        view = self.ingest.boards.get(board) if self.ingest is not None else None
        game = view.state.get("game") if view is not None and view.state else None
        return str(game) if game else None

    async def game_on_board_decided(self, board: str) -> str | None:
        """The game now on ``board`` when it already has a confirmed result, else None."""
        assert self.ingest is not None
        view = self.ingest.boards.get(board)
        game = view.state.get("game") if view is not None and view.state else None
        if not game:
            return None
        events = await self.require_store().game_events(game, DECISIVE_TYPES)
        return str(game) if derive_game(events).decided else None

    async def import_players(self, data: str | bytes, *, source: str = "players.csv") -> int:
        # Parsing a long file is CPU work: on a thread, so the loop keeps serving meanwhile.
        rows = await asyncio.to_thread(parse_players, data, source=source)
        await self.require_store().add_players(rows)
        return len(rows)

    async def import_pairings(
        self,
        data: str | bytes,
        *,
        source: str = "pairings.csv",
        send: bool = True,
        user: str | None = None,
        replace: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Store the file's rounds all or nothing. A round with results or clocks running is
        refused (``ImportRefused``) unless ``replace`` names it (its results are voided);
        ``dry_run``: check and say what it would change, store nothing."""
        store = self.require_store()
        known = await store.player_names()
        pairings = await asyncio.to_thread(
            parse_pairings, data, source=source, players=known or None
        )
        by_round: dict[int, list[dict[str, Any]]] = {}
        for p in pairings:
            by_round.setdefault(p.round, []).append(
                {"board": p.board, "red": p.red, "black": p.black}
            )
        assert self.ingest is not None
        withdrawn = (await load_state(store)).withdrawn
        for rows in by_round.values():
            check_not_withdrawn(rows, withdrawn)
        guard = await guard_rounds(self, by_round, replace=replace)
        if dry_run:
            return {"dry_run": True, "imported": len(pairings), **guard.as_dict()}
        before = await tournament_desk.rounds_before(store, by_round)
        # all or nothing (round_import.py), the voided results in the same transaction
        await store.replace_rounds(self.tc, by_round, void=guard.void, by=user)
        entry = await tournament_desk.record(
            store, user=user, what="import_pairings", args={"rounds": sorted(by_round)},
            before=before, after={"rounds": sorted(by_round), "voided": list(guard.void)},
        )  # fmt: skip
        for round_no, rows in by_round.items():
            for row in rows:
                self.ingest.authority.bind(game_id(round_no, row["board"]), row["board"])
        self.ingest.add_paired_boards({p.board for p in pairings})
        out: dict[str, Any] = {
            "imported": len(pairings),
            "rounds": sorted(by_round),
            "audit": entry["id"],
        }
        if guard.void:
            out["voided_results"] = list(guard.void)
        if send:
            out["set_game"] = {}
            for round_no in sorted(by_round):
                out["set_game"].update(await self.send_round(round_no, user=user))
        return out

    async def send_round(self, round_no: int, *, user: str | None = None) -> dict[str, Any]:
        """``set_game`` to every board of the round, concurrently; board -> the reply."""
        games = await self.require_store().games(round_no)
        tags = await self.require_store().player_tags()

        async def one(game: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            args: dict[str, Any] = {
                "game": game["game"],
                "tc": game["tc"],
                "red": game["red"],
                "black": game["black"],
            }
            # 让二先 (Wulong): decided by the profile from the players' tags
            red_tags, black_tags = tags.get(game["red"], ()), tags.get(game["black"], ())
            handicap = handicap_for(self.regulation, red_tags, black_tags)
            if handicap is not None:
                args["handicap"] = handicap.as_dict()
            try:
                return game["board"], (
                    await self.send_command(game["board"], "set_game", args, user=user)
                ).as_dict()
            except ConnectionError as exc:
                return game["board"], {"outcome": "not_sent", "ok": False, "error": str(exc)}

        return dict(await asyncio.gather(*(one(g) for g in games)))

    async def outcomes(self, round_no: int | None = None) -> list[tuple[dict[str, Any], Outcome]]:
        """Every game of the round (all: None) with its outcome by the one outcome function."""
        store = self.require_store()
        games = await store.games(round_no)
        events = await store.decisive_events(g["game"] for g in games)  # one query, not one a game
        return [(g, derive_game(events[g["game"]], self.regulation)) for g in games]

    async def standings(
        self, *, after_round: int | None = None, tag: str | tuple[str, ...] | None = None
    ) -> list[Standing]:
        """The standings after ``after_round`` (default: the last round with a game), optionally
        of the players holding ``tag``. Raises ``StandingsError``."""
        return await standings_of(
            self.require_store(), self.regulation, after_round=after_round, tag=tag
        )

    async def shown_standings(
        self, *, after_round: int | None = None, tag: str | tuple[str, ...] | None = None
    ) -> tuple[list[Standing], bool]:
        """What the standings page shows, and whether it is the final list: once the knockout
        is finished, the whole event's latest (or last round's) table puts its places 1–4
        first; an earlier round or one group stays the Swiss table."""
        whole = tag is None and after_round in (None, self.regulation.tournament.rounds)
        if whole:
            async with self.knockout.lock:
                rec = await self.knockout.current()
            if rec is not None and rec.ko.finished:
                placings = rec.ko.placings()
                store = self.require_store()
                rows = await final_standings_of(
                    store, self.regulation, placings, after_round=after_round
                )
                return rows, True
        return await self.standings(after_round=after_round, tag=tag), False

    async def player_fouls(self) -> dict[str, dict[str, int]]:
        return tournament_fouls(await self.outcomes())

    def board_views(self) -> list[dict[str, Any]]:
        assert self.ingest is not None
        views = self.ingest.boards
        names = sorted(set(views) | set(self.ingest.seqs.boards), key=board_key)
        return [views.get(b, BoardView(b)).as_dict(self.ingest.seqs.boards.get(b)) for b in names]

    def health(self) -> dict[str, Any]:
        """``/healthz``: ok while connected, every task up and the writer not stuck."""
        info = self.info()
        writer = self.ingest.writer_health.as_dict() if self.ingest is not None else {}
        down = self.supervisor.down()
        ok = (
            (info["connected"] or not self.connect)
            and not down
            and not writer.get("stuck", False)
            and not self._stop.is_set()
        )
        return {
            "ok": ok,
            **info,
            "tasks": {n: s.as_dict() for n, s in self.supervisor.states.items()},
            "tasks_down": down,
            "writer": writer,
            "backup": self.backup.as_dict() if self.backup is not None else None,
            "flooding": self.ingest.flood.throttled() if self.ingest is not None else [],
        }

    def info(self) -> dict[str, Any]:
        return {
            "venue": self.config.venue,
            "regulation": self.config.regulation,
            "tc": self.tc,
            "session": self.session,
            "started_ms": self.started_ms,
            "station_ts": wall_ms(),
            "connected": bool(self.collector and self.collector.connected.is_set()),
            "alarms": self.alarms(),
        }

    def alarms(self) -> list[dict[str, Any]]:
        """What every page must show in a banner: the station's own troubles, each a code the
        pages translate and the wall ms since when (issue 28). ``broker_down``: no board's
        news arrives, the clocks shown are the last known; ``store_failing``: what arrives
        is not being stored (a full disk, a stuck or failing writer)."""
        out: list[dict[str, Any]] = []
        if self.connect and self.collector is not None and not self.collector.connected.is_set():
            out.append({"code": "broker_down", "since_ms": self.collector.down_since_ms})
        if self.ingest is not None:
            writer = self.ingest.writer_health
            if writer.stuck() or writer.retrying:
                out.append({"code": "store_failing", "detail": writer.last_error})
        backup = self.backup.alarm() if self.backup is not None else None
        if backup is not None:
            out.append(backup)
        return out


def _regulation(config: StationConfig) -> Regulation:
    try:
        return Regulation.load(config.regulation)
    except ValueError as exc:
        raise ConfigError("station config", "regulation", str(exc)) from None
