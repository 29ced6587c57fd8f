"""Results out: the TRF-2026 file after any round (``export_trf``), from the stored results, the
byes and the standings' ranks (the regulation's tiebreaks; the final list's once Meishan's
knockout is finished), with a comment line naming the knockout's players. The way in is
``trf_io.py``."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from clock_service.trf.build import Entrant, GameResult, RoundBye, TrfHeader, build_trf
from clock_service.trf.document import TrfError
from clock_service.trf.player import PlayerRecord
from clock_service.trf.records import RawRecord
from venue_station.domain.standings import game_records
from venue_station.domain.trf_players import knockout_note
from venue_station.domain.trf_state import (
    ensure_entrants,
    load_state,
    save_state,
    tournament_rounds,
)

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["export_trf"]

_WINNER = {"red": "white", "black": "black", "draw": "draw", "double_forfeit": "double_forfeit"}


def _entrant(e: Mapping[str, Any], tags: frozenset[str] = frozenset()) -> Entrant:
    fields = {f.name for f in dataclasses.fields(Entrant)}
    entrant = Entrant(**{k: v for k, v in e.items() if k in fields})
    # a player of the women's group is a woman for the file's sex column when no file said
    # (a players CSV has no sex column: the TRF left it blank for them, an outsider)
    if not entrant.sex and "women" in tags:
        entrant = dataclasses.replace(entrant, sex="w")
    return entrant


async def export_trf(
    station: Station,
    *,
    after_round: int | None = None,
    absent_next: Collection[int] = (),
    newline: str = "\r\n",
) -> str:
    """The TRF-2026 text after ``after_round`` (default: the last round with a result).
    ``absent_next``: start ranks known absent in the next round (written as ``240 Z``)."""
    store = station.require_store()
    reg = station.regulation
    records = await game_records(store, station.regulation)
    state = await load_state(store)
    names = set(await store.player_names()) | {n for g in records for n in (g.red, g.black)}
    if await ensure_entrants(store, state, names):
        await save_state(store, state)
    rank_of = state.rank_of()
    rounds = tournament_rounds(state, reg.tournament.rounds)
    if after_round is None:
        decided = [g.round for g in records if g.result is not None]
        decided += [int(b["round"]) for b in state.byes if b["kind"] != "Z"]
        after_round = min(max(decided, default=0), rounds)
        # A game without a result (still being played, pending, or of a round paired or
        # replaced after later rounds were played) ends the file at its round: a TRF marks
        # only its last round's games as not played yet, so later results wait for it.
        undecided = [g.round for g in records if g.result is None]
        after_round = min([after_round, *undecided])
    games = []
    for g in records:
        result = None if g.result is None else _WINNER[g.result]
        # a double forfeit is its own result in the TRF ("-" on both lines)
        forfeit = g.forfeit and result in ("white", "black")
        games.append(GameResult(g.round, rank_of[g.red], rank_of[g.black], result, forfeit=forfeit))
    byes = [RoundBye(int(b["round"]), int(b["player"]), str(b["kind"])) for b in state.byes]
    ranks: dict[int, int] = {}
    if after_round:
        # the ranks the standings page shows: once Meishan's knockout is finished, places
        # 1–4 are its (an outsider chief read the champion ranked 10th in the TRF)
        latest = max((g.round for g in records), default=0)
        asked = None if after_round >= latest else after_round  # the latest table: the final
        shown, _final = await station.shown_standings(after_round=asked)
        for row in shown:
            ranks[rank_of[row.player]] = row.rank
    nxt = after_round + 1
    # While a round is being played its file is that round's: the next round's H/F (which
    # count in Points) wait until it is done (build_trf refuses them); a Z scores nothing.
    playing = any(g.round == after_round and g.result is None for g in records)
    kinds = "Z" if playing else "FHZ"
    next_byes = {int(b["player"]): str(b["kind"]) for b in state.byes if b["round"] == nxt}
    next_byes = {p: k for p, k in next_byes.items() if k in kinds}
    for who in (rank_of[p] for p in state.withdrawn if p in rank_of):
        next_byes[who] = "Z"  # withdrawn (退赛): absent from the next round on
    for who in absent_next:
        if who not in state.key_of():
            raise TrfError(f"absent: no player with start rank {who}")
        next_byes[who] = "Z"
    header = TrfHeader(
        name=state.header.get("name") or station.event_title,
        city=state.header.get("city", ""),
        federation=state.header.get("federation", ""),
        start=state.header.get("start", ""),
        end=state.header.get("end", ""),
        chief_arbiter=state.header.get("chief_arbiter", ""),
        rounds=rounds,
        initial_colour=state.header.get("initial_colour"),
        kept=tuple(state.header.get("kept", ())),
    )
    tags = await store.reads.player_tags()
    trf = build_trf(
        header,
        [_entrant(e, tags.get(e["name"], frozenset())) for e in state.entrants],
        games,
        after_round=after_round,
        byes=byes,
        ranks=ranks,
        win=reg.scoring.win,
        draw=reg.scoring.draw,
        loss=reg.scoring.loss,
        next_round_byes=next_byes,
        prohibited=[(a, b, tuple(ps)) for a, b, ps in state.prohibited],
        newline=newline,
    )
    note = knockout_note(await station.knockout.load(), state.rank_of())
    if note:  # before the players: a person reading the file sees why four stand aside
        at = next(i for i, r in enumerate(trf.records) if isinstance(r, PlayerRecord))
        lines = (*trf.records[:at], RawRecord(note), *trf.records[at:])
        trf = dataclasses.replace(trf, records=lines)
    return str(trf)
