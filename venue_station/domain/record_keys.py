"""The per-board key of the record page (录谱): ``/record/{board}?key=…`` on the responsible
player's phone opens a recorder session for that one board and nothing else.

The key is an HMAC-SHA256 of the station's secret and the board id, cut to 128 bits (base64url,
22 characters): the same key for the whole event, printed as a QR code on the chief's sheet.
The secret is made once (``secrets.token_bytes``) and kept in the store's ``meta`` table
(``record_key_secret``), so keys survive a restart and a backup restored; deleting that row
makes every printed key invalid, and ends the sessions they opened (at their next action, or
at the next start: ``secret_fingerprint``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from venue_station.store.database import Store

__all__ = ["check_record_key", "record_key", "secret_fingerprint"]

SECRET_META = "record_key_secret"


async def _secret(store: Store) -> bytes:
    text = await store.get_meta(SECRET_META)
    if text is None:
        text = secrets.token_hex(32)
        await store.set_meta(SECRET_META, text)
        text = await store.get_meta(SECRET_META) or text
    return bytes.fromhex(text)


async def secret_fingerprint(store: Store) -> str | None:
    """Which secret the keys are made with now (None: none yet, or its row deleted): a key's
    session remembers it, and ends once it is another (``auth.Session.key_fp``)."""
    text = await store.get_meta(SECRET_META)
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()[:32]


async def record_key(store: Store, board: str) -> str:
    """The key that opens ``board``'s record page."""
    digest = hmac.new(await _secret(store), f"record:{board}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).decode("ascii").rstrip("=")


async def check_record_key(store: Store, board: str, key: str) -> bool:
    """Whether ``key`` is ``board``'s key (compared in constant time)."""
    return hmac.compare_digest(
        key.encode("utf-8", "replace"), (await record_key(store, board)).encode()
    )
