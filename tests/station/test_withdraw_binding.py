"""The station's binding of a ``withdraw`` (intake/asks.py) follows the node's referee in every
shape a withdrawal takes (a review of the first cut found four it got wrong): a second
withdrawal after the loss came again, a forfeit still proposed after a result, a forfeit the
arbiter confirmed through its alert, a 0:0 that becomes one side's loss, and a restart.

Each case plays the node's own referee (clock_service.referee) and feeds the station's ``Asks``
exactly the events the node would journal — so the two are checked against each other, not
against a hand-written list.
"""

from __future__ import annotations

from typing import Any

from clock_service.proposal import Proposal
from clock_service.referee import Referee
from clock_service.regulation import Regulation
from clock_service.side import Side
from venue_station.intake.asks import Asks

RED, BLACK = Side.RED, Side.BLACK
GAME = "r1-b5"


class Board:
    """The node's referee and journal numbering on one side; the station's Asks on the other."""

    def __init__(self, profile: str = "meishan-2016") -> None:
        self.regulation = Regulation.load(profile)
        self.referee = Referee(self.regulation)
        self.asks = Asks(self.regulation)
        self.seq = 0
        self.first: dict[int, int] = {}  # proposal id -> seq of its first event
        self.commands: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.refused: list[tuple[str, dict[str, Any]]] = []

    def command(self, txn: str, cmd: str, args: dict[str, Any]) -> None:
        self.asks.sent(txn, "5", cmd, args)
        self.commands.append({"txn": txn, "board": "5", "cmd": cmd, "args": args})

    def journal(self, proposals: list[Proposal], txn: str | None) -> list[int]:
        seqs = []
        for p in proposals:
            self.seq += 1
            type_, data = p.to_wire()
            if p.id in self.first:
                data = {**data, "ref": self.first[p.id]}
            else:
                self.first[p.id] = self.seq
            if type_ == "result":
                data["status"] = p.status.value
            key = ("5", 1, self.seq)
            self.events.append({"board": "5", "session": 1, "seq": self.seq, "game": GAME,
                                "type": type_, "data": data})  # fmt: skip
            decision = (type_ == "result" and data["status"] != "pending") or (
                type_ in ("foul", "forfeit") and data["status"] in ("confirmed", "dismissed")
            )
            if not decision:
                self.asks.note(key, GAME, type_, data)
            elif not self.asks.judge(txn, key, GAME, type_, data):
                self.refused.append((type_, data))
            seqs.append(self.seq)
        return seqs

    def foul(self, txn: str, side: Side, reason: str = "disturbing") -> list[int]:
        self.command(txn, "foul", {"side": side.value, "reason": reason})
        return self.journal(self.referee.arbiter_foul(side, reason), txn)

    def withdraw(self, txn: str, seq: int) -> list[int]:
        self.command(txn, "withdraw", {"seq": seq})
        pid = next(p for p, s in self.first.items() if s == seq)
        return self.journal(self.referee.withdraw(pid), txn)

    def resolve(self, txn: str, seq: int, status: str) -> list[int]:
        self.command(txn, "resolve", {"seq": seq, "status": status})
        pid = next(p for p, s in self.first.items() if s == seq)
        return self.journal(self.referee.resolve(pid, status), txn)

    def result(self, txn: str, winner: Side | None, reason: str) -> list[int]:
        self.command(txn, "result", {"winner": winner.value if winner else None, "reason": reason})
        return self.journal(self.referee.result_entered(winner, reason, moves=30), txn)


def test_a_second_withdrawal_after_the_loss_came_again() -> None:
    b = Board()
    first = b.foul("f1", BLACK)[0]
    second = b.foul("f2", BLACK)[0]  # the loss by fouls: forfeit, result
    b.withdraw("w1", first)
    b.foul("f3", BLACK)  # the loss again
    assert b.referee.finished
    b.withdraw("w2", second)
    assert not b.referee.finished and b.refused == []


def test_a_forfeit_proposed_after_a_result_goes_with_the_foul() -> None:
    b = Board()
    b.result("r", BLACK, "resignation")
    b.foul("f1", BLACK)
    second = b.foul("f2", BLACK)  # after a result: the loss is only proposed
    assert len(second) == 2
    b.withdraw("w", second[0])
    assert b.refused == []
    assert b.asks._open("5", GAME, "forfeit") == []  # nothing left waiting for a ruling


