"""The one root exception of federation_hub, and its kinds."""

from __future__ import annotations

__all__ = ["FederationError", "HubConfigError", "RecordError"]


class FederationError(Exception):
    """Root of every error raised by federation_hub."""


class RecordError(FederationError, ValueError):
    """A message from JetStream that is not a valid report: says which subject and why."""


class HubConfigError(FederationError, ValueError):
    """Settings the hub cannot run with (says which and why)."""
