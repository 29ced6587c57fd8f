"""The one root exception of the ``qizhong`` package (the CLI, the simulation, the deploy
tools; gpiozero's ``exc`` pattern): the bundle, Pi root, seccomp filter and local venue errors
descend from :class:`QizhongError` (the venue's stays a ``RuntimeError`` too)."""

from __future__ import annotations

__all__ = ["QizhongError"]


class QizhongError(Exception):
    """Root of every error raised by the qizhong package."""
