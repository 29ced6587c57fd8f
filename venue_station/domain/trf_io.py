"""Pairing software in, results out: the station's side of the FIDE TRF and the pairs list.

* ``import_trf``: the players (start rank = stable id; the station's player key is the name,
  or ``name (start rank)`` when two players share a name) and, when the file carries a round
  paired but not played (a pairing program's export), that round's games on boards 1..n in the
  file's board order, and its byes; then ``set_game`` to the boards.
* ``import_pairs``: an engine's pairs list for the next round (``white black`` = red black).
* ``export_trf`` (``trf_export.py``): the TRF-2026 file after any round.

The mapping start rank <-> player key, the byes and the tournament lines of an imported file
are kept in the ``meta`` table (key ``trf.state``, JSON), so no schema change is needed. The
results of rounds already played in an imported file are not imported: the station's own
results are the truth, and the export writes them.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from clock_service.trf.build import (
    KEPT_CODES,
)
from clock_service.trf.document import Trf, TrfError
from clock_service.trf.pairs import parse_pairs
from clock_service.trf.records import (
    PointsRecord,
    RawRecord,
    ScoringRecord,
    XxsRecord,
)
from venue_station.domain import tournament_desk
from venue_station.domain.import_guard import (
    check_coverage,
    check_entrants,
    check_not_withdrawn,
    guard_rounds,
    same_event,
)
from venue_station.domain.knockout_boards import place_beside_knockout
from venue_station.domain.rematches import rematches
from venue_station.domain.trf_players import closed_up, counts, player_changes
from venue_station.domain.trf_state import (
    TrfState,
    ensure_entrants,
    load_state,
    save_state,
)
from venue_station.errors import ImportRefused

if TYPE_CHECKING:
    from venue_station.domain.station import Station
    from venue_station.store.database import Store

__all__ = ["import_pairs", "import_trf"]


def _keys(players: Collection[tuple[int, str]]) -> dict[int, str]:
    """start rank -> the station's player key: the name, made unique with the start rank."""
    count: dict[str, int] = {}
    for _, name in players:
        count[name] = count.get(name, 0) + 1
    out = {}
    for start, name in players:
        base = name or f"#{start}"
        out[start] = base if count[name] == 1 and name else f"{base} ({start})"
    return out


# -- import ------------------------------------------------------------------------------------
def _namesakes(trf: Trf, state: TrfState) -> bool:
    """Two players of one name, in the file or here: their keys carry their start ranks, so
    the list is not renumbered (their rows and a withdrawal would go with the old numbers)."""
    for names in ([p.name for p in trf.players], [str(e["name"]) for e in state.entrants]):
        if len(set(names)) < len(names):
            return True
    return False


def _check_round(
    station: Station,
    round_no: int,
    pairs: list[tuple[int, int]],
    byes: Mapping[int, str],
    key: Mapping[int, str],
) -> None:
    """The round a file sets is one of the regulation's, and names known start ranks only
    (checked before a players file changes any row: a refused round left them changed)."""
    rounds = station.regulation.tournament.rounds
    if not 1 <= round_no <= rounds:
        raise TrfError(f"round {round_no} is not 1..{rounds} (the regulation's rounds)")
    for board, pair in enumerate(pairs, 1):
        for who in pair:
            if who not in key:
                raise TrfError(f"round {round_no} board {board}: no player with start rank {who}")
    for who in byes:
        if who not in key:
            raise TrfError(f"round {round_no} bye: no player with start rank {who}")


