"""Debian's chromium as every browser check launches it: the browser tests (support/web.py)
and ``make package-check`` (tools/package_pages.py, which loads this file by its path).

Plain values only, no pytest: a tool outside the test session reads them too.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]

CHROMIUM = Path("/usr/bin/chromium")  # Debian's; never downloaded
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
