"""A pairing engine's answer as a plain pairs list (JaVaFo, bbpPairings ``-p``): the first line
is the number of pairs, then one pair per line in board order, ``white black`` start ranks;
``N 0`` is a bye for N. Errors are ``TrfError`` naming the line."""

from __future__ import annotations

from clock_service.text_rule import text_problem
from clock_service.trf.records import MAX_START_RANK, TrfError

__all__ = ["pairs_text", "parse_pairs"]

MAX_PAIRS = 5000  # 9999 players


def parse_pairs(data: str | bytes) -> list[tuple[int, int]]:
    """``[(white, black), …]`` in board order; black 0 is a bye (at most one)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TrfError(f"not UTF-8 (byte {exc.start})") from None
    lines = data.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise TrfError("empty pairs list; the first line is the number of pairs", line=1)
    head = lines[0].strip()
    if not head.isdigit() or not head.isascii() or int(head) > MAX_PAIRS:
        raise TrfError(f"the number of pairs {head!r} is not 0..{MAX_PAIRS}", line=1)
    count = int(head)
    pairs: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    bye_line = 0
    for n, text in enumerate(lines[1:], 2):
        if len(pairs) == count:
            raise TrfError(f"{count} pairs announced on line 1, more given", line=n)
        problem = text_problem(text)
        if problem is not None:
            raise TrfError(f"pair: {problem}; a pair is two start ranks", line=n)
        fields = text.split()
        if len(fields) != 2:
            raise TrfError(f"expected two start ranks 'white black', got {text.strip()!r}", line=n)
        ids = []
        for f in fields:
            if not f.isdigit() or not f.isascii() or int(f) > MAX_START_RANK:
                raise TrfError(f"start rank {f!r} is not 1..{MAX_START_RANK} (0: bye)", line=n)
            ids.append(int(f))
        white, black = ids
        if white == 0:
            raise TrfError("a bye is 'N 0': the player first, 0 second", line=n)
        if white == black:
            raise TrfError(f"player {white} cannot play himself", line=n)
        if black == 0:
            if bye_line:
                raise TrfError(f"a second bye (the first on line {bye_line})", line=n)
            bye_line = n
        for who in (white, black):
            if who and who in seen:
                raise TrfError(f"player {who} is already paired on line {seen[who]}", line=n)
            seen[who] = n
        pairs.append((white, black))
    if len(pairs) != count:
        raise TrfError(f"{count} pairs announced, {len(pairs)} given", line=1)
    return pairs


def pairs_text(pairs: list[tuple[int, int]], newline: str = "\n") -> str:
    """The pairs list an engine would print for these pairs."""
    return newline.join([str(len(pairs)), *(f"{w} {b}" for w, b in pairs)]) + newline
