"""A players file's changes to the list beside the import (``trf_io.import_trf``): the names it
put right and the players it dropped, as the preview, the answer and the change log say them;
and before round 1 a list with a gap numbered 1..n; and the comment line that says who plays
Meishan's knockout beside the Swiss rounds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clock_service.trf.document import Trf

if TYPE_CHECKING:
    from venue_station.domain.knockout import KnockoutRecord

__all__ = ["closed_up", "counts", "knockout_note", "player_changes"]


def player_changes(
    renames: Mapping[int, tuple[str, str]], removes: list[str], renumbered: bool = False
) -> dict[str, Any]:
    """The names a file put right and the players it no longer has, for the chief to see in
    the preview and the answer (each only when there is one); ``renumbered``: the file's start
    ranks taken as they are (before round 1)."""
    out: dict[str, Any] = {"renumbered": True} if renumbered else {}
    if renames:
        out["renamed"] = [
            {"start_rank": rank, "from": old, "to": new} for rank, (old, new) in renames.items()
        ]
    if removes:
        out["removed"] = removes
    return out


def closed_up(trf: Trf, *, before_round_one: bool) -> tuple[dict[int, int], list[int]]:
    """start rank in the file -> the station's, and the ranks missing: before round 1 (no game,
    no bye here, none played or paired in the file) a list with a gap — a no-show deleted and
    not renumbered — is numbered 1..n in its order (a pairing engine refuses a missing
    number: an outsider's round 1 could not be paired); else the file's ranks as they are."""
    ranks = sorted(p.start_rank for p in trf.players)
    same = {r: r for r in ranks}
    if not before_round_one or trf.rounds_played or trf.paired_round() is not None:
        return same, []
    gaps = sorted(set(range(1, ranks[-1] + 1)) - set(ranks)) if ranks else []
    return ({r: i for i, r in enumerate(ranks, 1)}, gaps) if gaps else (same, [])


def counts(player_rows: Mapping[str, Any] | None) -> dict[str, int]:
    """How many names an import put right, removed and added (its change log entry says)."""
    rows = player_rows or {}
    counts = {k: len(rows.get(k) or ()) for k in ("renamed", "removed", "added")}
    return {k: n for k, n in counts.items() if n}


def knockout_note(rec: KnockoutRecord | None, rank_of: Mapping[str, int]) -> str | None:
    """A ``###`` comment (the engines skip such lines: docs/pairing.md) naming the knockout's
    players by start rank: they are absent (Z) from the Swiss rounds played beside it, and its
    games are not in the file (an outsider chief found nothing saying why)."""
    if rec is None:
        return None
    after = int(rec.doc["after_round"])
    ranks = sorted(rank_of[p] for p in rec.doc["top"] if p in rank_of)
    return (
        f"### knockout after round {after}: start ranks {' '.join(map(str, ranks))} play it "
        f"beside rounds {after + 1}-{after + 2}; its games are not in this file"
    )
