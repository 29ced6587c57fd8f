"""Decision txns a new station can trust: the station signs what it asked (issue 28).

A station decides a game only through the txn of a decision command it sent (``asks.py``);
it knows its txns from its command log. A station that lost its disk has no log, so the replayed
decisions of its predecessor were stored ``pending, unverified``. Where the record survives is
beside the boards' journals: every event a decision command settles carries that command's txn,
and the nodes journal it. So the txn itself carries the proof:

    sd-<nonce: 12 hex>-<mac: 24 hex>     mac = HMAC-SHA256(key, [venue, board, cmd, asked, nonce])

``asked`` is what the command asked, in the form the settling event says it again, and the game
the board was playing (the event's ``game``): ``result`` {game, winner, reason}, ``foul``
{game, side, reason}, ``resolve`` {game, seq, status} (the event's ``ref`` and ``status``),
``withdraw`` {game, seq} (a foul's or a standing result's dismissal by ``ref``); and,
not a decision but what a rebuild without a backup makes the round from, ``set_game`` {game,
red, black} (the board's ``ready`` event says them again: ``venue_station/domain/rebuild.py``).
``key`` is the station's ``decision_key_file`` (kept with the station's config by the
technician, never on the boards). A node sees every txn and keeps them, but without the key it
cannot make one for another board, another game, another outcome, another ruling or another
pairing: the MAC binds all of them. The game is why round 1's signed "red wins by resignation"
cannot be stamped onto round 3's game on the same board (the original dropped from the
journal) and be taken by a new station. A new
station with the same key that meets a txn it never logged checks the event against it and,
when it matches, takes it as its own ask (``Asks.sent``); the usual rules then apply (one
decision per txn, its follow-ons once each). Who ruled is not in a txn (64 characters): a
decision adopted this way says ``by`` = ``SIGNED_BY``.

Why not a retained topic: the broker often runs on the station's laptop and dies with its
disk; the boards' journals do not (docs/operations.md).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["PREFIX", "SIGNED_BY", "STATION_SET", "TxnSigner", "load_key", "signer_for"]

log = logging.getLogger(__name__)
PREFIX = "sd-"
SIGNED_BY = "(signed txn)"
# In a stored ``ready`` event's data: its txn is the station's signed ``set_game`` (guard.py)
STATION_SET = "station_set"
_TXN = re.compile(r"^sd-([0-9a-f]{12})-([0-9a-f]{24})$")
KEY_BYTES = 32


def load_key(path: Path, *, create: bool = True) -> bytes:
    """The key in ``path`` (hex); a missing file is made (0600) when ``create``."""
    if not path.exists() and create:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = path.open("x", encoding="ascii")
        with fd:
            fd.write(secrets.token_hex(KEY_BYTES) + "\n")
        path.chmod(0o600)
    text = path.read_text(encoding="ascii").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{path}: not a hex key") from None
    if len(key) < 16:
        raise ValueError(f"{path}: a key of at least 16 bytes (32 hex digits) is needed")
    return key


def signer_for(path: Path | None, venue: str) -> TxnSigner | None:
    """The station's signer from its ``decision_key_file`` (None: no key configured); the key
    is made when the file is missing. A key that cannot be read is a StationError."""
    from venue_station.errors import StationError

    if path is None:
        return None
    made = not path.exists()
    try:
        signer = TxnSigner(load_key(path), venue)
    except (OSError, ValueError) as exc:
        raise StationError(f"decision_key_file: {exc}") from None
    if made:
        log.warning("made the decision key %s: keep it with the station's config", path)
    return signer


def _asked(cmd: str, args: Mapping[str, Any], game: str | None) -> list[Any] | None:
    """What the MAC binds for ``cmd``: what it asked and the game it asked it of (a
    ``set_game`` names its game itself)."""
    if cmd == "result":
        return [game, args.get("winner"), args.get("reason")]
    if cmd == "foul":
        return [game, args.get("side"), args.get("reason")]
    if cmd == "set_game":  # the pairing a rebuild makes again (domain/rebuild.py), not a decision
        named = args.get("game")
        return None if not isinstance(named, str) else [named, args.get("red"), args.get("black")]
    if cmd == "resolve":
        seq = args.get("seq")
        return None if not isinstance(seq, int) else [game, seq, args.get("status")]
    if cmd == "withdraw":  # a confirmed foul taken back: its dismissal names it by ref
        seq = args.get("seq")
        return None if not isinstance(seq, int) else [game, seq]
    return None


class TxnSigner:
    def __init__(self, key: bytes, venue: str) -> None:
        self._key = key
        self.venue = venue

    def __repr__(self) -> str:
        return f"TxnSigner(venue={self.venue!r})"

    def _mac(self, board: str, cmd: str, asked: list[Any], nonce: str) -> str:
        text = json.dumps([self.venue, board, cmd, asked, nonce], ensure_ascii=False)
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()[:24]

    def make(
        self, board: str, cmd: str, args: Mapping[str, Any], *, game: str | None
    ) -> str | None:
        """A signed txn for a decision command to ``board`` while it plays ``game`` (the
        game its settling event will name); None for any other command."""
        asked = _asked(cmd, args, game)
        if asked is None:
            return None
        nonce = secrets.token_hex(6)
        return f"{PREFIX}{nonce}-{self._mac(board, cmd, asked, nonce)}"

    def signed(self, txn: str | None, board: str, cmd: str, args: Mapping[str, Any]) -> bool:
        """Whether this station signed ``txn`` for ``cmd`` to ``board`` asking ``args`` (a
        ``set_game``: its game is in ``args``)."""
        found = _TXN.match(txn or "")
        asked = _asked(cmd, args, args.get("game"))
        if found is None or asked is None:
            return False
        nonce, mac = found.groups()
        return hmac.compare_digest(mac, self._mac(board, cmd, asked, nonce))

    def ask_of(
        self, txn: str | None, board: str, game: str | None, type_: str, data: Mapping[str, Any]
    ) -> tuple[str, dict[str, Any]] | None:
        """The command (name, args) this station signed as ``txn`` for ``board`` playing
        ``game`` that the event (``game``, ``type_``, ``data``) says again, or None (not
        signed, not by this key, not for this board or game, or not what it asked)."""
        found = _TXN.match(txn or "")
        if found is None:
            return None
        nonce, mac = found.groups()
        for cmd, args in self._candidates(type_, data):
            asked = _asked(cmd, args, game)
            if asked is not None and hmac.compare_digest(mac, self._mac(board, cmd, asked, nonce)):
                return cmd, args
        return None

    @staticmethod
    def _candidates(type_: str, data: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        if data.get("ref") is not None:
            if type_ in ("foul", "result") and data.get("status") == "dismissed":
                out.append(("withdraw", {"seq": data.get("ref")}))
            out.append(("resolve", {"seq": data.get("ref"), "status": data.get("status")}))
        elif type_ == "result":
            reason = data.get("reason")
            out.append(("result", {"winner": data.get("winner"), "reason": reason}))
            # a tie-break draw: the arbiter entered no winner, the node's referee named one
            out.append(("result", {"winner": None, "reason": reason}))
        elif type_ == "foul":
            out.append(("foul", {"side": data.get("side"), "reason": data.get("reason")}))
        return out
