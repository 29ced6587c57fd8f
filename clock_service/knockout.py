"""The knockout after the Swiss rounds (Meishan): semi-finals 1v4 and 2v3, then a final and a
third-place game; colours by lot; a drawn slow game is followed by one rapid tie-break game on
the same board where a draw counts as a win for black (和棋黑胜), the slow game's black choosing.

A pure state machine. The station asks :meth:`Knockout.propose_next` for the games to offer,
the arbiter confirms each (:meth:`Knockout.confirm` with the board), the boards are set over
MQTT by the station, and results come back through :meth:`Knockout.record`. The lot is an
injected ``random.Random``, and every draw is kept in :attr:`Knockout.lots`.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Sequence

from clock_service.errors import ClockServiceError
from clock_service.regulation import Regulation
from clock_service.side import Side
from clock_service.standings import Standing

__all__ = [
    "ColourChoice",
    "Knockout",
    "KnockoutError",
    "Lot",
    "Placing",
    "ProposedGame",
    "Stage",
    "merge_standings",
]


class KnockoutError(ClockServiceError, ValueError):
    """A knockout call that does not fit the state or the profile; the message says why."""


class Stage(enum.Enum):
    SEMI_FINAL = "semi_final"
    FINAL = "final"
    THIRD_PLACE = "third_place"

    @property
    def zh(self) -> str:
        return {"semi_final": "半决赛", "final": "决赛", "third_place": "三四名决赛"}[self.value]

    @property
    def en(self) -> str:
        return {"semi_final": "Semi-final", "final": "Final", "third_place": "Third place"}[
            self.value
        ]

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class ProposedGame:
    """A game for the arbiter to confirm; ``board`` is None until confirmed (a tie-break game
    is proposed on its slow game's board). ``draw_winner`` is for the board's referee."""

    id: str
    stage: Stage
    red: str
    black: str
    tc: str  # time control text, e.g. "30m+5s" or "10m+3s"
    tiebreak: bool
    board: str | None = None
    draw_winner: Side | None = None

    def __repr__(self) -> str:
        extra = " tie-break" if self.tiebreak else ""
        return f"<ProposedGame {self.id} {self.red}-{self.black} {self.tc}{extra} @{self.board}>"


@dataclasses.dataclass(frozen=True)
class Lot:
    """How one game's colours were decided: ``method`` "lot" (抽签) or "choice" (by chooser)."""

    game_id: str
    red: str
    black: str
    method: str
    chooser: str | None = None


@dataclasses.dataclass(frozen=True)
class ColourChoice:
    """A tie-break game waiting for ``chooser`` (the slow game's black) to pick a colour."""

    slow_game_id: str
    chooser: str
    opponent: str


@dataclasses.dataclass(frozen=True)
class Placing:
    place: int
    player: str


@dataclasses.dataclass
class _Game:
    id: str
    stage: Stage
    red: str
    black: str
    tc: str
    tiebreak: bool
    board: str | None = None
    result: Side | None = None  # the winner once recorded (a tie-break draw already resolved)
    drawn: bool = False


@dataclasses.dataclass
class _Match:
    id: str  # also the slow game's id
    stage: Stage
    seeds: tuple[str, str]
    winner: str | None = None
    loser: str | None = None
    awaiting_choice: bool = False


class Knockout:
    """The knockout of one event; build it with :meth:`start`."""

    def __init__(self, regulation: Regulation, top: Sequence[str], lot: random.Random) -> None:
        rules = regulation.knockout
        if rules is None:
            raise KnockoutError(f"{regulation.name}: the regulation has no knockout")
        if rules.players != 4 or sorted(p for pair in rules.pairings for p in pair) != [1, 2, 3, 4]:
            raise KnockoutError(f"{regulation.name}: only a 4-player knockout is supported")
        if rules.colours != "lot":
            raise KnockoutError(f"{regulation.name}: knockout colours {rules.colours!r} unknown")
        if rules.tiebreak is not None and rules.tiebreak.colour_choice != "slow_game_black":
            choice = rules.tiebreak.colour_choice
            raise KnockoutError(f"{regulation.name}: tie-break colour_choice {choice!r} unknown")
        if len(top) != rules.players or len(set(top)) != len(top):
            raise KnockoutError(f"need {rules.players} distinct players in order, got {top!r}")
        self.regulation = regulation
        self.top = tuple(top)
        self._lot = lot
        self._slow_tc = regulation.time_control_text
        self._tiebreak = rules.tiebreak
        self._games: dict[str, _Game] = {}
        self._matches: dict[str, _Match] = {}
        self._lots: list[Lot] = []
        for i, (a, b) in enumerate(rules.pairings, start=1):
            self._open(f"ko-sf{i}", Stage.SEMI_FINAL, (top[a - 1], top[b - 1]))

    @classmethod
    def start(
        cls,
        standings_top4: Sequence[Standing | str],
        lot: random.Random,
        *,
        regulation: Regulation,
    ) -> Knockout:
        """Open the semi-finals from the standings after ``knockout.after_round`` (rows in rank
        order, or names), drawing their colours from ``lot``."""
        names = [s if isinstance(s, str) else s.player for s in standings_top4]
        return cls(regulation, names, lot)

    # -- the station's view ------------------------------------------------------------------
    @property
    def lots(self) -> tuple[Lot, ...]:
        return tuple(self._lots)

    @property
    def finished(self) -> bool:
        return len(self.placings()) == len(self.top)

    def propose_next(self) -> list[ProposedGame]:
        """The games that can be played now and have no result yet, in order."""
        return [self._proposal(g) for g in self._games.values() if g.result is None and not g.drawn]

    def pending_choices(self) -> list[ColourChoice]:
        out = []
        for m in self._matches.values():
            if m.awaiting_choice:
                slow = self._games[m.id]
                out.append(ColourChoice(m.id, chooser=slow.black, opponent=slow.red))
        return out

    def game(self, game_id: str) -> ProposedGame:
        if game_id not in self._games:
            raise KnockoutError(f"{game_id!r}: no such knockout game")
        return self._proposal(self._games[game_id])

    def placings(self) -> list[Placing]:
        out: list[Placing] = []
        for m, first in ((self._matches.get("ko-f"), 1), (self._matches.get("ko-3"), 3)):
            if m is not None and m.winner is not None and m.loser is not None:
                out += [Placing(first, m.winner), Placing(first + 1, m.loser)]
        return sorted(out, key=lambda p: p.place)

    # -- the arbiter's inputs ----------------------------------------------------------------
    def confirm(self, game_id: str, *, board: str) -> ProposedGame:
        """The arbiter confirmed the game on ``board``; returns it for the station to set."""
        g = self._get(game_id)
        if g.result is not None:
            raise KnockoutError(f"{game_id}: already played")
        if not isinstance(board, str) or not board:
            raise KnockoutError(f"{game_id}: board {board!r} is not a board id")
        g.board = board
        return self._proposal(g)

    def record(self, game_id: str, result: str | Side | None) -> list[ProposedGame]:
        """Record a result ("red", "black", "draw"/None, "double_forfeit", or a Side); returns
        the newly proposed
        games (the final and third-place game once both semi-finals are decided)."""
        g = self._get(game_id)
        if g.result is not None:
            raise KnockoutError(f"{game_id}: result already recorded ({g.result})")
        winner = self._winner(g, result)
        match = self._matches[g.id.removesuffix("-tb")]
        if winner is None:  # a drawn slow game with a tie-break to come
            if self._tiebreak is None:
                raise KnockoutError(f"{game_id}: drawn, but the profile has no tie-break game")
            g.drawn = True
            match.awaiting_choice = True
            return []
        g.result = winner
        match.winner = g.red if winner is Side.RED else g.black
        match.loser = g.black if winner is Side.RED else g.red
        return self._advance()

    def choose_colour(self, slow_game_id: str, chooser_plays: Side | str) -> ProposedGame:
        """The slow game's black chose his colour for the tie-break game; opens that game on
        the slow game's board."""
        match = self._matches.get(slow_game_id)
        if match is None or not match.awaiting_choice:
            raise KnockoutError(f"{slow_game_id}: no tie-break colour choice is pending")
        try:
            side = chooser_plays if isinstance(chooser_plays, Side) else Side.parse(chooser_plays)
        except ValueError as exc:
            raise KnockoutError(f"{slow_game_id}: {exc}") from None
        slow = self._games[slow_game_id]
        chooser, other = slow.black, slow.red
        red, black = (chooser, other) if side is Side.RED else (other, chooser)
        assert self._tiebreak is not None
        tb = _Game(f"{slow.id}-tb", slow.stage, red, black, self._tiebreak.time_control_text, True)
        tb.board = slow.board
        self._games[tb.id] = tb
        self._lots.append(Lot(tb.id, red, black, "choice", chooser))
        match.awaiting_choice = False
        return self._proposal(tb)

    # -- internals ---------------------------------------------------------------------------
    def _get(self, game_id: str) -> _Game:
        g = self._games.get(game_id)
        if g is None:
            raise KnockoutError(f"{game_id!r}: no such knockout game (have {list(self._games)})")
        if g.drawn:
            raise KnockoutError(f"{game_id}: drawn; its tie-break game decides the match")
        return g

    def _winner(self, g: _Game, result: str | Side | None) -> Side | None:
        if isinstance(result, Side):
            return result
        if result == "double_forfeit":
            return self._double_forfeit_winner(g)
        if result not in ("red", "black", "draw", None):
            raise KnockoutError(f"{g.id}: result {result!r} is not red, black or draw")
        if result in ("red", "black"):
            return Side(result)
        if not g.tiebreak:
            return None
        assert self._tiebreak is not None
        if self._tiebreak.draw_winner is None:
            raise KnockoutError(f"{g.id}: a drawn tie-break game needs the arbiter's decision")
        return self._tiebreak.draw_winner  # 和棋黑胜

    def _double_forfeit_winner(self, g: _Game) -> Side:
        """Both sides forfeited: a match needs a winner, so the profile decides (default: the
        player placed higher after the Swiss rounds goes through)."""
        rules = self.regulation.knockout
        assert rules is not None
        if rules.double_forfeit != "higher_seed":
            raise KnockoutError(f"{g.id}: a double forfeit needs the arbiter's decision")
        return Side.RED if self.top.index(g.red) < self.top.index(g.black) else Side.BLACK

    def _open(self, match_id: str, stage: Stage, seeds: tuple[str, str]) -> None:
        # The higher seed's colour is drawn; the draw is recorded so it can be announced.
        if self._lot.random() < 0.5:
            red, black = seeds
        else:
            black, red = seeds
        self._matches[match_id] = _Match(match_id, stage, seeds)
        self._games[match_id] = _Game(match_id, stage, red, black, self._slow_tc, False)
        self._lots.append(Lot(match_id, red, black, "lot"))

    def _advance(self) -> list[ProposedGame]:
        semis = [m for m in self._matches.values() if m.stage is Stage.SEMI_FINAL]
        if "ko-f" in self._matches or any(m.winner is None for m in semis):
            return []
        w1, w2 = (m.winner for m in semis)
        l1, l2 = (m.loser for m in semis)
        assert w1 and w2 and l1 and l2
        self._open("ko-f", Stage.FINAL, (w1, w2))
        self._open("ko-3", Stage.THIRD_PLACE, (l1, l2))
        return [self._proposal(self._games["ko-f"]), self._proposal(self._games["ko-3"])]

    def _proposal(self, g: _Game) -> ProposedGame:
        draw_winner = self._tiebreak.draw_winner if g.tiebreak and self._tiebreak else None
        return ProposedGame(g.id, g.stage, g.red, g.black, g.tc, g.tiebreak, g.board, draw_winner)

    def __repr__(self) -> str:
        return f"<Knockout {' '.join(self.top)} placings={len(self.placings())}>"


def merge_standings(standings: Sequence[Standing], placings: Sequence[Placing]) -> list[Standing]:
    """The final list: the knockout's placings first (1–4), then everybody else in their
    Swiss order, ranked from 5 (shared places stay shared)."""
    placed = {p.player: p.place for p in placings}
    by_name = {s.player: s for s in standings}
    missing = [name for name in placed if name not in by_name]
    if missing:
        raise KnockoutError(f"placings name players not in the standings: {missing}")
    out: list[Standing] = []
    for p in sorted(placings, key=lambda p: p.place):
        s = by_name[p.player]
        zh, en = f"淘汰赛第{p.place}名", f"knockout place {p.place}"
        # No Swiss criterion separates the four any more: decided_by None, so no row below
        # borrows a Swiss reason from them.
        out.append(
            dataclasses.replace(
                s,
                rank=p.place,
                event_rank=p.place,  # the final list is the whole event's: one place
                shared=False,
                reason_zh=zh,
                reason_en=en,
                decided_by=None,
                dropped_rounds=0,
                knockout_place=p.place,
            )
        )
    offset = len(out)
    rest = [s for s in standings if s.player not in placed]
    for i, s in enumerate(rest):
        shares_above = i > 0 and s.shared and rest[i - 1].rank == s.rank
        rank = out[-1].rank if shares_above else offset + i + 1
        out.append(dataclasses.replace(s, rank=rank, event_rank=rank))
    return out
