"""The one root exception of board_nodes (gpiozero's ``exc`` pattern).

The node's configuration, command and journal errors descend from :class:`BoardNodeError`;
those about bad input stay ``ValueError`` too.
"""

from __future__ import annotations

__all__ = ["BoardNodeError"]


class BoardNodeError(Exception):
    """Root of every error raised by board_nodes."""