def test_a_forfeit_confirmed_through_its_alert_goes_with_the_foul() -> None:
    b = Board()
    b.result("r", BLACK, "resignation")
    b.foul("f1", BLACK)
    foul, proposed = b.foul("f2", BLACK)
    b.resolve("c", proposed, "confirmed")  # red wins by fouls
    b.withdraw("w", foul)
    assert b.refused == []
    assert b.referee.result is not None and b.referee.result.reason == "resignation"


def test_a_double_forfeit_becomes_the_other_sides_loss() -> None:
    b = Board()
    b.foul("r1", RED)
    red_second = b.foul("r2", RED)[0]  # red loses by fouls
    b.foul("b1", BLACK)
    b.foul("b2", BLACK)  # after a result: black's forfeit proposed
    proposed = b.events[-1]["seq"]
    b.resolve("c", proposed, "confirmed")  # both forfeited: 0:0
    assert b.referee.result is not None and b.referee.result.reason == "double_forfeit"
    b.withdraw("w", red_second)
    assert b.refused == []
    standing = b.referee.result
    assert standing is not None and (standing.winner, standing.reason) == (RED, "fouls")


def test_a_withdrawal_is_known_again_after_a_restart() -> None:
    b = Board()
    first = b.foul("f1", BLACK)[0]
    b.foul("f2", BLACK)
    b.withdraw("w", first)
    again = Asks(b.regulation)
    again.load(b.commands, b.events)
    assert len(again.decided) == len(b.asks.decided) == len(b.events)
    # and the next foul's loss is bound after the restart
    b.asks = again
    b.foul("f3", BLACK)
    assert b.refused == [] and b.referee.finished


def _taken_back(b: Board, outcome: str = "undecided") -> None:
    """The station took every event the node's referee journaled, left no allowance unspent,
    decided the game as the referee has it (no result: the game goes on), and a restart's
    reload decides the same."""
    from clock_service.outcome import game_outcome

    assert b.refused == [], b.refused
    assert not [a.follows for a in b.asks._asks.values() if a.follows]
    assert b.referee.result is None and not b.referee.finished
    facts = [{"seq": e["seq"], "type": e["type"], "data": e["data"]} for e in b.events]
    assert game_outcome(facts, b.regulation).status == outcome
    again = Asks(b.regulation)
    again.load(b.commands, b.events)
    assert again.decided == b.asks.decided


def test_a_result_replaced_then_taken_back() -> None:
    b = Board()
    b.result("r1", RED, "resignation")
    replaced = b.result("r2", BLACK, "resignation")[-1]
    b.withdraw("w", replaced)
    _taken_back(b)


def test_a_double_forfeit_taken_back() -> None:
    b = Board()
    late = b.journal(b.referee.late(RED), None) + b.journal(b.referee.late(BLACK), None)
    b.resolve("c1", late[0], "confirmed")
    b.resolve("c2", late[1], "confirmed")
    result = b.referee.result
    assert result is not None
    b.withdraw("w", b.first[result.id])
    _taken_back(b)


def test_a_result_over_a_half_ruled_double_forfeit_taken_back() -> None:
    """Both late, red's forfeit confirmed, black's still to rule, a result entered and taken
    back: the 0:0 still proposed goes with red's forfeit (a reviewer: it stayed pending)."""
    b = Board()
    late = b.journal(b.referee.late(RED), None) + b.journal(b.referee.late(BLACK), None)
    b.resolve("c1", late[0], "confirmed")
    entered = b.result("r", BLACK, "late")[-1]
    b.withdraw("w", entered)
    _taken_back(b, "pending")  # black's forfeit is still to rule
    assert [p.reason for p in b.referee.pending()] == ["late"]  # black's, for the arbiter


def test_a_forfeit_replaced_then_taken_back_and_a_flag_taken_back_twice() -> None:
    b = Board()
    (off,) = b.journal(b.referee.clock_switched_off(RED, authorised=False), None)
    b.resolve("c", off, "confirmed")
    b.withdraw("w", b.result("r", None, "agreed_draw")[-1])
    _taken_back(b)
    flag = b.journal(b.referee.flag_fell(RED), None)[0]
    b.resolve("c2", flag, "confirmed")
    b.withdraw("w2", flag)
    _taken_back(b)
    again = b.journal(b.referee.flag_fell(RED), None)[0]  # the clock goes on, and falls again
    b.resolve("c3", again, "confirmed")
    assert b.refused == [] and b.referee.finished
