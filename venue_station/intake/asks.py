"""What each decision command asked, and whether an event says it (issue 27, docs/security.md).

A node receives every command the station sends it, so it knows every txn before using it:
the txn alone proves nothing. What protects is the binding to the asked outcome. The station
keeps, for each decision command it sent (``result``, ``resolve``, ``foul``), what it asked:

- ``result`` {winner, reason}: one confirmed ``result`` with that winner and reason (in a
  tie-break game a draw becomes the profile's draw winner, as the node's referee makes it);
- ``foul`` {side, reason}: one confirmed ``foul`` of that side and reason;
- ``resolve`` {seq S, status}: the one event that settles proposal S (its ``ref``) with that
  status, of the proposal's type, side, winner and reason as the station stored them.
- ``withdraw`` {seq S}: the one ``foul`` ``dismissed`` with ``ref`` S, of the side and reason
  of the confirmed foul S (its own report, or the proposal a ruling confirmed). A loss by fouls
  it completed that the fouls left no longer reach follows: that forfeit dismissed, and the
  result it made dismissed when it is the game's latest. Or the one ``result`` ``dismissed``
  with ``ref`` S, S the result that stands (taken back: the referee's ``_take_back_result``):
  every other confirmed result, a 0:0 still proposed and every confirmed forfeit, dismissed,
  follow.

An event decides only when it carries such a txn, of a command to its own board, says what the
command asked, and that txn has not decided it already (the same event again is the same
decision: a replay). Then what the regulation makes follow from it, as the station counts it
itself, is allowed under the same txn, once each: a confirmed foul that reaches the limit
(``fouls.forfeit_at``, or a reason's own count) brings its forfeit; a ruled forfeit brings the
result it makes (the other side wins, or both lose after two confirmed forfeits). Every other
txn (``rebirth``, ``set_game``, ``start``, ``clock_probe``...) decides nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clock_service.regulation import Regulation

__all__ = ["DECISION_COMMANDS", "Asks"]

DECISION_COMMANDS = frozenset({"result", "resolve", "foul", "withdraw"})
DOUBLE_FORFEIT = "double_forfeit"
_OTHER = {"red": "black", "black": "red"}
_IDENTITY = {
    "foul": ("side", "reason"),
    "forfeit": ("side", "reason"),
    "result": ("winner", "reason"),
}
EventKey = tuple[str, int, int]  # board, session, seq


@dataclass(frozen=True)
class Expect:
    """One decision a txn may still make: its type, status, ``ref`` and identifying fields."""

    type: str
    status: str
    ref: int | None
    fields: tuple[tuple[str, Any], ...]

    def met_by(self, type_: str, data: Mapping[str, Any]) -> bool:
        return (
            type_ == self.type
            and data.get("status", "confirmed") == self.status
            and data.get("ref") == self.ref
            and all(data.get(k) == v for k, v in self.fields)
        )


@dataclass
class _Ask:
    cmd: str
    board: str
    args: dict[str, Any]
    by: str | None = None  # who sent it (the web account)
    primary_done: bool = False
    follows: list[Expect] = field(default_factory=list)  # what the regulation makes follow
    decided: set[EventKey] = field(default_factory=set)  # the events it decided (replays)


@dataclass
class _Proposal:
    game: str | None
    type: str
    data: dict[str, Any]


@dataclass
class _Game:
    fouls: Counter[str] = field(default_factory=Counter)  # side -> confirmed fouls
    reason_fouls: Counter[tuple[str, str]] = field(default_factory=Counter)
    forfeits: dict[str, tuple[str, str]] = field(default_factory=dict)  # side -> status, reason
    finished: bool = False
    tiebreak: bool = False


class Asks:
    def __init__(self, regulation: Regulation | None = None) -> None:
        self.regulation = regulation
        self._asks: dict[str, _Ask] = {}
        self._proposals: dict[tuple[str, int], _Proposal] = {}  # (board, seq) -> pending
        self._games: dict[str, _Game] = {}
        # Every event decided, as the station publishes it to the hub (wire ``Decision``
        # without its ``ts``); ``on_decided`` is told of each new one.
        self.decided: dict[EventKey, dict[str, Any]] = {}
        self.on_decided: Callable[[dict[str, Any]], None] | None = None

    # -- what the station sent --------------------------------------------------------------
    def sent(
        self,
        txn: str,
        board: str | None,
        cmd: str,
        args: Mapping[str, Any],
        user: str | None = None,
    ) -> None:
        if board is None:
            return  # a venue-wide command is never a decision (wire VENUE_COMMANDS)
        if cmd in DECISION_COMMANDS:
            self._asks[txn] = _Ask(cmd, board, dict(args), user)
        elif cmd == "set_game" and isinstance(args.get("game"), str):
            self._game(str(args["game"])).tiebreak = bool(args.get("tiebreak"))

    def knows(self, txn: str) -> bool:
        """Whether ``txn`` is a decision command this station sent (or adopted)."""
        return txn in self._asks

    def load(
        self, commands: Iterable[Mapping[str, Any]], events: Iterable[Mapping[str, Any]]
    ) -> None:
        """Rebuild from the command log and the stored rulings (in the order they came)."""
        for c in commands:
            self.sent(str(c["txn"]), c["board"], str(c["cmd"]), c["args"] or {}, c.get("user"))
        for ev in events:
            data, type_ = ev["data"], str(ev["type"])
            key = (str(ev["board"]), int(ev["session"]), int(ev["seq"]))
            decided = not data.get("unverified") and (data.get("status", "confirmed") != "pending")
            if not decided:
                self.note(key, ev["game"], type_, data)
                continue
            # It was stored as decided, so an ask of its board said it: the first that says
            # it again is the one it spent (which txn it carried is not stored: the event
            # stays as the node journaled it).
            for txn, ask in self._asks.items():
                if ask.board == key[0] and self.judge(txn, key, ev["game"], type_, data):
                    break

    # -- what a board says ------------------------------------------------------------------
    def note(self, key: EventKey, game: str | None, type_: str, data: Mapping[str, Any]) -> None:
        """A fact that decides nothing: a pending proposal is kept for the ``resolve`` on it."""
        if type_ in _IDENTITY and data.get("status") == "pending" and data.get("ref") is None:
            self._proposals[(key[0], key[2])] = _Proposal(game, type_, dict(data))

    def judge(
        self, txn: str | None, key: EventKey, game: str | None, type_: str, data: Mapping[str, Any]
    ) -> bool:
        """Whether this decision is the one ``txn`` asked (or follows from it); bookkeeping
        moves only when it is."""
        ask = self._asks.get(txn) if txn is not None else None
        if ask is None or ask.board != key[0]:
            return False
        if key in ask.decided:
            return True  # the same event again (a replay): the same decision
        if not ask.primary_done and self._primary(ask, game, type_, data):
            ask.primary_done = True
        else:
            match = next((e for e in ask.follows if e.met_by(type_, data)), None)
            if match is None:
                return False
            ask.follows.remove(match)
        ask.decided.add(key)
        ask.follows += self._decided(key[0], game, type_, data)
        self._publish(key, game, type_, data, txn, ask)
        return True

    def _publish(
        self,
        key: EventKey,
        game: str | None,
        type_: str,
        data: Mapping[str, Any],
        txn: str | None,
        ask: _Ask,
    ) -> None:
        who = "winner" if type_ == "result" else "side"
        record: dict[str, Any] = {
            "board": key[0],
            "session": key[1],
            "seq": key[2],
            "game": game,
            "type": type_,
            "status": data.get("status", "confirmed"),
            who: data.get(who),
            "reason": data.get("reason"),
            "ref": data.get("ref"),
            "txn": txn,
            "by": ask.by,
        }
        self.decided[key] = record
        if self.on_decided is not None:
            self.on_decided(record)

    def _primary(self, ask: _Ask, game: str | None, type_: str, data: Mapping[str, Any]) -> bool:
        a = ask.args
        if ask.cmd == "result":
            winner, reason = a.get("winner"), a.get("reason")
            plain = Expect("result", "confirmed", None, (("winner", winner), ("reason", reason)))
            return plain.met_by(type_, data) or self._tiebreak(game, a).met_by(type_, data)
        if ask.cmd == "foul":
            asked = (("side", a.get("side")), ("reason", a.get("reason")))
            return Expect("foul", "confirmed", None, asked).met_by(type_, data)
        if ask.cmd == "withdraw":
            foul = self._confirmed_foul(ask.board, game, int(a["seq"]))
            if foul is None:
                return self._result_taken_back(ask, game, type_, data)
            asked = (("side", foul["side"]), ("reason", foul["reason"]))
            return Expect("foul", "dismissed", int(a["seq"]), asked).met_by(type_, data)
        proposal = self._proposals.get((ask.board, int(a["seq"])))
        if proposal is None or proposal.game != game:
            return False
        fields = tuple((k, proposal.data.get(k)) for k in _IDENTITY[proposal.type])
        return Expect(proposal.type, str(a["status"]), int(a["seq"]), fields).met_by(type_, data)

    def _result_taken_back(
        self, ask: _Ask, game: str | None, type_: str, data: Mapping[str, Any]
    ) -> bool:
        """A ``withdraw`` of the result that stands (the referee's ``_take_back_result``): its
        dismissal first, then every other result of the game and every confirmed forfeit."""
        seq = int(ask.args["seq"])
        latest = dict(self._latest(ask.board, game, "result"))
        result = latest.get(seq)
        if result is None or result["status"] != "confirmed":
            return False
        asked = (("winner", result.get("winner")), ("reason", result.get("reason")))
        if not Expect("result", "dismissed", seq, asked).met_by(type_, data):
            return False
        for key, rec in latest.items():
            if key != seq and rec["status"] != "dismissed":
                fields = (("winner", rec.get("winner")), ("reason", rec.get("reason")))
                ask.follows.append(Expect("result", "dismissed", key, fields))
        for key, rec in self._open(ask.board, game, "result"):
            if rec.get("reason") == DOUBLE_FORFEIT:  # a 0:0 still proposed goes with them
                fields = (("winner", rec.get("winner")), ("reason", DOUBLE_FORFEIT))
                ask.follows.append(Expect("result", "dismissed", key, fields))
        for key, rec in self._latest(ask.board, game, "forfeit"):
            if rec["status"] == "confirmed":
                fields = (("side", rec.get("side")), ("reason", rec.get("reason")))
                ask.follows.append(Expect("forfeit", "dismissed", key, fields))
        return True

    def _tiebreak(self, game: str | None, args: Mapping[str, Any]) -> Expect:
        """A draw entered in a tie-break game: the profile's draw winner wins it."""
        reg = self.regulation
        ko = reg.knockout if reg is not None else None
        winner = ko.tiebreak.draw_winner if ko is not None and ko.tiebreak is not None else None
        state = self._games.get(game or "")
        if args.get("winner") is not None or winner is None or state is None or not state.tiebreak:
            return Expect("result", "never", None, ())
        if args.get("reason") == DOUBLE_FORFEIT:
            return Expect("result", "never", None, ())
        fields = (("winner", winner.value), ("reason", f"draw_{winner.value}_wins"))
        return Expect("result", "confirmed", None, fields)

    def _confirmed_foul(self, board: str, game: str | None, seq: int) -> dict[str, Any] | None:
        """The decided, still confirmed foul ``seq`` of this board's game (its own report, or
        the ruling that confirmed the proposal ``seq``)."""
        found = None
        for (b, _, s), rec in self.decided.items():
            if b != board or rec["game"] != game or rec["type"] != "foul":
                continue
            if s == seq or rec["ref"] == seq:
                found = rec if rec["status"] == "confirmed" else None
        return found

    def _latest(self, board: str, game: str | None, type_: str) -> list[tuple[int, dict[str, Any]]]:
        """The game's decided ``type_`` facts on this board by their key (the first report's
        seq; a ruling names it by ``ref``), each with its latest decided record, in key order."""
        latest: dict[int, tuple[int, dict[str, Any]]] = {}
        for (b, _, s), rec in self.decided.items():
            if b != board or rec["game"] != game or rec["type"] != type_:
                continue
            key = rec["ref"] if isinstance(rec["ref"], int) else s
            if key not in latest or s > latest[key][0]:
                latest[key] = (s, rec)
        return [(key, latest[key][1]) for key in sorted(latest)]

    def _open(self, board: str, game: str | None, type_: str) -> list[tuple[int, dict[str, Any]]]:
        """The game's proposals of ``type_`` on this board still waiting for a ruling."""
        return [
            (seq, {**p.data, "status": "pending"})
            for (b, seq), p in sorted(self._proposals.items())
            if b == board and p.game == game and p.type == type_
        ]

    def _withdrawn(
        self, board: str, game: str | None, state: _Game, side: str, reason: str
    ) -> list[Expect]:
        """A confirmed foul taken back (the referee's ``withdraw``): what no longer holds — each
        of the side's forfeits by fouls (decided or proposed) the fouls left no longer reach,
        and the result standing on it (its loss; a 0:0 with the other side's confirmed
        forfeit, which then loses alone)."""
        state.fouls[side] -= 1
        state.reason_fouls[(side, reason)] -= 1
        other = _OTHER.get(side)
        forfeits = [
            (key, rec)
            for key, rec in self._latest(board, game, "forfeit")
            + self._open(board, game, "forfeit")
            if rec["status"] != "dismissed" and rec.get("side") == side
        ]
        # the results that stand, as decided (after a confirmed result a board proposes none;
        # a forged one the station keeps as a proposal must not hide the standing one)
        standing = [
            (key, rec)
            for key, rec in self._latest(board, game, "result")
            if rec["status"] != "dismissed"
        ]
        standing.sort(key=lambda item: item[0])
        out: list[Expect] = []
        reg = self.regulation
        per_reason = {r: n for (s, r), n in state.reason_fouls.items() if s == side}
        for key, rec in sorted(forfeits, key=lambda item: item[0]):
            code = str(rec.get("reason"))
            reached = (
                None
                if reg is None
                else reg.loss_still_reached(code, total=state.fouls[side], per_reason=per_reason)
            )
            if reached is not False:  # another cause (None), or the fouls left still reach it
                continue
            out.append(Expect("forfeit", "dismissed", key, (("side", side), ("reason", code))))
            if not standing or standing[-1][1]["status"] != "confirmed":
                continue
            rkey, result = standing.pop()
            if result.get("reason") == code and result.get("winner") == other:
                out.append(
                    Expect("result", "dismissed", rkey, (("winner", other), ("reason", code)))
                )
            elif result.get("reason") == DOUBLE_FORFEIT:
                both = (("winner", None), ("reason", DOUBLE_FORFEIT))
                out.append(Expect("result", "dismissed", rkey, both))
                theirs = state.forfeits.get(other or "")
                if theirs is not None and theirs[0] == "confirmed":
                    won = (("winner", side), ("reason", theirs[1]))
                    out.append(Expect("result", "confirmed", None, won))
            else:
                standing.append((rkey, result))  # a result entered since: it stands
        return out

    def _game(self, game: str) -> _Game:
        return self._games.setdefault(game, _Game())

    def _decided(
        self, board: str, game: str | None, type_: str, data: Mapping[str, Any]
    ) -> list[Expect]:
        """Book a decided event; what the regulation makes follow from it."""
        ref = data.get("ref")
        proposed = isinstance(ref, int) and self._proposals.pop((board, ref), None) is not None
        state = self._game(game or "")
        status = data.get("status", "confirmed")
        if type_ == "result":
            if status == "confirmed":
                state.finished = True
            elif not proposed:
                # a result that stood is taken back (a foul withdrawn): an earlier one may stand
                state.finished = any(
                    rec["status"] == "confirmed"
                    for key, rec in self._latest(board, game, "result")
                    if key != ref
                )
            return []
        side, reason = str(data.get("side")), str(data.get("reason"))
        if type_ == "foul":
            if status == "dismissed" and isinstance(ref, int) and not proposed:
                return self._withdrawn(board, game, state, side, reason)
            if status != "confirmed":
                return []
            finished = state.finished
            state.fouls[side] += 1
            state.reason_fouls[(side, reason)] += 1
            code = self._loss_reached(state, side, reason)
            if code is None or finished:
                return []  # after a result a limit-reaching foul is only a pending forfeit
            return [Expect("forfeit", "confirmed", None, (("side", side), ("reason", code)))]
        state.forfeits[side] = (status, reason)
        return self._forfeit_follows(board, game, state, side, reason, status)

    def _loss_reached(self, state: _Game, side: str, foul_reason: str) -> str | None:
        """As the referee counts it: ``Regulation.loss_reached``."""
        reg = self.regulation
        if reg is None:
            return None
        return reg.loss_reached(
            foul_reason, total=state.fouls[side], of_reason=state.reason_fouls[(side, foul_reason)]
        )

    def _forfeit_follows(
        self, board: str, game: str | None, state: _Game, side: str, reason: str, status: str
    ) -> list[Expect]:
        """The result a forfeit ruling makes (the referee's ``_forfeit_ruled``)."""
        other = _OTHER.get(side)
        if other is None:
            return []
        other_forfeit = state.forfeits.get(other)
        other_pending = any(
            p.game == game and p.type == "forfeit" and p.data.get("side") == other
            for (b, _), p in self._proposals.items()
            if b == board
        )
        double = next(
            (
                seq
                for (b, seq), p in self._proposals.items()
                if b == board
                and p.game == game
                and p.type == "result"
                and p.data.get("reason") == DOUBLE_FORFEIT
            ),
            None,
        )
        both = (("winner", None), ("reason", DOUBLE_FORFEIT))
        if status == "dismissed":
            out = [] if double is None else [Expect("result", "dismissed", double, both)]
            if double is not None and other_forfeit is not None and other_forfeit[0] == "confirmed":
                fields = (("winner", side), ("reason", other_forfeit[1]))
                out.append(Expect("result", "confirmed", None, fields))
            return out
        if other_forfeit is not None and other_forfeit[0] == "confirmed":
            return [Expect("result", "confirmed", double, both)]
        if other_pending or double is not None:
            return []  # the other side's forfeit is still to be ruled
        return [Expect("result", "confirmed", None, (("winner", other), ("reason", reason)))]
