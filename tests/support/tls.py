"""Certificates for TLS listeners in tests, made with openssl (skips the test without it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from support.parts import skip_missing

__all__ = ["make_test_certs"]


def make_test_certs(folder: Path) -> dict[str, str]:
    """A test CA and a server certificate for 127.0.0.1 in ``folder``: the paths as a roster's
    ``[listeners.tls]`` names them (cafile, certfile, keyfile)."""
    if shutil.which("openssl") is None:
        skip_missing("openssl", "apt-get install openssl")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    run(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=qizhong test CA",
    )
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    )
    return {
        "cafile": str(folder / "ca.crt"),
        "certfile": str(folder / "server.crt"),
        "keyfile": str(folder / "server.key"),
    }
