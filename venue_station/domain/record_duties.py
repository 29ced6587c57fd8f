"""The arbiter's side of the records (录谱, issue 29): ``DutyDesk``, ``Station.duties``.

For every game of a round that must be recorded (the profile's ``[recording]``:
clock_service.recording; Meishan the top 2 boards, Wulong the top 10 and every board with a
``master``) the desk says where its record stands — ``due`` / ``recorded`` / ``late`` /
``missing`` / ``allowed`` — and who must record it (the winner; red on a draw).

- **Recorded** means complete: the game has its result and the record holds at least as many
  moves as the game's clock counted presses (one move at least); a game in play is ``due``
  however far its record runs (it read 已录 while the game went on: an outsider). It was
  recorded *when* the edit that first made it so was stored (``record_edits``); completed after
  the grace, it is ``late``.
- **The grace** ends when the next round starts (its first ``started`` event; the last round has
  none, its records stay ``due``).
- **At the grace's end** every required record still missing (or only late) raises one
  ``record_missing`` alert against the responsible player: it carries the pending foul of the
  profile (``not_recording``). Its key is the game (``rec:{game}``), so it is raised once, also
  after a restart (the alert ledger holds every stored key). The arbiter confirms or dismisses
  it like any foul; no board is told (the game is over). A confirmed one counts in the
  standings as a foul of that player in that round (``record_fouls``), with the profile's
  累进分 penalty; it never counts toward a game's forfeit by fouls (the game is over).
- **The chief's consent** (Meishan: 若因故不愿录谱或者改时录谱的须征得裁判长同意; only where the
  profile says ``chief_consent = true``) makes the duty ``allowed``: before the grace ends no
  alert is raised; after it, the pending alert is closed (``cleared``, ``detail.cleared =
  "consent"``). It is audited (a ``consent`` row in ``record_edits``, who and when). A consent
  after the foul was ruled is refused (``already_ruled``), its withdrawal after the grace too
  (``grace_over``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clock_service.recording import RecordingRule, RecordState, record_state
from clock_service.regulation import Regulation
from clock_service.side import Side
from clock_service.xiangqi import START_FEN, Pairing
from venue_station.domain.records import board_number, pairing_dict
from venue_station.errors import StationError
from venue_station.live.alerts import AlertSpec
from venue_station.live.results import derive_game
from venue_station.store.alert_rows import change_alert
from venue_station.store.duty_reads import RECORD_ALERT
from wire_contract.wallclock import wall_ms

if TYPE_CHECKING:
    from venue_station.live.fanout import EventFanout
    from venue_station.store.database import Store

__all__ = ["RECORD_ALERT", "DutyDesk", "DutyRefused", "record_fouls"]

log = logging.getLogger(__name__)
ACTIVE = ("open", "acked")


class DutyRefused(StationError):
    """A consent the station refuses, nothing stored: ``code`` for the pages (no_game,
    no_consent_rule, record_not_required, already_ruled, grace_over), ``status`` HTTP."""

    def __init__(self, http: int, code: str, message: str, **args: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.args_ = http, code, message, args


@dataclass(frozen=True)
class GameDuty:
    """One game's recording duty as the arbiter's view shows it."""

    game: str
    board: str
    round: int
    red: str
    black: str
    because: str  # "top" (boards 1..N) | "tag" (a player with one of the rule's tags)
    responsible: Side | None  # None: no confirmed result yet
    state: RecordState
    plies: int  # moves recorded
    presses: int  # the clock's presses
    pairing: Pairing  # the record against the presses (records.RecordDesk.pairing)
    recorded_ms: int | None  # when the record was complete
    consent: dict[str, Any] | None  # {"by", "ms"}
    alert: dict[str, Any] | None  # the record_missing alert, if raised

    def as_dict(self) -> dict[str, Any]:
        player = None if self.responsible is None else getattr(self, self.responsible.value)
        return {
            "game": self.game,
            "board": self.board,
            "round": self.round,
            "red": self.red,
            "black": self.black,
            "because": self.because,
            "responsible": None
            if self.responsible is None
            else {"side": self.responsible.value, "player": player},
            "state": self.state.value,
            "plies": self.plies,
            "presses": self.presses,
            "pairing": pairing_dict(self.pairing),
            "recorded_ms": self.recorded_ms,
            "consent": self.consent,
            "alert": None
            if self.alert is None
            else {"id": self.alert["id"], "status": self.alert["status"], "by": self.alert["by"]},
        }


def _recorded_ms(edits: Iterable[Mapping[str, Any]], needed: int) -> int | None:
    """When the record first held ``needed`` moves (the ts of that edit), else None."""
    for edit in edits:
        if edit["action"] in ("add", "undo") and int(edit["ply"]) >= needed:
            return int(edit["ts"])
    return None


async def record_fouls(store: Store, regulation: Regulation) -> dict[str, dict[str, int]]:
    """game -> side -> the confirmed ``not_recording`` fouls of that game's responsible player
    (a game whose record the chief allowed counts none: the consent clears the duty)."""
    rule = regulation.recording
    if rule is None:
        return {}
    alerts = [
        a for a in (await store.duties.record_alerts()).values() if a["status"] == "confirmed"
    ]
    if not alerts:
        return {}
    stored = await store.record_rows.records(games=[a["game"] for a in alerts])
    out: dict[str, dict[str, int]] = {}
    for a in alerts:
        if rule.chief_consent and (stored.get(a["game"]) or {}).get("consent_by"):
            continue
        if a["side"] in ("red", "black"):
            side = out.setdefault(a["game"], {})
            side[a["side"]] = side.get(a["side"], 0) + 1
    return out


class DutyDesk:
    """The round's recording duties, the grace's end and the chief's consent."""

    def __init__(
        self,
        store: Callable[[], Store],
        regulation: Regulation,
        hub: EventFanout,
        raise_alert: Callable[[AlertSpec], int | None],
        flush: Callable[[], Any],
        pairing: Callable[[str, Mapping[str, Any] | None], Awaitable[Pairing]],
        knockout_rows: Callable[[int | None], Awaitable[list[dict[str, Any]]]] | None = None,
    ) -> None:
        self._store = store
        # Meishan's knockout games beside a Swiss round (前两台原则上都要录谱: they sit on the
        # top boards): its games-table rows of a round (all: None)
        self._knockout_rows = knockout_rows
        self._pairing = pairing  # records.RecordDesk.pairing
        self.regulation = regulation
        self.hub = hub
        self._raise = raise_alert
        self._flush = flush
        self.lock = asyncio.Lock()
        self._starts: dict[int, int] = {}  # round -> its start, as far as known
        self._settled: set[str] = set()  # games whose duty can raise nothing any more
        self._done_rounds: set[int] = set()  # rounds whose every game is settled
        self.raised = 0

    @property
    def rule(self) -> RecordingRule | None:
        return self.regulation.recording

    # -- the view -----------------------------------------------------------------------------
    async def round_duties(self, round_no: int, *, now: int | None = None) -> list[GameDuty]:
        """The round's games that must be recorded, in board order, with their states."""
        rule = self.rule
        if rule is None:
            return []
        store = self._store()
        now = wall_ms() if now is None else now
        knockout = await self._knockout(round_no)
        games = await store.games(round_no) + knockout
        tags = await store.reads.player_tags()
        presses = await store.duties.press_counts(round_no, also=[g["game"] for g in knockout])
        records = await store.record_rows.records(round=round_no)
        events = await store.reads.decisive_events(g["game"] for g in games)
        alerts = await store.duties.record_alerts(g["game"] for g in games)
        grace_ends = await self.grace_ends(round_no)
        out = []
        for g in sorted(games, key=lambda g: (board_number(str(g["board"])) or 10**6, g["board"])):
            board = str(g["board"])
            number = board_number(board)
            both = (*tags.get(g["red"], ()), *tags.get(g["black"], ()))
            if not rule.required(board=number, tags=both):
                continue
            game = str(g["game"])
            record = records.get(game) or {}
            plies, count = int(record.get("ply") or 0), presses.get(game, 0)
            outcome = derive_game(events[game], self.regulation)
            unplayed = count == 0 and plies == 0 and outcome.decided
            if outcome.outcome == "double_forfeit" or unplayed:
                continue  # decided without play: there are no moves to record
            responsible = None
            if outcome.decided and outcome.outcome in ("red", "black", "draw"):
                winner = None if outcome.outcome == "draw" else Side(outcome.outcome)
                responsible = rule.responsible(winner=winner)
            recorded = None
            # complete only with the game: a record ahead of a game in play is not yet recorded
            if plies >= max(count, 1) and outcome.decided:
                recorded = _recorded_ms(await store.record_rows.record_edits(game), max(count, 1))
                recorded = recorded if recorded is not None else int(record["updated_ms"])
            if plies:
                pairing = await self._pairing(game, record)
            else:  # nothing recorded: no move to pair
                pairing = Pairing(clocks=(), moves=0, presses=count, disagreement=None)
            consent = None
            if record.get("consent_by"):
                consent = {"by": record["consent_by"], "ms": record["consent_ms"]}
            state = record_state(
                recorded_at=recorded,
                grace_ends=grace_ends,
                now=now,
                consent=consent is not None and rule.chief_consent,
            )
            out.append(
                GameDuty(
                    game=game,
                    board=board,
                    round=round_no,
                    red=str(g["red"]),
                    black=str(g["black"]),
                    because="top" if 1 <= number <= rule.top_boards else "tag",
                    responsible=responsible,
                    state=state,
                    plies=plies,
                    presses=count,
                    pairing=pairing,
                    recorded_ms=recorded,
                    consent=consent,
                    alert=alerts.get(game),
                )
            )
        return out

    async def _knockout(self, round_no: int | None) -> list[dict[str, Any]]:
        return [] if self._knockout_rows is None else await self._knockout_rows(round_no)

    async def grace_ends(self, round_no: int) -> int | None:
        """When the grace of ``round_no``'s records ends: the next round's start (None: it
        has not started)."""
        nxt = round_no + 1
        if nxt not in self._starts:
            known = max(self._starts, default=0)
            self._starts.update(await self._store().duties.round_starts(after=known))
        return self._starts.get(nxt)

    # -- the grace's end ----------------------------------------------------------------------
    async def sweep(self, *, now: int | None = None) -> list[int]:
        """Raise the pending foul of every required record whose grace has ended and which is
        missing (or only late); the ids of the alerts raised. Cheap when nothing changed."""
        if self.rule is None:
            return []
        now = wall_ms() if now is None else now
        known = max(self._starts, default=0)
        self._starts.update(await self._store().duties.round_starts(after=known))
        raised: list[int] = []
        async with self.lock:
            for round_no in sorted(self._starts):
                ends = self._starts.get(round_no + 1)
                if round_no in self._done_rounds or ends is None or now < ends:
                    continue
                open_games = 0
                for duty in await self.round_duties(round_no, now=now):
                    if duty.game in self._settled:
                        continue
                    if duty.alert is not None or duty.state in (
                        RecordState.RECORDED,
                        RecordState.ALLOWED,
                    ):
                        self._settled.add(duty.game)
                        continue
                    if duty.responsible is None:  # no result yet: once it has one
                        open_games += 1
                        continue
                    if duty.state.foul_due:
                        alert_id = self._raise(self._spec(duty, ends, now))
                        self._settled.add(duty.game)
                        if alert_id is not None:
                            raised.append(alert_id)
                            log.info(
                                "record of %s %s at the grace's end: pending %s against %s",
                                duty.game, duty.state, self.rule.foul, duty.responsible,
                            )  # fmt: skip
                if open_games == 0:
                    self._done_rounds.add(round_no)
        if raised:
            self.raised += len(raised)
            await self._flush()
        return raised

    def _spec(self, duty: GameDuty, ends: int, now: int) -> AlertSpec:
        assert duty.responsible is not None and self.rule is not None
        side = duty.responsible.value
        return AlertSpec(
            f"rec:{duty.game}",
            RECORD_ALERT,
            duty.board,
            now,
            game=duty.game,
            side=side,
            detail={
                "reason": self.rule.foul,
                "status": "pending",
                "player": getattr(duty, side),
                "round": duty.round,
                "state": duty.state.value,
                "grace_ends_ms": ends,
                "plies": duty.plies,
                "presses": duty.presses,
            },
        )

    async def run(self, every_s: float = 1.0) -> None:
        """Sweep every ``every_s`` (a supervised task): the next round's start is seen within
        about that long after its first ``started`` event is stored."""
        while True:
            await self.sweep()
            await asyncio.sleep(every_s)

    # -- the chief's consent ------------------------------------------------------------------
    async def consent(self, game: str, *, allow: bool, by: str | None) -> GameDuty:
        """The chief allows a later or no record of ``game`` (``allow=False``: withdraws it
        while the grace runs). Raises ``DutyRefused``."""
        rule = self.rule
        if rule is None or not rule.chief_consent:
            raise DutyRefused(
                409,
                "no_consent_rule",
                f"{self.regulation.name}: the regulation gives the chief no consent to a later "
                "or no record; dismiss the pending foul instead",
            )
        store = self._store()
        row = await store.game(game)
        if row is None:  # a knockout game (Meishan)
            row = next((r for r in await self._knockout(None) if r["game"] == game), None)
        if row is None:
            raise DutyRefused(404, "no_game", f"no game {game!r}", game=game)
        round_no = int(row["round"])
        async with self.lock:
            duty = next((d for d in await self.round_duties(round_no) if d.game == game), None)
            if duty is None:
                raise DutyRefused(
                    409, "record_not_required", f"game {game} needs no record", game=game
                )
            alert = duty.alert
            if alert is not None and alert["status"] not in ACTIVE:
                raise DutyRefused(
                    409,
                    "already_ruled",
                    f"the foul of {game} is {alert['status']} already",
                    status=alert["status"],
                    by=alert.get("by") or "",
                )
            if not allow and await self._grace_over(round_no):
                raise DutyRefused(
                    409, "grace_over", f"the grace of round {round_no} is over", game=game
                )
            stored = await store.record_rows.record(game)
            await store.record_rows.set_record_consent(
                game=game,
                board=str(row["board"]),
                round=round_no,
                start_fen=str(stored["start_fen"]) if stored else START_FEN,
                by=by,
                consent=allow,
            )
            if allow and alert is not None:
                cleared = await change_alert(
                    store.engine,
                    int(alert["id"]),
                    status="cleared",
                    detail_add={"cleared": "consent", "consent_by": by},
                )
                if cleared is not None:
                    self.hub.publish("alert", {"alert": cleared})
            log.info("record of %s: consent %s by %s", game, "given" if allow else "withdrawn", by)
            if allow:
                self._settled.add(game)
            else:
                self._settled.discard(game)
                self._done_rounds.discard(round_no)
            return next(d for d in await self.round_duties(round_no) if d.game == game)

    async def _grace_over(self, round_no: int) -> bool:
        ends = await self.grace_ends(round_no)
        return ends is not None and wall_ms() >= ends
