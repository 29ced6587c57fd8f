"""The one root exception of clock_service (gpiozero's ``exc`` pattern).

Every error the core raises on purpose descends from :class:`ClockServiceError`; each also
stays a ``ValueError`` (bad input to a pure function), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["ClockServiceError"]


class ClockServiceError(Exception):
    """Root of every error raised by clock_service."""
