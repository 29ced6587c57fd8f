"""The one root exception of the station and its few subclasses."""

from __future__ import annotations

__all__ = ["ConfigError", "PairingsError", "StationError", "StoreError"]


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


class PairingsError(StationError):
    """A pairings CSV that cannot be imported; ``line`` is 1-based (the header is line 1)."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source, self.line, self.reason = source, line, reason
        super().__init__(f"{source}: line {line}: {reason}" if line else f"{source}: {reason}")
