"""The one root exception of broker_config, and its two kinds."""

from __future__ import annotations

__all__ = ["BrokerConfigError", "MosquittoError", "RosterError", "RosterProblem"]

from dataclasses import dataclass


class BrokerConfigError(Exception):
    """Root of every error raised by broker_config."""


@dataclass(frozen=True, slots=True)
class RosterProblem:
    """One thing wrong in a roster; ``key`` is a dotted path with indexes: ``node[1].boards``."""

    key: str
    reason: str

    def __str__(self) -> str:
        return f"{self.key or '(roster)'}: {self.reason}"


class RosterError(BrokerConfigError, ValueError):
    """A roster that cannot be used; says which file, which key and why (every problem found)."""

    def __init__(self, source: str, problems: list[RosterProblem]) -> None:
        self.source = source
        self.problems = tuple(problems)
        if len(problems) == 1:
            text = f"{source}: {problems[0]}"
        else:
            lines = "\n".join(f"  {p}" for p in problems)
            text = f"{source}: {len(problems)} problems:\n{lines}"
        super().__init__(text)


class MosquittoError(BrokerConfigError, RuntimeError):
    """Mosquitto or mosquitto_passwd could not be run, or did not come up; carries its log tail."""
