"""Arbiter authentication: hashed passwords, server-side sessions, a CSRF token per session.

Flow for the web pages: ``POST /api/auth/login`` with ``{"username", "password"}`` (JSON or a
form) sets the ``qz_session`` cookie (HttpOnly, SameSite=Strict) and returns the session's
CSRF token; every state-changing request then sends the cookie *and* the token in the
``X-CSRF-Token`` header. ``GET /api/auth/session`` returns the user and token again (after a
page reload). Sessions live in memory and are kept in the store (``dumps``/``restore``,
web/session_keep.py): a station restarted, or a standby promoted, logs no one out (an outsider
deputy's phone dropped to a bare login form while flags fell). Only a hash of each session id
is kept; an account removed or given another role since loses its sessions at the restore.

Roles, each allowed what the one before it is (``ROLES`` in rank order): ``viewer`` reads the
arbiter-only data (alerts, pending fouls and forfeits, metrics) and changes nothing; ``arbiter``
rules on alerts and commands a board; ``chief`` also imports pairings and players, sends rounds,
commands the whole venue and runs the knockout; ``admin`` also sees the accounts.

``recorder`` (``RECORDER``, 录谱) stands outside that rank: it reads and writes the game records
of its boards (``Session.boards``; None: every board) and may do nothing else, not even what an
anonymous reader may (``web/recorder_fence.py``: 403 ``recorder_only``). A recorder session comes
from a ``role = "recorder"`` account or from a board's record key (``domain/record_keys.py``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from venue_station.errors import StationError

__all__ = [
    "COOKIE",
    "CSRF_HEADER",
    "RECORDER",
    "ROLES",
    "AuthError",
    "Session",
    "Sessions",
    "check_hash_format",
    "hash_password",
    "role_allows",
    "verify_password",
]

COOKIE = "qz_session"
CSRF_HEADER = "X-CSRF-Token"
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
ROLES = ("viewer", "arbiter", "chief", "admin")
RECORDER = "recorder"  # outside the rank: its boards' records and nothing else


def role_allows(role: str, needed: str) -> bool:
    """Whether an account of ``role`` may do what needs ``needed`` (roles are ranked)."""
    return role in ROLES and ROLES.index(role) >= ROLES.index(needed)


class AuthError(StationError, ValueError):
    """A malformed password hash."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$salt$hash`` (base64), for ``[[account]] password_hash``."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${_b64(salt)}${_b64(digest)}"


def check_hash_format(text: str) -> None:
    parts = text.split("$")
    try:
        if parts[0] == "scrypt" and len(parts) == 6:
            int(parts[1]), int(parts[2]), int(parts[3])
        elif parts[0] == "pbkdf2_sha256" and len(parts) == 4:
            int(parts[1])
        else:
            raise ValueError
        base64.b64decode(parts[-2], validate=True)
        base64.b64decode(parts[-1], validate=True)
    except (ValueError, IndexError):
        raise AuthError(
            "not a password hash: expected scrypt$n$r$p$salt$hash or "
            "pbkdf2_sha256$iterations$salt$hash "
            "(make one with `qizhong station hash-password`)"
        ) from None


def verify_password(password: str, stored: str) -> bool:
    check_hash_format(stored)
    parts = stored.split("$")
    salt, expected = base64.b64decode(parts[-2]), base64.b64decode(parts[-1])
    if parts[0] == "scrypt":
        n, r, p = (int(x) for x in parts[1:4])
        got = hashlib.scrypt(
            password.encode(),
            salt=salt,
            n=n,
            r=r,
            p=p,
            dklen=len(expected),
            maxmem=128 * n * r * p + 1024 * 1024,
        )
    else:
        got = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, int(parts[1]), len(expected))
    return hmac.compare_digest(got, expected)


@dataclass(frozen=True)
class Session:
    sid: str
    user: str
    role: str
    csrf: str
    # Wall-clock seconds, not monotonic: a session outlives the station's process (and its
    # machine's reboot), and its twelve hours are hours of the day.
    expires: float = field(compare=False)
    boards: tuple[str, ...] | None = None  # a recorder's boards (None: every board)
    # a board's record key's session: the fingerprint of the key secret it was opened with
    # (a secret deleted or replaced since ends it: ``domain/record_keys.py``)
    key_fp: str | None = field(default=None, compare=False)

    def records(self, board: str) -> bool:
        """Whether this session may write ``board``'s record (a recorder of it, an arbiter+)."""
        if self.role == RECORDER:
            return self.boards is None or board in self.boards
        return role_allows(self.role, "arbiter")