async def _set_round(
    station: Station,
    state: TrfState,
    round_no: int,
    pairs: list[tuple[int, int]],
    byes: Mapping[int, str],
    *,
    send: bool,
    user: str | None,
    replace: int | None = None,
    dry_run: bool = False,
    whole: bool = False,
    what: str = "import_trf",
    saved_state: dict[str, Any] | None = None,
    player_rows: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Store the round's games on boards 1..n in order, its byes, and send ``set_game``.
    A round with results or clocks running is refused unless ``replace`` names it; ``whole``:
    the file is the whole round (a pairs list), so every player must be paired or have a bye."""
    store = station.require_store()
    key = state.key_of()
    _check_round(station, round_no, pairs, byes, key)
    rows = [
        {"board": str(board), "red": key[white], "black": key[black]}
        for board, (white, black) in enumerate(pairs, 1)
    ]
    unpaired: list[str] = []
    if whole:
        paired = {who for pair in pairs for who in pair}
        unpaired = check_coverage(round_no, paired, set(byes), key, state.withdrawn)
    moved = await place_beside_knockout(station, {round_no: rows})  # Meishan's rounds 8–9
    check_not_withdrawn(rows, state.withdrawn)
    guard = await guard_rounds(station, [round_no] if rows else [], replace=replace)
    preview: dict[str, Any] = {"round": round_no, "games": len(rows), "byes": len(byes)}
    if moved:
        preview["moved_boards"] = {str(r): m for r, m in moved.items()}
    if unpaired:
        preview["unpaired"] = unpaired  # left out by the engine (absent?): for the page to show
    again = rematches(await store.games(), {round_no: rows})
    if again:
        preview["rematches"] = again
    if dry_run:
        return {"dry_run": True, **preview, **guard.as_dict()}
    before = await tournament_desk.rounds_before(store, [round_no] if rows else [])
    if saved_state is not None:
        before["trf_state"] = saved_state  # what the file's players replaced
    if player_rows:
        before["player_rows"] = player_rows
    state.byes = [b for b in state.byes if b["round"] != round_no]
    state.byes += [{"round": round_no, "player": p, "kind": k} for p, k in sorted(byes.items())]
    if rows:
        await store.replace_rounds(station.tc, {round_no: rows}, void=guard.void, by=user)
    await save_state(store, state)  # after the round: a refused round leaves the byes as were
    if rows:
        assert station.ingest is not None
        station.ingest.add_paired_boards({r["board"] for r in rows})
        await station.round_boards.refresh(station)
    out = preview
    if guard.void:
        out["voided_results"] = list(guard.void)
    after = {"rounds": [round_no] if rows else [], "voided": list(guard.void)}
    args: dict[str, Any] = {"round": round_no, **counts(player_rows)}
    entry = await tournament_desk.record(
        store, user=user, what=what, args=args, before=before, after=after
    )
    out["audit"] = entry["id"]
    if send and rows:
        out["set_game"] = await station.send_round(round_no, user=user)
    return out


def _check_scoring(trf: Trf, station: Station) -> None:
    """A file that declares a point system (162, BB?, XXS) must declare the regulation's: the
    export writes the regulation's, so a different one would not survive the round trip."""
    lines = [
        n
        for n, rec in enumerate(trf.records, 1)
        if isinstance(rec, ScoringRecord | PointsRecord | XxsRecord)
    ]
    if not lines:
        return
    scoring = station.regulation.scoring
    want = {"W": scoring.win, "D": scoring.draw, "L": scoring.loss, "P": scoring.win}
    got = {k: trf.scoring[k] for k in want}
    if got != want:
        text = " ".join(f"{k} {v}" for k, v in got.items())
        raise TrfError(
            f"the file's point system ({text}) is not the regulation's "
            f"{scoring.win}/{scoring.draw}/{scoring.loss}",
            line=lines[0],
        )


def _kept_lines(trf: Trf) -> list[str]:
    """The tournament lines a players file wrote that the export keeps as written."""
    out: dict[str, str] = {}
    for rec in trf.records:
        if isinstance(rec, RawRecord) and rec.code in KEPT_CODES and rec.code not in out:
            out[rec.code] = rec.text.rstrip()
    return list(out.values())


async def import_trf(
    station: Station,
    data: str | bytes,
    *,
    send: bool = True,
    user: str | None = None,
    replace: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Players of a TRF, and the round it carries paired (if any). Raises ``TrfError``, or
    ``ImportRefused`` for a file of another event (start ranks that name other players, players
    with games missing) or a round it must not touch (``import_guard``). Everything is checked
    before anything is stored; ``dry_run`` stores nothing and says what it would change."""
    # A 9,999-player file is a second of CPU: parsed on a thread, the loop serves meanwhile.
    trf = await asyncio.to_thread(Trf.parse, data)
    _check_scoring(trf, station)
    store = station.require_store()
    state = await load_state(store)
    kept = {int(e["start_rank"]): str(e["key"]) for e in state.entrants}
    # who has a game: but a round the file pairs again whose games have not begun is the
    # file's to replace (a typo found on the morning of round 1: an outsider was refused)
    games = await store.games()
    paired = trf.paired_round()
    again = [g["game"] for g in games if g["round"] == paired]
    begun = await store.player_rows.begun(again)
    playing = {
        n
        for g in games
        if g["round"] != paired or g["game"] in begun
        for n in (g["red"], g["black"])
    }
    # before round 1 nothing hangs on a start rank yet — but a namesake's key does (张伟 (41))
    fresh = not (playing or state.byes or _namesakes(trf, state))
    file_keys = _keys([(p.start_rank, p.name) for p in trf.players])
    renumbered = False
    try:
        renames = check_entrants(kept, file_keys, playing)  # put right: rank -> (here, file)
    except ImportRefused:
        if not fresh:
            raise
        # A pairing program renumbers its list when a player is deleted (8..20 become 7..19):
        # its numbers are taken, players matched by name (an outsider organiser was refused),
        # unless few names are the same (another event's file)
        same_event(kept, file_keys)
        renames, renumbered = {}, True
    rank, gaps = closed_up(trf, before_round_one=fresh)
    keys = _keys([(rank[p.start_rank], p.name) for p in trf.players])
    renumbered = renumbered or bool(gaps)
    named = set(keys.values())
    olds = {old for old, _ in renames.values()}
    # the previous file's players this one no longer has (they never played: checked above)
    removes = sorted(k for k in kept.values() if k not in named and k not in olds)
    # ... nor had a bye: a bye is kept by start rank, and a dropped player's would be left to
    # no one (the export refused) or to the next player given that rank
    with_bye = {kept[int(b["player"])] for b in state.byes if int(b["player"]) in kept}
    if stuck := [k for k in removes if k in with_bye]:
        raise ImportRefused(
            "players_mismatch",
            f"{len(stuck)} player(s) with a bye here are not in the file ({', '.join(stuck)})",
            missing=stuck[:10],
            count=len(stuck),
        )
    nxt = trf.rounds_played + 1
    absent = {rank.get(r, r): kind for r, kind in trf.absent(nxt).items()}
    if paired is not None:
        rows = [{"board": str(i), "red": keys.get(w), "black": keys.get(b)}
                for i, (w, b) in enumerate(trf.pairings(paired), 1)]  # fmt: skip
        _check_round(station, paired, trf.pairings(paired), trf.absent(paired), keys)
        check_not_withdrawn(rows, state.withdrawn)
        await guard_rounds(station, [paired], replace=replace)
    elif absent:
        _check_round(station, nxt, [], absent, keys)
    if dry_run:
        known = set(kept.values()) | await store.player_names()
        preview: dict[str, Any] = {
            "dry_run": True,
            "players": len(trf.players),
            "new_players": sorted(set(keys.values()) - known - {n for _, n in renames.values()}),
            "round": paired,
        }
        preview.update(player_changes(renames, removes, renumbered))
        if gaps:
            preview["gaps"] = gaps
        if paired is not None:
            preview["games"] = len(trf.pairings(paired))
            guard = await guard_rounds(station, [paired], replace=replace)
            preview.update(guard.as_dict())
        return preview
    saved_state = dataclasses.asdict(state)
    state.entrants = [
        {
            "start_rank": rank[p.start_rank],
            "key": keys[rank[p.start_rank]],
            "name": p.name,
            "sex": p.sex,
            "title": p.title,
            "rating": p.rating,
            "federation": p.federation,
            "fide_id": p.fide_id,
            "birth": p.birth,
        }
        for p in trf.players
    ]
    state.header = {
        code: rec
        for code, rec in (
            ("name", trf.name),
            ("city", trf.value("022")),
            ("federation", trf.value("032")),
            ("start", trf.value("042")),
            ("end", trf.value("052")),
            ("chief_arbiter", trf.value("102")),
            ("initial_colour", trf.initial_colour),
            ("rounds", trf.total_rounds),  # 142 / XXR: the tournament's, not the regulation's
            ("kept", _kept_lines(trf)),
        )
        if rec
    }
    state.prohibited = [
        [x.first_round, x.last_round, [rank.get(r, r) for r in x.players]] for x in trf.prohibited
    ]
    known = await store.player_names()
    renamed, removed = await store.player_rows.rename_and_remove(
        dict(renames.values()), removes, but_round=paired
    )
    state.withdrawn = sorted(
        {renamed.get(w, w) for w in state.withdrawn if w not in {r["name"] for r in removed}}
    )
    added = sorted(named - known - set(renamed.values()))
    rows_before = {"renamed": renamed, "removed": removed, "added": added}  # what 撤销 puts back
    await store.add_players(
        [{"name": keys[rank[p.start_rank]], "rating": p.rating} for p in trf.players]
    )
    await save_state(store, state)
    out: dict[str, Any] = {"players": len(trf.players), "round": None}
    gone = [str(r["name"]) for r in removed if r["name"] in removes]
    out.update(player_changes(renames, gone, renumbered))
    if gaps:
        out["gaps"] = gaps
    if paired is None:
        if absent:  # a round not paired yet may already have its byes (240)
            out.update(
                await _set_round(
                    station,
                    state,
                    nxt,
                    [],
                    absent,
                    send=False,
                    user=user,
                    saved_state=saved_state,
                    player_rows=rows_before,
                )
            )
        else:
            before = {"rounds": [], "rows": {}, "trf_state": saved_state}
            before["player_rows"] = rows_before
            entry = await tournament_desk.record(
                store, user=user, what="import_trf", args={"round": None, **counts(rows_before)},
                before=before,
                after={"rounds": [], "voided": []},
            )  # fmt: skip
            out["audit"] = entry["id"]
        return out
    out.update(
        await _set_round(
            station,
            state,
            paired,
            trf.pairings(paired),
            trf.absent(paired),
            send=send,
            user=user,
            replace=replace,
            saved_state=saved_state,
            player_rows=rows_before,
        )
    )
    return out


async def _last_round(store: Store) -> int:
    return max((int(r["round"]) for r in await store.rounds()), default=0)


async def import_pairs(
    station: Station,
    data: str | bytes,
    *,
    round_no: int | None = None,
    send: bool = True,
    user: str | None = None,
    replace: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """An engine's pairs list as round ``round_no`` (default: the round after the last one
    paired); ``N 0`` is a pairing-allocated bye. Raises ``TrfError``, or ``ImportRefused``
    when it leaves players neither paired nor given a bye (another event's file) or touches
    a round it must not (``import_guard``)."""
    pairs = await asyncio.to_thread(parse_pairs, data)
    store = station.require_store()
    state = await load_state(store)
    # Start ranks for players a CSV brought: saved with the round, not by a refused file.
    await ensure_entrants(store, state, await store.player_names())
    if round_no is None:
        round_no = await _last_round(store) + 1
    games = [(w, b) for w, b in pairs if b]
    byes = {w: "U" for w, b in pairs if not b}
    kept = {  # absences already known for the round (a TRF's 240 records) stay
        int(b["player"]): str(b["kind"])
        for b in state.byes
        if b["round"] == round_no and b["kind"] != "U"
    }
    return await _set_round(
        station, state, round_no, games, {**kept, **byes}, send=send, user=user,
        replace=replace, dry_run=dry_run, whole=True, what="import_pairs",
    )  # fmt: skip


# -- export ------------------------------------------------------------------------------------
