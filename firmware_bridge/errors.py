"""The one root exception of firmware_bridge (gpiozero's ``exc`` pattern): :class:`FaceError`.

The GPIO face, the displays and the serial stack (codec, link, emulator) raise subclasses of
it; ``firmware_bridge.face`` re-exports it where the face's users have always found it.
"""

from __future__ import annotations

__all__ = ["FaceError"]


class FaceError(Exception):
    """Root of every error raised by ``firmware_bridge``."""
