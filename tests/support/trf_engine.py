"""A stand-in pairing engine, invoked like bbpPairings: ``trf_engine.py --dutch in.trf -p out``.

It reads the TRF as strictly as bbpPairings and JaVaFo do (``clock_service.trf.engines``, written
from their published parsing rules, not from qizhong's own TRF reader or writer): any line either
engine would refuse makes it print ``Error parsing file <f>: …`` and exit 3, as bbpPairings does.
Then it pairs the next round with a simple, deterministic Swiss — by score (the results under the
declared point system), then start rank; the top player meets the first one below he has not met;
the colour to whoever had it less, else the other colour than last time, else the file's initial
colour on odd boards; a pairing-allocated bye (``N 0``) to the lowest player who had none when
the number present is odd. Known byes and absences of the round (``0000 - Z/H/F`` in the players'
own column, ``240``) are not paired. It is a stand-in, not FIDE's Dutch system.

Output (``-p FILE``): the number of pairs, then ``white black`` per line, the bye ``N 0`` last.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the engine runs as its own process, from any folder: the project root on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from clock_service.trf.engines import EngineView, read

__all__ = ["EngineRefused", "pair", "pair_text"]


class EngineRefused(ValueError):
    """The file was refused; ``str()`` is what bbpPairings would print."""


def _view(data: bytes) -> EngineView:
    view = read(data, pairing=True)
    if view.refusals:
        first = view.refusals[0]
        where = f" (line {first.line})" if first.line else ""
        raise EngineRefused(f"{first.reason}{where} [{first.engine}]")
    return view


def pair(data: bytes) -> list[tuple[int, int]]:
    """The next round's pairs (white, black); ``(N, 0)`` is the bye. Raises ``EngineRefused``
    for a file an engine would refuse, ``RuntimeError`` when no pairing exists."""
    view = _view(data)
    played = view.played
    out_now = {who for rnd, who, _n, _k in view.byes_240 if rnd == played + 1}
    for p in view.players.values():
        if len(p.cells) > played:  # the next round's own column: a known bye or absence
            out_now.add(p.id)
    present = [p for p in view.players.values() if p.id not in out_now]
    score = {p.id: sum(view.cell_points(c) for c in p.cells[:played]) for p in present}
    order = sorted(present, key=lambda p: (-score[p.id], p.id))
    met = {p.id: {c.opponent for c in p.cells if c.opponent} for p in present}
    forbidden = {
        frozenset((a, b))
        for first, last, ids, _n in view.forbidden
        if first <= played + 1 <= last
        for a in ids
        for b in ids
        if a != b
    }
    ids = [p.id for p in order]
    bye = None
    if len(ids) % 2:
        had = {p.id for p in present if any(c.result in "U+" and not c.opponent for c in p.cells)}
        bye = next((x for x in reversed(ids) if x not in had), ids[-1])
        ids.remove(bye)
    budget = [200_000]

    def solve(rest: list[int]) -> list[tuple[int, int]] | None:
        if not rest:
            return []
        budget[0] -= 1
        if budget[0] < 0:
            return None
        top = rest[0]
        for other in rest[1:]:
            if other in met[top] or frozenset((top, other)) in forbidden:
                continue
            tail = solve([x for x in rest[1:] if x != other])
            if tail is not None:
                return [(top, other), *tail]
        return None

    matched = solve(ids)
    if matched is None:
        raise RuntimeError("No valid pairing exists.")
    by_id = {p.id: p for p in present}

    def balance(who: int) -> tuple[int, str]:
        colours = [c.colour for c in by_id[who].cells[:played] if c.colour]
        return colours.count("w") - colours.count("b"), (colours[-1] if colours else "")

    pairs = []
    first = (view.initial_colour or "W").lower()
    for board, (a, b) in enumerate(matched, 1):
        (da, la), (db, lb) = balance(a), balance(b)
        if da != db:
            white_a = da < db
        elif la != lb and la and lb:
            white_a = la == "b"
        elif la or lb:
            white_a = (la or ("w" if lb == "b" else "b")) == "b"
        else:
            white_a = (first == "w") == (board % 2 == 1)
        pairs.append((a, b) if white_a else (b, a))
    if bye is not None:
        pairs.append((bye, 0))
    return pairs


def pair_text(data: bytes) -> str:
    pairs = pair(data)
    return "\n".join([str(len(pairs)), *(f"{w} {b}" for w, b in pairs)]) + "\n"


def main(argv: list[str]) -> int:
    """``--dutch IN -p OUT`` (bbpPairings' command line); exit 3 on a refused file."""
    if len(argv) != 4 or argv[0] != "--dutch" or argv[2] != "-p":
        print("usage: trf_engine.py --dutch input.trf -p output.txt", file=sys.stderr)
        return 2
    source, target = Path(argv[1]), Path(argv[3])
    try:
        text = pair_text(source.read_bytes())
    except EngineRefused as exc:
        print(f"Error parsing file {source}: {exc}", file=sys.stderr)
        return 3
    except RuntimeError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
