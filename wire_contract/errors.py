"""The one root exception of wire_contract (gpiozero's ``exc`` pattern).

:class:`~wire_contract.topics.WireError` (a payload, topic or command off the contract) and
:class:`~wire_contract.bounds.PayloadBoundError` (a payload over a byte bound) descend from
:class:`WireContractError`; both stay ``ValueError``.
"""

from __future__ import annotations

__all__ = ["WireContractError"]


class WireContractError(Exception):
    """Root of every error raised by wire_contract."""
