"""Account passwords: generated once, kept across runs, hashed by ``mosquitto_passwd``.

Passwords live in the per-account credentials files (0600, for the technician to copy to
each node); the broker only sees the hashed password file. Re-running broker-config on the
same directory reads the old credentials back, so deployed nodes keep working.
"""

from __future__ import annotations

import grp
import json
import logging
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from broker_config.errors import MosquittoError

__all__ = [
    "MOSQUITTO_GROUP",
    "find_tool",
    "hash_password_file",
    "kept_password",
    "mosquitto_gid",
    "new_password",
    "set_owner",
]

log = logging.getLogger(__name__)
MOSQUITTO_GROUP = "mosquitto"


def new_password() -> str:
    return secrets.token_urlsafe(24)  # 32 characters, no ':' (the password file's separator)


def kept_password(cred_file: Path, username: str) -> str | None:
    """The password already issued to ``username`` in ``cred_file``, or None."""
    try:
        data = json.loads(cred_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable credentials (%s); issuing a new password", cred_file, exc)
        return None
    password = data.get("password") if isinstance(data, dict) else None
    if data.get("username") != username or not isinstance(password, str) or not password:
        log.warning("%s: no usable password for %r; issuing a new one", cred_file, username)
        return None
    return password


def find_tool(name: str, explicit: str | None = None) -> str:
    if explicit is not None:
        return explicit
    found = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None
    )
    if found is None:
        raise MosquittoError(f"{name} not found (apt-get install mosquitto mosquitto-clients)")
    return found


def hash_password_file(target: Path, passwords: dict[str, str], *, tool: str) -> None:
    """Write ``target`` as a Mosquitto password file through ``mosquitto_passwd -U``.

    ``-U`` hashes a whole plain file in one run and keeps passwords off the command line
    (``-b`` would show them in ``ps``); the plain file is 0600 and never outlives this call.
    """
    plain = target.with_name(target.name + ".plain")
    fd = os.open(plain, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(f"{user}:{pw}\n" for user, pw in passwords.items())
        proc = subprocess.run(
            [tool, "-U", str(plain)], capture_output=True, text=True, timeout=60, check=False
        )
        if proc.returncode != 0:
            raise MosquittoError(
                f"{tool} -U failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()}"
            )
        os.replace(plain, target)
    finally:
        plain.unlink(missing_ok=True)


def mosquitto_gid() -> int | None:
    try:
        return grp.getgrnam(MOSQUITTO_GROUP).gr_gid
    except KeyError:
        return None


def set_owner(path: Path, mode: int, *, group: int | None, user: int | None = None) -> str | None:
    """chmod, then chown to (``user``, ``group``) where possible; returns a warning or None."""
    os.chmod(path, mode)
    if group is None and user is None:
        return None
    try:
        os.chown(path, -1 if user is None else user, -1 if group is None else group)
    except PermissionError:
        return (
            f"{path}: cannot give it to the {MOSQUITTO_GROUP} user/group (not root); a "
            f"mosquitto started as root will not be able to use it: run broker-config as root"
        )
    return None
