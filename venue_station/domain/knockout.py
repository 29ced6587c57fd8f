"""The knockout at the station (Meishan), its domain half: the stored record, replayed.

The state machine is ``clock_service.knockout.Knockout`` (pure). The station keeps only what it
needs to rebuild it: the lot's seed, the four players and every input in order (confirm,
record, colour choice) as one JSON document in the ``meta`` table (key ``knockout``). Every
request replays it, so a station restart loses nothing and the lots come out the same.

Results come from the stored events of the knockout's game ids (``ko-sf1`` …, a tie-break game
``…-tb``) once the game is confirmed on a board, by the one outcome function (confirmed only);
the arbiter can also enter one by hand. Each result read from the events is appended to the
inputs, so the record says where it came from; a board's result put right later is followed
(``KnockoutDesk._follow``) while nothing that came of it has been done.

It starts only after the Swiss part it follows (Meishan: 七轮后前4名进入淘汰赛):
``swiss_unfinished`` says why not yet — a game of rounds 1..N without a confirmed result, or a
round not paired — as a code and arguments the arbiter page translates.

``KnockoutDesk`` is the station's one keeper of it (``Station.knockout``): its lock makes each
change one read-apply-save. The routes are ``knockout_flow.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from clock_service.knockout import Knockout, KnockoutError, Placing, ProposedGame, Stage
from clock_service.regulation import Regulation
from venue_station.live.results import Outcome, derive_game
from wire_contract.wallclock import wall_ms

if TYPE_CHECKING:
    from venue_station.live.fanout import EventFanout
    from venue_station.store.database import Store

__all__ = [
    "META_KEY",
    "KnockoutDesk",
    "KnockoutRecord",
    "NotReady",
    "game_json",
    "game_rows",
    "swiss_unfinished",
    "view",
]

log = logging.getLogger(__name__)
META_KEY = "knockout"
SHOWN_BOARDS = 10  # a refusal names this many boards still playing, then "…"


@dataclasses.dataclass(frozen=True)
class NotReady:
    """Why the knockout cannot start yet: ``code`` (``swiss_unfinished``, ``swiss_unpaired``)
    and ``args`` for the page to put in words, ``message`` the English for logs and tools."""

    code: str
    message: str
    args: dict[str, Any]


def swiss_unfinished(
    games: Iterable[tuple[Mapping[str, Any], Outcome]], after_round: int
) -> NotReady | None:
    """None once every game of rounds 1..``after_round`` has a confirmed result (a proposal
    still pending does not count) and each of those rounds is paired; else why not, naming
    the first round with games still undecided (its boards), or else the rounds not paired."""
    paired: set[int] = set()
    undecided: dict[int, list[str]] = {}
    for game, outcome in games:
        round_no = int(game["round"])
        if round_no > after_round:
            continue
        paired.add(round_no)
        if not outcome.decided:
            undecided.setdefault(round_no, []).append(str(game["board"]))
    unpaired = [r for r in range(1, after_round + 1) if r not in paired]
    later = f"; round(s) {', '.join(map(str, unpaired))} not paired yet" if unpaired else ""
    rounds = f"rounds 1-{after_round}" if after_round > 1 else "round 1"
    if undecided:
        round_no = min(undecided)
        boards = undecided[round_no]
        shown = boards[:SHOWN_BOARDS] + (["…"] if len(boards) > SHOWN_BOARDS else [])
        return NotReady(
            "swiss_unfinished",
            f"the knockout starts after round {after_round}, once every game of {rounds} is "
            f"decided: round {round_no} has {len(boards)} game(s) without "
            f"a confirmed result (board(s) {', '.join(shown)}){later}",
            {"after_round": after_round, "round": round_no, "count": len(boards), "boards": shown},
        )
    if unpaired:
        return NotReady(
            "swiss_unpaired",
            f"the knockout starts after round {after_round}, once every game of {rounds} is "
            f"decided{later}",
            {"after_round": after_round, "round": unpaired[0], "rounds": unpaired},
        )
    return None


class KnockoutRecord:
    """The stored document and the Knockout replayed from it."""

    def __init__(self, doc: dict[str, Any], knockout: Knockout) -> None:
        self.doc = doc
        self.ko = knockout

    @classmethod
    def replay(cls, regulation: Regulation, doc: dict[str, Any]) -> KnockoutRecord:
        ko = Knockout.start(doc["top"], random.Random(doc["seed"]), regulation=regulation)
        for step in doc["inputs"]:
            op = step["op"]
            if op == "confirm":
                ko.confirm(step["game"], board=step["board"])
            elif op == "record":
                ko.record(step["game"], step["result"])
            elif op == "choose":
                ko.choose_colour(step["game"], step["side"])
            else:
                raise KnockoutError(f"stored knockout: unknown input {op!r}")
        return cls(doc, ko)

    def apply(self, step: dict[str, Any]) -> Any:
        """Apply one new input (raises ``KnockoutError`` and changes nothing when refused)."""
        op = step["op"]
        if op == "confirm":
            out: Any = self.ko.confirm(step["game"], board=step["board"])
        elif op == "record":
            out = self.ko.record(step["game"], step["result"])
        else:
            out = self.ko.choose_colour(step["game"], step["side"])
        self.doc["inputs"].append(step)
        return out

    def results(self) -> dict[str, dict[str, Any]]:
        return {s["game"]: s for s in self.doc["inputs"] if s["op"] == "record"}

    def game_ids(self) -> list[str]:
        """Every game opened so far, in the order they appeared."""
        ids: list[str] = []
        for lot in self.ko.lots:
            if lot.game_id not in ids:
                ids.append(lot.game_id)
        return ids


def beside_round(after_round: int, stage: Stage) -> int:
    """The Swiss round a knockout game is played beside (its 录谱 duties, its round's PGN and
    wall sheet): the semi-finals (and their tie-breaks) the round after the knockout's start,
    the final and the third-place game the one after that."""
    return after_round + (1 if stage is Stage.SEMI_FINAL else 2)


def game_json(
    p: ProposedGame,
    result: dict[str, Any] | None,
    drawn: bool,
    *,
    after_round: int,
    confirmed: bool = False,
) -> dict[str, Any]:
    """One game; ``confirmed``: an arbiter confirmed it onto ``board`` (a tie-break game is
    proposed with its slow game's board before anyone confirms it)."""
    return {
        "id": p.id,
        "stage": p.stage.value,
        "stage_zh": p.stage.zh,
        "red": p.red,
        "black": p.black,
        "tc": p.tc,
        "tiebreak": p.tiebreak,
        "board": p.board,
        "round": beside_round(after_round, p.stage),
        "draw_winner": None if p.draw_winner is None else p.draw_winner.value,
        "result": None if result is None else result["result"],
        "result_source": None if result is None else result.get("source"),
        "drawn": drawn,
        "confirmed": confirmed,
    }


def stage_tag(g: ProposedGame) -> str:
    """The knockout game's stage as its PGN says it (``[Stage "Semi-final tie-break"]``): its
    ``Round`` is the Swiss round it is played beside, which alone read as a Swiss game."""
    return g.stage.en + (" tie-break" if g.tiebreak else "")


def game_rows(rec: KnockoutRecord | None) -> dict[str, dict[str, Any]]:
    """The knockout's games put on a board, as rows of the games table (the Swiss rounds'):
    for the game's exports and its record (录谱: the top boards are recorded). Its round is the
    Swiss round it is played beside (``beside_round``)."""
    if rec is None:
        return {}
    after = int(rec.doc["after_round"])
    out: dict[str, dict[str, Any]] = {}
    for step in rec.doc["inputs"]:
        if step["op"] != "confirm":
            continue
        g = rec.ko.game(step["game"])
        out[g.id] = {
            "game": g.id, "round": beside_round(after, g.stage),
            "board": str(step["board"]), "red": g.red, "black": g.black, "tc": g.tc,
            "winner": None, "result": None, "reason": None, "updated_ms": 0,
            "stage": stage_tag(g),
        }  # fmt: skip
    return out


def view(rec: KnockoutRecord | None) -> dict[str, Any]:
    if rec is None:
        return {"started": False}
    ko, results = rec.ko, rec.results()
    after = int(rec.doc["after_round"])
    proposed = ko.propose_next()
    confirmed = {s["game"] for s in rec.doc["inputs"] if s["op"] == "confirm"}
    games = []
    for gid in rec.game_ids():
        res = results.get(gid)
        drawn = res is not None and res["result"] == "draw" and not gid.endswith("-tb")
        games.append(
            game_json(ko.game(gid), res, drawn, after_round=after, confirmed=gid in confirmed)
        )
    return {
        "started": True,
        "after_round": rec.doc["after_round"],
        "seed": rec.doc["seed"],
        "top": rec.doc["top"],
        "started_by": rec.doc.get("by"),
        "started_ms": rec.doc.get("started_ms"),
        "games": games,
        "proposed": [
            game_json(p, None, False, after_round=after, confirmed=p.id in confirmed)
            for p in proposed
        ],
        "pending_choices": [
            {"game": c.slow_game_id, "chooser": c.chooser, "opponent": c.opponent}
            for c in ko.pending_choices()
        ],
        "lots": [
            {
                "game": lot.game_id,
                "red": lot.red,
                "black": lot.black,
                "method": lot.method,
                "chooser": lot.chooser,
            }
            for lot in ko.lots
        ],
        "placings": [{"place": p.place, "player": p.player} for p in ko.placings()],
        # a game whose board's result changed after games came of it: the chief settles it
        "conflicts": [
            {"game": g, "now": now, "recorded": (rec.results().get(g) or {}).get("result")}
            for g, now in sorted((rec.doc.get("conflicts") or {}).items())
        ],
        "finished": ko.finished,
    }


class KnockoutDesk:
    """The station's knockout: load, bring up to date from the boards' results, save. Hold
    ``lock`` around a read-apply-save, so two arbiters acting at once cannot lose an input."""

    def __init__(
        self, store: Callable[[], Store], hub: EventFanout, regulation: Regulation
    ) -> None:
        self._store = store  # the station's, once started
        self.hub = hub
        self.regulation = regulation
        self.lock = asyncio.Lock()

    async def load(self) -> KnockoutRecord | None:
        text = await self._store().get_meta(META_KEY)
        if text is None:
            return None
        return KnockoutRecord.replay(self.regulation, json.loads(text))

    def start(self, doc: dict[str, Any]) -> KnockoutRecord:
        """A new record (not saved yet; raises ``KnockoutError`` when refused)."""
        return KnockoutRecord.replay(self.regulation, doc)

    async def save(self, rec: KnockoutRecord) -> None:
        await self._store().set_meta(META_KEY, json.dumps(rec.doc, ensure_ascii=False))
        self.hub.publish("knockout", {"knockout": view(rec)})

    async def sync(self, rec: KnockoutRecord) -> bool:
        """Record the results the boards reported for confirmed, undecided games, and follow a
        board's result put right since it was recorded; True if anything changed."""
        open_games = [p for p in rec.ko.propose_next() if p.board is not None]
        followed = [g for g, s in rec.results().items() if s.get("source") == "events"]
        if not open_games and not followed:
            return False
        asked = [*(p.id for p in open_games), *followed]
        events = await self._store().reads.decisive_events(asked)
        changed = False
        for game in followed:
            changed |= self._follow(rec, game, derive_game(events[game], self.regulation))
        for p in open_games:
            outcome = derive_game(events[p.id], self.regulation)
            if outcome.decided:
                result = outcome.outcome  # red | black | draw | double_forfeit (the profile)
                step = {"op": "record", "game": p.id, "result": result, "source": "events"}
                try:
                    rec.apply({**step, "ts": wall_ms()})
                except KnockoutError as exc:  # e.g. a drawn tie-break game in a "none" profile
                    log.warning("knockout %s: the board's result needs the arbiter: %s", p.id, exc)
                    continue
                changed = True
        return changed

    def _follow(self, rec: KnockoutRecord, game: str, outcome: Outcome) -> bool:
        """The game's result on its board changed since the knockout recorded it (a foul taken
        back, a result replaced): the knockout follows — the new result, or none while the
        game goes on — as long as no game that came of the old one has had anything done to
        it. Otherwise it keeps the old one and says so (``conflicts`` of the view) for the
        chief to settle; True if the record changed."""
        inputs = rec.doc["inputs"]
        at = next(i for i, s in enumerate(inputs) if s["op"] == "record" and s["game"] == game)
        old = inputs[at]["result"]
        new = outcome.outcome if outcome.decided else None
        conflicts = rec.doc.setdefault("conflicts", {})
        if new == old:
            return bool(conflicts.pop(game, "none") != "none")  # put back as it was: no conflict
        before = KnockoutRecord.replay(self.regulation, {**rec.doc, "inputs": inputs[:at]})
        known = set(before.game_ids())
        later = inputs[at + 1 :]
        step = [{**inputs[at], "result": new, "was": old, "ts": wall_ms()}] if new else []
        doc = {**rec.doc, "inputs": [*inputs[:at], *step, *later]}
        try:
            if any(s["game"] not in known for s in later):
                raise KnockoutError("a game that came of its result has been played on")
            followed = KnockoutRecord.replay(self.regulation, doc)
        except KnockoutError as exc:
            if game in conflicts and conflicts[game] == new:
                return False  # said already
            log.warning("knockout %s: its board now says %s, recorded %s: %s", game, new, old, exc)
            conflicts[game] = new
            return True
        log.warning("knockout %s: its board's result is now %s (was %s)", game, new, old)
        conflicts.pop(game, None)
        rec.doc, rec.ko = followed.doc, followed.ko
        return True

    async def game_row(self, game: str) -> dict[str, Any] | None:
        """The knockout game ``game`` put on a board, as a games-table row (``game_rows``)."""
        if not game.startswith("ko-"):
            return None
        return game_rows(await self.load()).get(game)

    async def rows_of_round(self, round_no: int | None) -> list[dict[str, Any]]:
        """The knockout's games put on a board, as games-table rows, of the Swiss round they
        are played beside (all: None): the 录谱 duties take them with that round's."""
        rows = game_rows(await self.load()).values()
        return [r for r in rows if round_no is None or r["round"] == round_no]

    async def boards_in_play(self) -> tuple[int | None, dict[str, str]]:
        """The knockout's ``after_round`` (None: no knockout) and the boards it plays on (board
        -> game): its confirmed, undecided games', and until it is finished every board it has
        used; a Swiss round imported beside them keeps off."""
        async with self.lock:
            rec = await self.current()
        if rec is None:
            return None, {}
        steps = [s for s in rec.doc["inputs"] if s["op"] == "confirm"]
        confirmed = {s["game"] for s in steps}
        held = {
            str(p.board): p.id
            for p in rec.ko.propose_next()
            if p.board is not None and p.id in confirmed
        }
        if not rec.ko.finished:
            # the knockout's next games (the final, the third-place game) go where its earlier
            # ones were: round 9 imported before them took boards 1–6 and left the final 7 and
            # 8 (an outsider chief); its boards stay the knockout's until it is finished
            for step in steps:
                held.setdefault(str(step["board"]), str(step["game"]))
        return int(rec.doc["after_round"]), held

    async def placings(self) -> list[Placing] | None:
        """The finished knockout's places 1–4 (None: no knockout, or not finished yet)."""
        async with self.lock:
            rec = await self.current()
        return list(rec.ko.placings()) if rec is not None and rec.ko.finished else None

    async def current(self) -> KnockoutRecord | None:
        """The record brought up to date (saved when the boards reported a result); hold
        ``lock``."""
        rec = await self.load()
        if rec is not None and await self.sync(rec):
            await self.save(rec)
        return rec
