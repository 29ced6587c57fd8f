"""``Station``: the store, the collector, the command bus and the HTTP API as one library object.

    station = Station(StationConfig.load("station.toml"))
    await station.run()            # until request_stop() (the CLI wires SIGINT/SIGTERM to it)

or, in tests: ``async with Station(config) as station: ...`` (started and cleanly stopped).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

from clock_service.regulation import Regulation, handicap_for
from venue_station.alerts import AlertSpec
from venue_station.auth import Sessions
from venue_station.collector import Collector
from venue_station.commands import CommandBus, CommandResult
from venue_station.config import StationConfig
from venue_station.errors import ConfigError, StationError
from venue_station.hub import Hub
from venue_station.ingest import BoardView, Ingest
from venue_station.login_guard import LoginGuard
from venue_station.metrics import Metrics
from venue_station.pairings import parse_pairings, parse_players
from venue_station.results import (
    DECISIVE_TYPES,
    Outcome,
    derive_game,
    tournament_fouls,
)
from venue_station.standings_view import player_tags
from venue_station.store import Store, board_key, game_id
from venue_station.supervisor import Supervisor
from wire_contract.messages import Topics
from wire_contract.wallclock import wall_ms

__all__ = ["Station"]

log = logging.getLogger(__name__)
FLUSH_AT_STOP_S = 1.5


class Station:
    def __init__(
        self, config: StationConfig, *, connect: bool = True, serve_http: bool = True
    ) -> None:
        self.config = config
        self.connect = connect
        self.serve_http = serve_http
        self.topics = Topics(config.venue)
        self.metrics = Metrics()
        http = config.http
        self.hub = Hub(max_total=http.sse_max, per_address=http.sse_per_address)
        self.sessions = Sessions((a.username, a.password_hash, a.role) for a in config.account)
        self.login_guard = LoginGuard(
            per_address=http.login_per_address,
            per_account=http.login_per_account,
            window_s=http.login_window_s,
            concurrency=http.hash_concurrency,
            queue=http.hash_queue,
        )
        self.regulation = _regulation(config)
        self.tc = self.regulation.time_control_text
        self.scoring = self.regulation.scoring
        self.store: Store | None = None
        self.ingest: Ingest | None = None
        self.bus: CommandBus | None = None
        self.collector: Collector | None = None
        self.session = 0
        self.http_port: int | None = None
        self.started_ms = 0
        self._tasks: list[asyncio.Task[Any]] = []
        self.supervisor = Supervisor()
        self._server: Any = None
        self._stop = asyncio.Event()
        self._app: Any = None

    # -- life -------------------------------------------------------------------------------
    async def start(self, *, timeout: float = 15.0) -> None:
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = store = await Store.open(self.config.db_url)
        self.session = await store.next_station_session()
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
            self.supervisor.start("gaps", self._watch_gaps)
            ingest.clock_truth.probing = True  # a node looking behind is judged by round trips
            self.supervisor.start(
                "clock-probes",
                lambda: ingest.clock_probes.run(
                    collector.publish, ingest.probe_targets, collector.connected.is_set
                ),
            )
        if self.serve_http:
            await self._start_http()
        if self.collector is not None:
            try:
                await asyncio.wait_for(self.collector.connected.wait(), timeout)
            except TimeoutError:
                log.warning(
                    "not connected to the broker %s yet; still trying", self.config.broker.url
                )
        log.info(
            "station %s up: session %d, db %s, http port %s",
            self.config.venue,
            self.session,
            store.dialect,
            self.http_port,
        )

    async def stop(self, *, clean: bool = True) -> None:
        """Stop. ``clean``: store everything received and say ``offline``; else drop it all
        on the floor like a crash would (tests use that to prove nothing is lost).

        Bounded in every state (a stuck writer, a task restarting): within ~5 s, whatever is
        not stored by then is left to the nodes' journals (they replay it)."""
        self._stop.set()
        if clean and self.collector is not None:
            await self.collector.say_offline()
        await self.supervisor.cancel("collector")
        if clean and self.ingest is not None:
            try:
                await asyncio.wait_for(self.ingest.flush(), FLUSH_AT_STOP_S)
            except TimeoutError:
                log.warning(
                    "stopping with %d message(s) not stored (the writer is stuck)",
                    self.ingest.pending(),
                )
        if self._server is not None:
            self._server.should_exit = True
        self.hub.close()
        await self.supervisor.cancel_all(timeout=1.0)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=1.5)
        self._tasks.clear()
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.close(), 1.0)
            except TimeoutError:
                log.warning("the database did not close within 1 s")
        self.login_guard.close()

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

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.create_task(coro, name=f"station-{name}")
        task.add_done_callback(self._task_done)
        self._tasks.append(task)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or self._stop.is_set():
            return
        exc = task.exception()
        if exc is not None:
            log.error("station task %s failed: %r; stopping", task.get_name(), exc, exc_info=exc)
            self._stop.set()

    @property
    def app(self) -> Any:
        if self._app is None:
            from venue_station.api import build_app

            self._app = build_app(self)
        return self._app

    async def _start_http(self) -> None:
        import uvicorn

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # the CLI owns the signals, not the library

        http = self.config.http
        tls: dict[str, Any] = {}
        if http.tls_cert is not None and http.tls_key is not None:
            for key, path in (("tls_cert", http.tls_cert), ("tls_key", http.tls_key)):
                if not path.is_file():
                    raise ConfigError("station config", f"http.{key}", f"{path}: no such file")
            tls = {"ssl_certfile": str(http.tls_cert), "ssl_keyfile": str(http.tls_key)}
        cfg = uvicorn.Config(
            self.app,
            host=http.host,
            port=http.port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            access_log=False,
            # Each SSE stream and keep-alive connection is a socket: the hub caps the streams;
            # uvicorn's own cap keeps the total (streams + API) under the unit's LimitNOFILE.
            limit_concurrency=http.sse_max + 1000,
            **tls,
        )
        self._server = server = _Server(cfg)
        self._spawn(server.serve(), "http")
        while not server.started:
            if self._tasks[-1].done():
                raise StationError(
                    "the HTTP server did not start on "
                    f"{self.config.http.host}:{self.config.http.port}"
                )
            await asyncio.sleep(0.01)
        self.http_port = server.servers[0].sockets[0].getsockname()[1]

    @property
    def http_url(self) -> str:
        scheme = "https" if self.config.http.tls else "http"
        return f"{scheme}://{self.config.http.host}:{self.http_port}"

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
                backoff = retry * 2 ** min(max(seqs.rebirths - 1, 0), 4)
                if seqs.last_rebirth is not None and now - seqs.last_rebirth < backoff:
                    continue
                seqs.last_rebirth, seqs.rebirths = now, seqs.rebirths + 1
                self.metrics.rebirths_sent += 1
                log.info("board %s: asking for a rebirth to fill %s", board, seqs.missing(3))
                try:
                    missing = seqs.missing(1)
                    args = {"from_seq": missing[0][0]} if missing else {}
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
    def _store(self) -> Store:
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

    async def import_players(self, data: str | bytes, *, source: str = "players.csv") -> int:
        # Parsing a long file is CPU work: on a thread, so the loop keeps serving meanwhile.
        rows = await asyncio.to_thread(parse_players, data, source=source)
        await self._store().add_players(rows)
        return len(rows)

    async def import_pairings(
        self,
        data: str | bytes,
        *,
        source: str = "pairings.csv",
        send: bool = True,
        user: str | None = None,
    ) -> dict[str, Any]:
        store = self._store()
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
        await store.replace_rounds(self.tc, by_round)  # all or nothing (round_import.py)
        for round_no, rows in by_round.items():
            for row in rows:
                self.ingest.authority.bind(game_id(round_no, row["board"]), row["board"])
        self.ingest.add_paired_boards({p.board for p in pairings})
        out: dict[str, Any] = {"imported": len(pairings), "rounds": sorted(by_round)}
        if send:
            out["set_game"] = {}
            for round_no in sorted(by_round):
                out["set_game"].update(await self.send_round(round_no, user=user))
        return out

    async def send_round(self, round_no: int, *, user: str | None = None) -> dict[str, Any]:
        """``set_game`` to every board of the round, concurrently; board -> the reply."""
        games = await self._store().games(round_no)
        tags = await player_tags(self._store())

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
        store = self._store()
        out = []
        for game in await store.games(round_no):
            out.append(
                (
                    game,
                    derive_game(
                        await store.game_events(game["game"], DECISIVE_TYPES), self.regulation
                    ),
                )
            )
        return out

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
        }


def _regulation(config: StationConfig) -> Regulation:
    try:
        return Regulation.load(config.regulation)
    except ValueError as exc:
        raise ConfigError("station config", "regulation", str(exc)) from None
