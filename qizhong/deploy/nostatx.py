"""Run a command with ``statx`` (and ``faccessat2``, ``openat2``) answering ENOSYS (for the
emulated Pi roots).

Debian bookworm's proot does not translate the paths of ``statx``: inside a root, a guest's
``statx("/etc/passwd")`` reaches the *host's* /etc/passwd. On 32-bit ARM that breaks every
stat (bookworm armhf's glibc stats through ``statx`` first), so ``debootstrap
--second-stage`` stops at its first ``chmod`` ("cannot access '//test-exec'"); on arm64 only
``ls`` and ``stat`` use it (the ``?????????`` they print). glibc falls back to ``fstatat64``
when ``statx`` says ENOSYS (a kernel older than 4.11), and proot translates that one, so the
roots' commands run under a seccomp filter saying exactly that, nothing else. ``faccessat2``
(and ``openat2``) the same way: glibc tries it first for ``access()``, so without the filter
``test -x`` in a maintainer script, or pip asking whether the venv is writable, looks at the
host.

``python -m qizhong.deploy.nostatx PROGRAM ARGS...`` installs the filter and executes
PROGRAM in its place; the filter is inherited by every child (proot, qemu, the guest).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys
from collections.abc import Sequence

from qizhong.errors import QizhongError

__all__ = ["NoStatxError", "deny_statx", "main"]

# host CPU -> (audit arch, {syscall: number}). faccessat2 and openat2 are newer than this
# proot too: glibc's access()/faccessat() try faccessat2 first (a `test -x` in a maintainer
# script, pip's "is site-packages writable?"), and fall back on ENOSYS as for statx.
_SYSCALLS = {
    "x86_64": (0xC000003E, {"statx": 332, "openat2": 437, "faccessat2": 439}),
    "aarch64": (0xC00000B7, {"statx": 291, "openat2": 437, "faccessat2": 439}),
}
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_W_ABS, _JEQ_K, _RET_K = 0x20, 0x15, 0x06


class NoStatxError(QizhongError):
    """The filter could not be installed (an unknown host CPU, or prctl refused)."""


def _filter(audit_arch: int, numbers: Sequence[int]) -> bytes:
    n = len(numbers)
    insns = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 0, n + 1, audit_arch),  # another ABI: allow
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        # each denied number jumps over the rest and the allow, to the deny
        *((_JEQ_K, n - i, 0, nr) for i, nr in enumerate(numbers)),
        (_RET_K, 0, 0, _RET_ALLOW),
        (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),
    ]
    return b"".join(struct.pack("=HBBI", *insn) for insn in insns)


def deny_statx() -> None:
    """From now on, this process and its children get ENOSYS from ``statx``."""
    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise NoStatxError(f"no statx filter for a {machine} host")
    arch, numbers = _SYSCALLS[machine]
    code = _filter(arch, sorted(numbers.values()))
    buf = ctypes.create_string_buffer(code, len(code))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = _Prog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise NoStatxError(f"prctl(NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise NoStatxError(f"prctl(SECCOMP): {os.strerror(ctypes.get_errno())}")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m qizhong.deploy.nostatx PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    try:
        deny_statx()
        os.execvp(args[0], args)
    except (NoStatxError, OSError) as exc:
        print(f"deploy_nostatx: {args[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # not reached: execvp replaced this process


if __name__ == "__main__":
    raise SystemExit(main())
