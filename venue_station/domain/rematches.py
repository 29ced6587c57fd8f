"""Players paired again: a Swiss pairs nobody twice, so an import that does says so.

A warning, not a refusal — a small event or a round the chief paired by hand may mean it — in
the import's answer and its preview (``rematches``), which the pairing page words. An outsider
organiser found a demo's pairs file with one pair in four rounds, taken without a word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["rematches"]


def rematches(
    played: Sequence[Mapping[str, Any]], by_round: Mapping[int, Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """Each new pairing whose two players met in an earlier round — a stored game
    (``played``: rows with ``round``, ``red``, ``black``) or an earlier round of the same file —
    with the rounds they met in, by round and board."""
    met: dict[frozenset[str], set[int]] = {}
    for g in played:
        met.setdefault(frozenset((g["red"], g["black"])), set()).add(int(g["round"]))
    for round_no, rows in by_round.items():
        for row in rows:
            met.setdefault(frozenset((row["red"], row["black"])), set()).add(round_no)
    out = []
    for round_no, rows in sorted(by_round.items()):
        for row in rows:
            before = sorted(r for r in met[frozenset((row["red"], row["black"]))] if r < round_no)
            if before:
                out.append({"round": round_no, "board": str(row["board"]), "red": row["red"],
                            "black": row["black"], "met": before})  # fmt: skip
    return out
