"""The reason codes of a regulation: each foul, immediate loss (立即判负) and result reason with
the seed's Chinese wording, an English one, and the count that makes it a loss.

A profile lists them as tables (``[fouls.reasons.move_rule_violation]`` with ``zh``, ``en``;
a forfeit reason may say ``count`` and ``of``: “违反行棋规定2次的” is 2 confirmed fouls of
``move_rule_violation``). A bare array of codes is still read (older profiles): the code is then
its own wording.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from clock_service.profile_table import CODE_RE, Table, toml_type

__all__ = ["KINDS", "Reason", "read_reasons"]

KINDS = ("foul", "forfeit", "result")
MAX_REASONS = 64  # per kind: the arbiter's drop-down, not a database
MAX_TEXT = 200  # characters of one wording


@dataclasses.dataclass(frozen=True)
class Reason:
    """One code. ``count``/``of``: this many confirmed fouls of the code ``of`` lose the game
    (``of`` None with a count: fouls of any reason, the profile's ``fouls.forfeit_at``)."""

    code: str
    kind: str
    zh: str
    en: str
    count: int | None = None
    of: str | None = None

    def text(self, lang: str = "zh") -> str:
        return self.en if lang == "en" else self.zh

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def read_reasons(t: Table, name: str, kind: str) -> tuple[Reason, ...]:
    """The reasons under ``t[name]``: a table of tables, or (older profiles) an array of codes."""
    if isinstance(t.data.get(name), list):
        return tuple(Reason(code, kind, code, code) for code in t.codes(name))
    table = t.table(name)
    out = []
    for code in table.data:
        if not CODE_RE.match(code):
            raise table.error(code, f"{code!r} is not a code like 'board_pause'")
        entry = table.table(code)
        count = entry.integer("count", low=1, high=100) if entry.has("count") else None
        of = entry.text("of") if entry.has("of") else None
        if of is not None and kind != "forfeit":
            raise entry.error("of", "only an immediate loss (forfeits) counts fouls")
        if of is not None and count is None:
            raise entry.error("count", "missing value (an integer expected with 'of')")
        out.append(Reason(code, kind, _wording(entry, "zh"), _wording(entry, "en"), count, of))
        entry.done()
    if len(out) > MAX_REASONS:
        raise t.error(name, f"{len(out)} reasons, at most {MAX_REASONS}")
    return tuple(out)


def _wording(t: Table, name: str) -> str:
    value = t.text(name)
    if len(value) > MAX_TEXT:
        raise t.error(name, f"{len(value)} characters, at most {MAX_TEXT}")
    if name == "en" and not value.isascii():
        raise t.error(name, f"the English wording must be ASCII, got {toml_type(value)}")
    return value