class Sessions:
    """Accounts and the sessions logged in with them."""

    def __init__(
        self,
        accounts: Iterable[tuple[str, str, str]],
        *,
        ttl_s: float = 12 * 3600,
        boards: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self._accounts = {user: (pw_hash, role) for user, pw_hash, role in accounts}
        self._boards = dict(boards or {})  # a recorder account's boards
        self._sessions: dict[str, Session] = {}  # by the hash of the session id (``_key``)
        self._ttl = ttl_s
        self.on_change: Callable[[], None] | None = None  # a session opened or ended: keep them
        # Verifying an unknown user costs the same as a known one: no user enumeration by timing.
        self._dummy = hash_password(secrets.token_hex(8))

    def login(self, user: str, password: str) -> Session | None:
        role = self.verify(user, password)
        return None if role is None else self.open(user, role)

    def verify(self, user: str, password: str) -> str | None:
        """The account's role if the password is right, else None. Costs one scrypt (tens of
        ms of CPU): the API runs it on a worker thread, never on the event loop."""
        pw_hash, role = self._accounts.get(user, (self._dummy, ""))
        if not verify_password(password, pw_hash) or not role:
            return None
        return role

    def accounts(self) -> list[dict[str, str]]:
        return [{"username": u, "role": r} for u, (_, r) in sorted(self._accounts.items())]

    def open(
        self,
        user: str,
        role: str,
        *,
        boards: tuple[str, ...] | None = None,
        key_fp: str | None = None,
    ) -> Session:
        """A new session for an account whose password was verified (a recorder account gets
        its configured boards), or for a board's record key (``boards`` and ``key_fp``)."""
        session = Session(
            secrets.token_urlsafe(32),
            user,
            role,
            secrets.token_urlsafe(32),
            time.time() + self._ttl,
            boards if boards is not None else self._boards.get(user),
            key_fp,
        )
        self._sessions[_key(session.sid)] = session
        self._changed()
        return session

    def get(self, sid: str | None) -> Session | None:
        key = _key(sid or "")
        session = self._sessions.get(key)
        if session is None:
            return None
        if session.expires < time.time():
            self._sessions.pop(key, None)
            self._changed()
            return None
        # a restored session knows only its id's hash: the id is the one presented
        return session if session.sid == sid else replace(session, sid=sid or "")

    def check(self, sid: str | None, csrf: str | None) -> Session | None:
        """The session if the cookie is valid and the CSRF token matches it."""
        session = self.get(sid)
        if session is None or not csrf or not hmac.compare_digest(session.csrf, csrf):
            return None
        return session

    def logout(self, sid: str) -> None:
        if self._sessions.pop(_key(sid), None) is not None:
            self._changed()

    def _fingerprint(self, user: str) -> str | None:
        """A short hash of the account's password hash: a password changed in station.toml
        ends the account's kept sessions at the next start (None: no account, a record key)."""
        account = self._accounts.get(user)
        if account is None:
            return None
        return hashlib.sha256(account[0].encode()).hexdigest()[:16]

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def dumps(self) -> str:
        """The live sessions, for the store: each by its id's hash, never the id itself."""
        now = time.time()
        kept = {
            key: {"user": s.user, "role": s.role, "csrf": s.csrf, "expires": s.expires,
                  "boards": list(s.boards) if s.boards is not None else None,
                  "pw": self._fingerprint(s.user), "kf": s.key_fp}
            for key, s in self._sessions.items()
            if s.expires >= now
        }  # fmt: skip
        return json.dumps(kept)

    def restore(self, text: str | None, *, key_fp: str | None = None) -> int:
        """Sessions kept by ``dumps`` (an earlier run's); how many were taken. An account's is
        taken only if the account still has that role (its boards as configured now); a record
        key's (a recorder outside the accounts) with its boards, only if opened with the key
        secret there is now (``key_fp``). Anything malformed is skipped."""
        try:
            kept: Any = json.loads(text or "{}")
        except ValueError:
            return 0
        if not isinstance(kept, dict):
            return 0
        now, taken = time.time(), 0
        for key, row in list(kept.items())[:MAX_RESTORED]:
            try:
                user, role, csrf = str(row["user"]), str(row["role"]), str(row["csrf"])
                expires = float(row["expires"])
                boards = None if row["boards"] is None else tuple(str(b) for b in row["boards"])
            except (KeyError, TypeError, ValueError):
                continue
            if expires < now or not isinstance(key, str) or len(key) != 64:
                continue
            if user in self._accounts:
                if self._accounts[user][1] != role or row.get("pw") != self._fingerprint(user):
                    continue  # the account's role or password changed since: logged out
                boards = self._boards.get(user)
            elif role != RECORDER or boards is None or len(boards) != 1:
                continue  # an account since removed
            elif user != f"board-{boards[0]}-key":
                continue  # (a removed recorder account is no board's key)
            elif key_fp is None or row.get("kf") != key_fp:
                continue  # the key secret deleted or replaced since: every printed key is void
            kf = key_fp if user not in self._accounts else None
            self._sessions[key] = Session("", user, role, csrf, expires, boards, kf)
            taken += 1
        return taken


MAX_RESTORED = 10_000  # sessions taken back at a restart (a venue has tens)


def _key(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()
