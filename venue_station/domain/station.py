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
import uuid
from pathlib import Path
from typing import Any

from clock_service.regulation import Regulation
from clock_service.standings import Standing
from venue_station.config import StationConfig
from venue_station.domain import board_list, pairing_import, store_wait
from venue_station.domain.alarms import AlarmWatch, StoreWaiting, alarms
from venue_station.domain.commands import CommandBus, CommandResult
from venue_station.domain.decisions_out import DecisionOutbox
from venue_station.domain.gaps import watch_gaps
from venue_station.domain.knockout import KnockoutDesk
from venue_station.domain.pairings import parse_players
from venue_station.domain.record_counts import CountDesk
from venue_station.domain.record_duties import DutyDesk, record_fouls
from venue_station.domain.records import RecordDesk
from venue_station.domain.records_out import relay_records
from venue_station.domain.resend import Resender, answer_resend_asks
from venue_station.domain.rulings import Ruling, plan_ruling
from venue_station.domain.standings import final_standings_of, standings_of, with_final_places
from venue_station.domain.supervisor import Supervisor
from venue_station.errors import ConfigError, StationError, StoreError, StoreUnavailable
from venue_station.intake.collector import Collector
from venue_station.intake.ingest import Ingest
from venue_station.intake.signed_txn import signer_for
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
from venue_station.store.database import Store
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
        self.event_title = self.regulation.title or config.venue  # PGN's Event, TRF's 012
        self.tc = self.regulation.time_control_text
        self.scoring = self.regulation.scoring
        self.knockout = KnockoutDesk(self.require_store, self.hub, self.regulation)
        # 录谱: the records of the games; every change on the SSE stream (without legal moves)
        self.records = RecordDesk(
            self.require_store, self.regulation, self._board_game, self.knockout.game_row
        )
        self.records.listen(lambda view: self.hub.publish("record", view.as_dict(legal=False)))
        # 录谱: the arbiter's view of the records, the grace's end, the chief's consent
        self.duties = DutyDesk(
            self.require_store, self.regulation, self.hub, self._raise_alert, self._flush,
            self.records.pairing, self.knockout.rows_of_round,
        )  # fmt: skip
        # 录谱: the move limit and the early draw counted on a game's record where it has one
        self.counts = CountDesk(self.require_store, self.regulation, self._raise_alert, self._flush)
        self.round_boards = board_list.RoundBoards()  # the round's boards, seen or not
        self.records.listen(self.counts.record_changed)
        self.store: Store | None = None
        self.ingest: Ingest | None = None
        self.bus: CommandBus | None = None
        self.collector: Collector | None = None
        self.decisions: DecisionOutbox | None = None
        self.resender: Resender | None = None
        self.session = 0
        self.started_ms = 0
        self.supervisor = Supervisor()
        self.backup: BackupLoop | None = None
        self._running_fd: int | None = None
        self._stop = asyncio.Event()
        self.store_waiting: StoreWaiting | None = None  # no database yet (a full disk at start)
        self.watch = AlarmWatch(self)

    # -- life -------------------------------------------------------------------------------
    async def start(self, *, timeout: float = 15.0) -> None:
        """Open the store, start the tasks, then wait up to ``timeout`` s for the broker."""
        await self.open()
        await self.wait_connected(timeout)
        dialect = self.store.dialect if self.store is not None else "not open yet"
        log.info("station %s up: session %d, db %s", self.config.venue, self.session, dialect)

    async def open(self) -> None:
        """Everything but waiting for the broker: what a web server needs to serve the station."""
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        db_file = sqlite_path(self.config.db_url)
        if db_file is not None:  # `qizhong station restore` refuses while this is held
            db_file.parent.mkdir(parents=True, exist_ok=True)
            self._running_fd = running_lock(db_file)
        try:
            await store_wait.open_store(self)
        except StoreError:
            raise  # not a disk that may have room later (a schema newer than this code)
        except Exception as exc:
            # A full disk (or one failing): serve the pages, keep the live views, say so, and
            # open the store as soon as it can be written (alarms.py; docs/operations.md).
            self.store_waiting = StoreWaiting(wall_ms(), f"{type(exc).__name__}: {exc}"[:300])
            log.warning("the database cannot be opened (%s); serving without it, retrying", exc)
            store_wait.watch_only(self)
            retry = lambda: store_wait.open_when_possible(self, db_file)  # noqa: E731
            self.supervisor.start("store-open", retry)
            return
        await self.open_rest(db_file)

    async def open_rest(self, db_file: Path | None) -> None:
        """The rest of ``open`` once the store is open (at once, or when it can be)."""
        store = self.require_store()
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
        await self.round_boards.refresh(self)
        await self.counts.load(self.ingest.alert_ledger.has)
        self.ingest.hold = self.counts.hold
        self.bus.on_sent = self.ingest.authority.sent
        signer = signer_for(self.config.decision_key_file, self.config.venue)
        if signer is not None:
            self.ingest.authority.signer = signer
            self.bus.sign = lambda board, cmd, args, game: signer.make(board, cmd, args, game=game)
            self.bus.board_game = self._board_game
        ingest, supervisor = self.ingest, self.supervisor
        self.metrics.gauges.update(
            {
                "qz_tasks_down": lambda: len(supervisor.down()),
                "qz_task_restarts": lambda: sum(s.restarts for s in supervisor.states.values()),
                "qz_writer_stuck": lambda: int(ingest.writer.health.stuck()),
                "qz_set_aside": lambda: ingest.writer.health.set_aside,
                "qz_boards_flooding": lambda: len(ingest.flood.throttled()),
                # What the anonymous streams were spared (docs/station.md, SSE).
                "qz_public_superseded": lambda: self.hub.public.superseded,
                "qz_public_left_off": lambda: self.hub.public.left_off,
                "qz_public_streams_dropped": lambda: self.hub.public.slow_dropped,
                # The hub's asks for events it lacks, and the copies sent again (resend.py).
                "qz_resend_asks": lambda: self.resender.asks if self.resender else 0,
                "qz_resent_events": lambda: self.resender.sent if self.resender else 0,
            }
        )
        self.supervisor.start("writer", self.ingest.writer.run)
        self.supervisor.start("alarms", self.watch.run)
        self.supervisor.start("record-duties", self.duties.run)
        self.supervisor.start("record-counts", self.counts.run)
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
            answer_resend_asks(self, collector)  # events a dying centre node lost, again
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
        if clean and self.ingest is not None and self.ingest.deciding:
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

    async def _watch_gaps(self) -> None:
        await watch_gaps(self)

    def _raise_alert(self, spec: AlertSpec) -> int | None:
        assert self.ingest is not None
        return self.ingest.raise_alert(spec)

    async def _flush(self) -> None:
        if self.ingest is not None:
            await self.ingest.flush()

    # -- domain operations used by the API --------------------------------------------------
    def require_store(self) -> Store:
        """The store, once started (``StationError`` before)."""
        if self.store is None:
            if self.store_waiting is not None:
                raise StoreUnavailable(
                    f"the station's database is not open ({self.store_waiting.error}); "
                    "it keeps trying"
                )
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

    async def import_players(
        self, data: str | bytes, *, source: str = "players.csv", dry_run: bool = False
    ) -> int:
        """The players file's rows stored; ``dry_run``: checked and counted, none stored."""
        # Parsing a long file is CPU work: on a thread, so the loop keeps serving meanwhile.
        rows = await asyncio.to_thread(parse_players, data, source=source)
        if not dry_run:
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
        """Store the file's rounds all or nothing (``pairing_import.import_pairings``)."""
        return await pairing_import.import_pairings(
            self, data, source=source, send=send, user=user, replace=replace, dry_run=dry_run
        )

    async def send_round(self, round_no: int, *, user: str | None = None) -> dict[str, Any]:
        """``set_game`` to every board of the round, concurrently; board -> the reply."""
        return await pairing_import.send_round(self, round_no, user=user)

    async def outcomes(self, round_no: int | None = None) -> list[tuple[dict[str, Any], Outcome]]:
        """Every game of the round (all: None) with its outcome by the one outcome function."""
        store = self.require_store()
        games = await store.games(round_no)
        events = await store.reads.decisive_events(
            g["game"] for g in games
        )  # one query, not one a game
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
        first; an earlier round or one group stays the Swiss table (a group's with the final
        list's places as ``event_rank``)."""
        last = after_round in (None, self.regulation.tournament.rounds)
        placings = await self.knockout.placings() if last else None
        if placings is None:
            return await self.standings(after_round=after_round, tag=tag), False
        store = self.require_store()
        final = await final_standings_of(store, self.regulation, placings, after_round=after_round)
        if tag is None:
            return final, True
        # a group's table: each player's place in the whole event is the final list's
        rows = await self.standings(after_round=after_round, tag=tag)
        return with_final_places(rows, final), False

    async def player_fouls(self) -> dict[str, dict[str, int]]:
        """The boards' fouls per player, and the confirmed not_recording ones (record_duties)."""
        games = await self.outcomes()
        totals = tournament_fouls(games)
        late = await record_fouls(self.require_store(), self.regulation)
        for game, _ in games:
            for side, n in late.get(game["game"], {}).items():
                mine = totals.setdefault(game[side], {"pending": 0, "confirmed": 0, "dismissed": 0})
                mine["confirmed"] += n
        return totals

    def board_views(self) -> list[dict[str, Any]]:
        """Every board's view (``board_list.board_views``)."""
        return board_list.board_views(self)

    def health(self) -> dict[str, Any]:
        """``/healthz``: ok while connected, every task up and the writer not stuck."""
        info = self.info()
        writer = self.ingest.writer.health.as_dict() if self.ingest is not None else {}
        down = self.supervisor.down()
        ok = (
            (info["connected"] or not self.connect)
            and not down
            and not writer.get("stuck", False)
            and not self._stop.is_set()
            and self.store_waiting is None
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
            "title": self.event_title,  # the pages' heading: the event's name, not the venue's id
            "regulation": self.config.regulation,
            "tc": self.tc,
            "session": self.session,
            "started_ms": self.started_ms,
            "station_ts": wall_ms(),
            "connected": bool(self.collector and self.collector.connected.is_set()),
            "alarms": self.alarms(),
        }

    def alarms(self) -> list[dict[str, Any]]:
        """What every page shows in a banner (``alarms.py``)."""
        return alarms(self, self.watch)


def _regulation(config: StationConfig) -> Regulation:
    try:
        return Regulation.load(config.regulation)
    except ValueError as exc:
        raise ConfigError("station config", "regulation", str(exc)) from None
