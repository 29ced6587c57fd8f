"""Game records (录谱, issue 29): ``RecordDesk``, the station's desk for the moves of a game.

``Station.records`` is one. ``view(board)`` reads the record of the board's game, ``add`` and
``undo`` change it; each takes ``ply``, the number of moves the client had, so a stale client is
refused (``record_changed``) instead of writing over a move it never saw. Every move is read and
checked by clock_service.xiangqi (the one source of the rules) before it is stored, and every
stored record is replayed through it again when read. Which boards must be recorded, and who is
responsible, is clock_service.recording's (the profile's ``[recording]``): a board that needs
no record is refused (``record_not_required``).

Moves meet the clock: move N pairs with the game's press N (its stored ``move`` events,
clock_service.xiangqi.pair_with_presses), giving each move its ``used_ms`` / ``remaining_ms``;
a record with more or fewer moves than presses, or a mover who is not the press's side, is
reported in ``pairing`` and never merged silently.

``listen(callback)``: the callback gets the new ``RecordView`` after every stored change (the
SSE stream, the live relay).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from clock_service.handicap import Handicap, handicap_of
from clock_service.regulation import Regulation
from clock_service.side import Side
from clock_service.xiangqi import (
    START_FEN,
    Move,
    NotationError,
    Pairing,
    Press,
    Record,
    pair_with_presses,
    parse_move,
    write_pgn,
)
from venue_station.domain.exports import clock_log
from venue_station.domain.record_keys import check_record_key, record_key
from venue_station.domain.record_refusals import RecordRefused, refusal
from venue_station.domain.record_view import RecordView, board_number, pairing_dict, pairing_note
from venue_station.live.results import derive_game
from venue_station.store.records import RecordConflict

if TYPE_CHECKING:
    from venue_station.store.database import Store

__all__ = ["RecordDesk", "RecordRefused", "RecordView", "board_number", "pairing_dict"]

log = logging.getLogger(__name__)
MAX_MOVE_TEXT = 32


async def _no_game(game: str) -> None:
    return None


class RecordDesk:
    """The records of a station's games (``Station.records``)."""

    def __init__(
        self,
        store: Callable[[], Store],
        regulation: Regulation,
        board_game: Callable[[str], str | None] = lambda board: None,
        other_game: Callable[[str], Awaitable[dict[str, Any] | None]] | None = None,
    ) -> None:
        self._store = store
        # a game outside the games table, as its row: the knockout's (None: there is none)
        self._other_game = other_game or _no_game
        self.regulation = regulation
        self._board_game = board_game  # the game the board's clock says it is playing
        self._listeners: list[Callable[[RecordView], Any]] = []
        self._lock = asyncio.Lock()  # one change at a time: each is a read, a check, a write
        self._cache: dict[str, Record] = {}  # game -> the last record replayed
        self._key_lock = asyncio.Lock()

    async def key(self, board: str) -> str:
        """``board``'s record key (the secret made once, under a lock: one secret for all)."""
        async with self._key_lock:
            return await record_key(self._store(), board)

    async def check_key(self, board: str, key: str) -> bool:
        async with self._key_lock:
            return await check_record_key(self._store(), board, key)

    def listen(self, callback: Callable[[RecordView], Any]) -> None:
        """``callback(view)`` after every stored change; an awaitable it returns is awaited."""
        self._listeners.append(callback)

    # -- reads --------------------------------------------------------------------------------
    async def game_of(self, board: str, game: str | None = None) -> dict[str, Any]:
        """The games row a request means: ``game`` (which must be on ``board``), else the game
        the board's clock is playing, else the board's game of the latest round."""
        store = self._store()
        if game is not None:
            row = await store.game(game) or await self._other_game(game)
            if row is None or row["board"] != board:
                raise RecordRefused(
                    404, "no_game", f"no game {game!r} on board {board}", board=board, game=game
                )
            return row
        playing = self._board_game(board)
        other = await self._other_game(playing) if playing else None
        if other is not None and other["board"] == board:
            return other  # a knockout game on the board
        mine = [g for g in await store.games() if g["board"] == board]
        if not mine:
            raise RecordRefused(404, "no_game", f"no game on board {board}", board=board)
        for g in mine:
            if g["game"] == playing:
                return g
        return max(mine, key=lambda g: int(g["round"]))

    async def required(self, row: Mapping[str, Any]) -> bool:
        """Must this game be recorded (the profile's ``[recording]``; none: no board)?"""
        rule = self.regulation.recording
        if rule is None:
            return False
        tags = await self._store().reads.player_tags()
        both = (*tags.get(row["red"], ()), *tags.get(row["black"], ()))
        return rule.required(board=board_number(str(row["board"])), tags=both)

    async def view(self, board: str, *, game: str | None = None) -> RecordView:
        return await self._view(await self.game_of(board, game))

    async def earlier_due(self, view: RecordView) -> dict[str, Any] | None:
        """The board's game before ``view``'s when its record is still due: required, played,
        fewer moves than presses, no consent. A recorder who opens the board's link (the QR
        code names no game) after the next round started is offered it, not sent to the new
        game unawares."""
        store = self._store()
        before = [
            g for g in await store.games() if g["board"] == view.board and g["round"] < view.round
        ]
        if not before:
            return None
        row = max(before, key=lambda g: int(g["round"]))
        if not await self.required(row):
            return None
        game = str(row["game"])
        stored = await store.record_rows.record(game)
        plies = int(stored["ply"]) if stored else 0
        presses = len(await store.game_events(game, ("move",)))
        if presses == 0 or plies >= presses or (stored and stored.get("consent_by")):
            return None
        return {
            "game": game,
            "round": int(row["round"]),
            "red": str(row["red"]),
            "black": str(row["black"]),
            "plies": plies,
            "presses": presses,
        }

    async def current_beside(self, view: RecordView) -> dict[str, Any] | None:
        """The board's game now when it is not ``view``'s (a page still recording an earlier
        game is told the board has moved on, and where to)."""
        try:
            row = await self.game_of(view.board)
        except RecordRefused:
            return None
        if row["game"] == view.game:
            return None
        keys = ("game", "round", "red", "black")
        return {k: (int(row[k]) if k == "round" else str(row[k])) for k in keys}

    async def view_game(self, game: str) -> RecordView | None:
        row = await self._store().game(game) or await self._other_game(game)
        return None if row is None else await self._view(row)

    async def _view(
        self, row: Mapping[str, Any], stored: dict[str, Any] | None = None
    ) -> RecordView:
        store = self._store()
        game = str(row["game"])
        if stored is None:
            stored = await store.record_rows.record(game)
        events = await store.game_events(game)
        record = self._record(game, stored, handicap_of(events))
        presses = [Press(Side(r.side), r.used_ms, r.remaining_ms) for r in clock_log(events)]
        outcome = derive_game(events, self.regulation)
        responsible = None
        rule = self.regulation.recording
        if rule is not None and outcome.result in ("1-0", "0-1", "1/2-1/2"):
            side = rule.responsible(winner=Side(outcome.winner) if outcome.winner else None)
            responsible = {"side": side.value, "player": str(row[side.value])}
        consent = None
        if stored is not None and stored.get("consent_by") is not None:
            consent = {"by": stored["consent_by"], "ms": stored["consent_ms"]}
        return RecordView(
            board=str(row["board"]),
            game=game,
            round=int(row["round"]),
            red=str(row["red"]),
            black=str(row["black"]),
            required=await self.required(row),
            responsible=responsible,
            result=outcome.result,
            record=record,
            pairing=pair_with_presses(record, presses),
            updated_ms=stored["updated_ms"] if stored else None,
            updated_by=stored["updated_by"] if stored else None,
            consent=consent,
            stage=row.get("stage"),
        )

    async def pairing(self, game: str, stored: Mapping[str, Any] | None) -> Pairing:
        """The record of ``game`` (as ``stored``) against its clock's presses."""
        events = await self._store().game_events(game, ("move", "ready"))
        presses = [Press(Side(r.side), r.used_ms, r.remaining_ms) for r in clock_log(events)]
        return pair_with_presses(self._record(game, stored, handicap_of(events)), presses)

    def _record(
        self, game: str, stored: Mapping[str, Any] | None, handicap: Handicap | None
    ) -> Record:
        """The stored moves replayed by the rules (a move stored elsewhere is checked too), a
        让二先 game's with its handicap (the receiver's given moves in a row)."""
        start = str(stored["start_fen"]) if stored else START_FEN
        moves = tuple(Move.from_iccs(m) for m in (stored["moves"] if stored else ()))
        cached = self._cache.get(game)
        if cached is not None and (cached.start_fen, cached.moves, cached.handicap) == (
            start,
            moves,
            handicap,
        ):
            return cached
        record = Record(start_fen=start, moves=moves, handicap=handicap)
        self._cache[game] = record
        return record

    # -- changes ------------------------------------------------------------------------------
    async def add(
        self,
        board: str,
        text: str,
        *,
        ply: int,
        by: str | None,
        game: str | None = None,
        after: str | None = None,
    ) -> RecordView:
        """One more move, in Chinese, WXF or ICCS, after the ``ply`` moves the client had (the
        last of them ``after``, in ICCS, when it says)."""
        async with self._lock:
            row, record = await self._current(board, game, ply, repeat=text, after=after)
            if ply < len(record.moves):  # the very move again: it is stored, nothing to do
                return await self._view(row)
            if len(text) > MAX_MOVE_TEXT:
                raise RecordRefused(
                    422,
                    "unreadable_move",
                    f"a move is at most {MAX_MOVE_TEXT} characters",
                    move=text[:MAX_MOVE_TEXT],
                    side=record.position.to_move.value,
                )
            try:
                move = parse_move(record.position, text)
            except NotationError as error:
                raise refusal(record.position, text, error) from None
            played = record.play_move(move)
            return await self._write(row, played, ply, "add", move.iccs, by)

    async def undo(
        self,
        board: str,
        *,
        ply: int,
        by: str | None,
        game: str | None = None,
        after: str | None = None,
    ) -> RecordView:
        """Take back the last of the ``ply`` moves the client had (``after``, when it says)."""
        async with self._lock:
            row, record = await self._current(board, game, ply, after=after)
            if not record.moves:
                raise RecordRefused(409, "nothing_to_undo", "the record has no moves to undo")
            last = record.moves[-1].iccs
            return await self._write(row, record.undo(), ply, "undo", last, by)

    async def _current(
        self,
        board: str,
        game: str | None,
        ply: int,
        *,
        repeat: str | None = None,
        after: str | None = None,
    ) -> tuple[dict[str, Any], Record]:
        """The game's row and record, refused unless it has the ``ply`` moves the client had
        — or, for a move (``repeat``), one more that is that very move: the phone whose answer
        was lost on the way (a hall's Wi-Fi) sends it again, and is told it is stored. ``after``:
        the last of those moves as the client had it (ICCS, "" for none) must be the record's
        too — a move taken back and another entered since leaves the count as it was."""
        row = await self.game_of(board, game)
        if not await self.required(row):
            raise RecordRefused(
                409,
                "record_not_required",
                f"board {board} needs no record ({self.regulation.name}: [recording])",
                board=board,
            )
        game = str(row["game"])
        stored = await self._store().record_rows.record(game)
        record = self._record(
            game, stored, handicap_of(await self._store().game_events(game, ("ready",)))
        )
        if ply != len(record.moves) and not (
            repeat is not None and ply + 1 == len(record.moves) and _same(record, ply, repeat)
        ):
            raise _changed(str(row["game"]), ply, len(record.moves))
        if after is not None and (record.moves[ply - 1].iccs if ply else "") != after:
            raise _changed(str(row["game"]), ply, len(record.moves))
        return row, record

    async def _write(
        self,
        row: Mapping[str, Any],
        record: Record,
        ply: int,
        action: str,
        move: str,
        by: str | None,
    ) -> RecordView:
        game = str(row["game"])
        try:
            stored = await self._store().record_rows.write_record(
                game=game,
                board=str(row["board"]),
                round=int(row["round"]),
                start_fen=record.start_fen,
                moves=record.iccs(),
                expect_ply=ply,
                action=action,
                move=move,
                by=by,
            )
        except RecordConflict as conflict:
            raise _changed(game, ply, conflict.found) from None
        self._cache[game] = record
        view = await self._view(row, stored)
        log.info("record %s: %s %s by %s (%d plies)", game, action, move, by, view.ply)
        await self._tell(view)
        return view

    async def _tell(self, view: RecordView) -> None:
        for callback in list(self._listeners):
            try:
                result = callback(view)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:  # a listener's failure must not undo a stored change
                log.exception("a record listener failed")

    # -- exports ------------------------------------------------------------------------------
    def pgn(self, view: RecordView, *, event: str, more: Mapping[str, str] | None = None) -> str:
        """One game as xiangqi PGN: ICCS moves, each with its Chinese and ``[%clk]``; ``more``:
        the game's Date, TimeControl, Termination (web/records_view.py)."""
        tags = {
            "Event": event,
            **(more or {}),
            "Round": str(view.round),
            "Red": view.red,
            "Black": view.black,
            "White": view.red,  # PGN's own tag, for readers written for chess: red moves first
            "GameId": view.game,
            "Board": view.board,
        }
        if view.stage:  # a knockout game: its Round alone reads as the Swiss round's
            tags["Stage"] = view.stage
        if not view.pairing.matched:
            tags["ClockPairing"] = pairing_note(view.pairing)
        result = view.result if view.result in ("1-0", "0-1", "1/2-1/2") else "*"
        return write_pgn(view.record, tags=tags, clocks=view.pairing.clocks, result=result)

    async def round_views(self, round_no: int) -> list[RecordView]:
        """The round's games that have a record with moves, in board order."""
        store = self._store()
        stored = await store.record_rows.records(round=round_no)
        games = [g for g in await store.games(round_no) if stored.get(g["game"], {}).get("moves")]
        known = {g["game"] for g in games}
        for gid in sorted(set(stored) - known):  # Meishan's knockout games beside the round
            row = await self._other_game(gid) if stored[gid].get("moves") else None
            if row is not None:
                games.append(row)
        games.sort(key=lambda g: board_number(str(g["board"])) or 10**6)
        return [await self._view(g, stored[g["game"]]) for g in games]


def _same(record: Record, ply: int, text: str) -> bool:
    """Is ``text`` the move ``record`` has after ``ply`` moves?"""
    if len(text) > MAX_MOVE_TEXT:
        return False
    try:
        return parse_move(record.positions()[ply], text) == record.moves[ply]
    except NotationError:
        return False


def _changed(game: str, ply: int, found: int) -> RecordRefused:
    return RecordRefused(
        409,
        "record_changed",
        f"the record of {game} changed: the client had {ply} moves, it has {found}",
        ply=ply,
        found=found,
    )
