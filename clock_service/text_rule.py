"""The one rule for a name (or any short text) that comes in, whichever way it comes.

A player's name from the players CSV, a TRF (``POST /api/trf``), a pairs list, an account's
user name, a TRF record's text: each ends up on the arbiter's pages, the hall screens, the
exports and the hub. None may carry a control or format character: C0/C1 controls (NUL, ESC,
DEL...), bidi embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069), zero-width
characters (U+200B..U+200D), the BOM inside text (U+FEFF), soft hyphen and the other Unicode
``Cf`` characters, and the line and paragraph separators (U+2028, U+2029). The importers
refuse such text naming the field (and line); nothing of that import is stored.

In the pure core, the lowest layer every importer may import (tests/system/test_import_rules.py).
"""

from __future__ import annotations

import unicodedata

__all__ = ["REFUSED_CATEGORIES", "control_at", "text_problem"]

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def control_at(text: str) -> int | None:
    """The 1-based position of the first refused character, else None."""
    for i, ch in enumerate(text, 1):
        if unicodedata.category(ch) in REFUSED_CATEGORIES:
            return i
    return None


def text_problem(text: str) -> str | None:
    """What is wrong with ``text`` by the rule (``"control character U+202E at position 3"``),
    else None."""
    at = control_at(text)
    if at is None:
        return None
    return f"control character U+{ord(text[at - 1]):04X} at position {at}"
