"""qizhong.deploy.nostatx: the command it runs sees ENOSYS from statx/faccessat2/openat2 (so
glibc falls back to calls proot translates) and everything else as before."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from qizhong.deploy.nostatx import main

NUMBERS = {"x86_64": (332, 439), "aarch64": (291, 439)}

PROBE = """
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(512)
statx, faccessat2 = (int(n) for n in sys.argv[1:3])
r1 = libc.syscall(statx, -100, b"/", 0, 0xFFF, buf)
e1 = ctypes.get_errno()
r2 = libc.syscall(faccessat2, -100, b"/", os.W_OK, 0)
e2 = ctypes.get_errno()
print(r1, errno.errorcode.get(e1, e1), r2, errno.errorcode.get(e2, e2),
      os.access("/", os.W_OK), os.stat("/").st_ino == os.stat("/.").st_ino)
"""


@pytest.mark.skipif(platform.machine() not in NUMBERS, reason="a host CPU the filter knows")
def test_the_filtered_calls_say_enosys_and_glibc_still_works() -> None:
    nums = [str(n) for n in NUMBERS[platform.machine()]]
    plain = subprocess.run([sys.executable, "-c", PROBE, *nums], capture_output=True,
                           text=True, check=True).stdout.split()  # fmt: skip
    assert plain[0] == "0"  # statx works without the filter
    filtered = subprocess.run(
        [sys.executable, "-m", "qizhong.deploy.nostatx", sys.executable, "-c", PROBE, *nums],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert filtered[:4] == ["-1", "ENOSYS", "-1", "ENOSYS"]
    # stat() and access() fall back to the older calls and answer as before.
    assert filtered[4:] == plain[4:]


def test_no_program_or_a_missing_one_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage:" in capsys.readouterr().err
    proc = subprocess.run(
        [sys.executable, "-m", "qizhong.deploy.nostatx", "/nonexistent/prog"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 127 and "/nonexistent/prog" in proc.stderr
