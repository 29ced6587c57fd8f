"""The one root exception of the station and its few subclasses."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ImportRefused",
    "PairingsError",
    "StationError",
    "StoreError",
    "StoreUnavailable",
]


class StationError(Exception):
    """Root of every error the station raises on purpose."""


class ConfigError(StationError):
    """A station config that cannot be used: ``source``, ``key`` and ``reason`` say why."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source, self.key, self.reason = source, key, reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


class StoreError(StationError):
    """The database cannot be used (e.g. its schema is newer than this code)."""


class StoreUnavailable(StationError):
    """The station runs without its database for now (it could not open it: a full disk); it
    keeps trying. The web answers 503 for what needs it (the live views still serve)."""


class PairingsError(StationError):
    """A pairings CSV that cannot be imported; ``line`` is 1-based (the header is line 1);
    ``code`` (with ``args``), where there is one, says why for the pages to word."""

    def __init__(
        self, source: str, line: int, reason: str, *, code: str = "", **args: object
    ) -> None:
        self.source, self.line, self.reason = source, line, reason
        self.code, self.args_ = code, args
        super().__init__(f"{source}: line {line}: {reason}" if line else f"{source}: {reason}")


class ImportRefused(StationError):
    """An import (players, pairings, a TRF, a pairs list) the station refuses as a whole:
    ``code`` for the pages to translate (``round_has_results``, ``round_in_play``,
    ``players_mismatch``, ``players_unpaired``), ``args`` its arguments. Nothing was stored."""

    def __init__(self, code: str, message: str, **args: object) -> None:
        super().__init__(message)
        self.code, self.message, self.args_ = code, message, args
