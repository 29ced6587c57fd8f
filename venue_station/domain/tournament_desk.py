"""The chief's changes to the tournament: withdraw (退赛) and re-admit a player, give a bye, and
the audit of every change (imports too) with undo of the last one.

The audit is a list in the ``meta`` table (key ``tournament.audit``): each entry says who,
when, what (``withdraw``, ``readmit``, ``bye``, ``import_pairings``, ``import_trf``,
``import_pairs``), its arguments, and before → after of what it changed (the TRF side's state;
for an import the rounds' pairings and games as they were). ``undo`` puts the last entry's
``before`` back — refused (``ImportRefused``) when something changed it since, or when the
import's games have begun (events stored) or voided results (those stay voided).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from venue_station.domain.trf_state import TrfState, ensure_entrants, load_state, save_state
from venue_station.errors import ImportRefused
from venue_station.store import round_snapshots
from wire_contract.wallclock import wall_ms

if TYPE_CHECKING:
    from venue_station.domain.station import Station
    from venue_station.store.database import Store

__all__ = [
    "AUDIT_KEY",
    "BYE_KINDS",
    "audit_log",
    "check_not_stale",
    "give_bye",
    "record",
    "rounds_before",
    "set_withdrawn",
    "undo_last",
]

AUDIT_KEY = "tournament.audit"
BYE_KINDS = {"full": "F", "half": "H", "zero": "Z"}  # TRF codes: the standings count F, H
_KEEP = 500  # audit entries kept


def _state_dict(state: TrfState) -> dict[str, Any]:
    return dataclasses.asdict(state)


async def audit_log(store: Store) -> list[dict[str, Any]]:
    text = await store.get_meta(AUDIT_KEY)
    return list(json.loads(text)) if text else []


async def record(
    store: Store,
    *,
    user: str | None,
    what: str,
    args: Mapping[str, Any],
    before: Any,
    after: Any,
) -> dict[str, Any]:
    """Append one change to the audit; returns the entry."""
    log = await audit_log(store)
    entry = {
        "id": (log[-1]["id"] + 1) if log else 1,
        "at_ms": wall_ms(),
        "user": user,
        "what": what,
        "args": dict(args),
        "before": before,
        "after": after,
        "undone": False,
    }
    log = [*log, entry][-_KEEP:]
    await store.set_meta(AUDIT_KEY, json.dumps(log, ensure_ascii=False, default=str))
    return entry


async def rounds_before(store: Store, rounds: Iterable[int]) -> dict[str, Any]:
    """What an import of ``rounds`` replaces: for its audit entry (and its undo)."""
    wanted = sorted(set(rounds))
    return {
        "rounds": wanted,
        "rows": await round_snapshots.take(store.engine, wanted),
        "trf_state": _state_dict(await load_state(store)),
    }


def _key(state: TrfState, player: str) -> int:
    rank = state.rank_of().get(player)
    if rank is None:
        raise ImportRefused("no_player", f"no player {player!r} in this event", player=player)
    return rank


async def _known(station: Station, player: str) -> TrfState:
    """The TRF state with a start rank for every player (given once, kept)."""
    store = station.require_store()
    state = await load_state(store)
    await ensure_entrants(store, state, await store.player_names())
    _key(state, player)
    return state


async def set_withdrawn(
    station: Station, player: str, *, withdrawn: bool, user: str | None
) -> dict[str, Any]:
    """Withdraw (退赛) or re-admit ``player``: the withdrawn are paired by no import, shown as
    withdrawn, and absent (``Z``) in the TRF after their last game."""
    store = station.require_store()
    before = _state_dict(await load_state(store))
    state = await _known(station, player)
    if withdrawn == (player in state.withdrawn):
        code = "already_withdrawn" if withdrawn else "not_withdrawn"
        raise ImportRefused(code, f"{player} is {'already' if withdrawn else 'not'} withdrawn",
                            player=player)  # fmt: skip
    state.withdrawn = (
        sorted({*state.withdrawn, player})
        if withdrawn
        else [p for p in state.withdrawn if p != player]
    )
    await save_state(store, state)
    what = "withdraw" if withdrawn else "readmit"
    entry = await record(
        store, user=user, what=what, args={"player": player}, before=before,
        after=_state_dict(state),
    )  # fmt: skip
    return {"player": player, "withdrawn": withdrawn, "audit": entry["id"]}


async def give_bye(
    station: Station, round_no: int, player: str, kind: str, *, user: str | None
) -> dict[str, Any]:
    """A bye for ``player`` in ``round_no``: full (the win's points), half (the draw's), zero."""
    store = station.require_store()
    rounds = station.regulation.tournament.rounds
    if not 1 <= round_no <= rounds:
        raise ImportRefused("bad_round", f"round {round_no} is not 1..{rounds}", round=round_no)
    before = _state_dict(await load_state(store))
    state = await _known(station, player)
    for game in await store.games(round_no):
        if player in (game["red"], game["black"]):
            raise ImportRefused(
                "player_paired",
                f"{player} plays {game['game']} in round {round_no}: no bye",
                player=player, round=round_no, game=game["game"],
            )  # fmt: skip
    rank = _key(state, player)
    state.byes = [b for b in state.byes if not (b["round"] == round_no and b["player"] == rank)]
    state.byes.append({"round": round_no, "player": rank, "kind": BYE_KINDS[kind]})
    state.byes.sort(key=lambda b: (int(b["round"]), int(b["player"])))
    await save_state(store, state)
    entry = await record(
        store, user=user, what="bye", args={"round": round_no, "player": player, "kind": kind},
        before=before, after=_state_dict(state),
    )  # fmt: skip
    return {"round": round_no, "player": player, "kind": kind, "audit": entry["id"]}


async def undo_last(station: Station, *, user: str | None) -> dict[str, Any]:
    """Put back what the last change (not undone yet) replaced."""
    store = station.require_store()
    log = await audit_log(store)
    entry = next((e for e in reversed(log) if not e["undone"] and e["what"] != "undo"), None)
    if entry is None:
        raise ImportRefused("nothing_to_undo", "no change to undo")
    now = _state_dict(await load_state(store))
    if entry["what"].startswith("import_"):
        before = entry["before"]
        if entry["after"].get("voided"):
            raise ImportRefused(
                "undo_voided",
                "this import voided results; they stay voided (import the round again)",
                audit=entry["id"],
            )
        games = [g["game"] for g in await store.games() if g["round"] in before["rounds"]]
        begun = await round_snapshots.games_with_events(store.engine, games)
        if begun:
            raise ImportRefused(
                "undo_games_begun",
                f"{len(begun)} game(s) of this import have begun ({', '.join(begun[:5])})",
                audit=entry["id"], games=begun[:10],
            )  # fmt: skip
        await round_snapshots.put_back(store.engine, before["rounds"], before["rows"])
        await station.round_boards.refresh(station)
        await save_state(store, TrfState(**before["trf_state"]))
        if before.get("player_rows"):  # names a players file put right, rows it dropped
            rows = before["player_rows"]
            await store.player_rows.put_back(
                rows["renamed"], rows["removed"], rows.get("added", ())
            )
    else:
        if now != entry["after"]:
            raise ImportRefused(
                "undo_stale", "something changed since; undo that first", audit=entry["id"]
            )
        await save_state(store, TrfState(**entry["before"]))
    log = await audit_log(store)
    for e in log:
        if e["id"] == entry["id"]:
            e["undone"] = True
    await store.set_meta(AUDIT_KEY, json.dumps(log, ensure_ascii=False, default=str))
    undo = await record(
        store, user=user, what="undo", args={"audit": entry["id"], "what": entry["what"]},
        before=None, after=None,
    )  # fmt: skip
    return {"undone": entry["id"], "what": entry["what"], "audit": undo["id"]}


async def check_not_stale(store: Store, names: Collection[str]) -> None:
    """A players list (CSV) that still names a player a players file has since put right or
    removed (its import not undone) is refused, naming them: the organiser's spreadsheet,
    imported again after the corrections, brought the old names back as players of their own
    (an outsider: two ghosts took 本地组 places)."""
    present = await store.player_names()
    renamed: dict[str, str] = {}
    removed: set[str] = set()
    for entry in await audit_log(store):
        rows = (entry.get("before") or {}).get("player_rows") if not entry["undone"] else None
        if rows:
            renamed.update(rows.get("renamed") or {})
            removed.update(str(r["name"]) for r in rows.get("removed") or ())
    asked = set(names) - present
    stale_renamed = sorted(n for n in asked if n in renamed)
    stale_removed = sorted(n for n in asked if n in removed and n not in renamed)
    if stale_renamed or stale_removed:
        raise ImportRefused(
            "players_stale",
            f"the list names {len(stale_renamed) + len(stale_removed)} player(s) a players "
            "file has since put right or removed: correct the list first",
            renamed=[f"{n} → {renamed[n]}" for n in stale_renamed][:10],
            removed=stale_removed[:10],
            count=len(stale_renamed) + len(stale_removed),
        )
