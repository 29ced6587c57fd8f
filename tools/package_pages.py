"""The pages of an installed station, loaded in Debian's chromium (``make package-check``).

A page passes when it answers 200, every script, style and icon its HTML references answers
200 (as the browser loaded it, or on a direct GET when the browser did not ask), every
``/static/`` request the page made answered 200, and no script raised on the page.
"""

from __future__ import annotations

import importlib.util
import urllib.error
import urllib.request
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

__all__ = ["CHROMIUM", "PageProblem", "check_pages", "referenced_assets"]


def _chromium_settings() -> Any:
    # The one launch of chromium, shared with the browser tests; tools/ and tests/ are not
    # packages, so it is loaded by its path.
    path = Path(__file__).resolve().parents[1] / "tests" / "support" / "chromium.py"
    spec = importlib.util.spec_from_file_location("qz_chromium_settings", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CHROMIUM_SETTINGS = _chromium_settings()
CHROMIUM: Path = _CHROMIUM_SETTINGS.CHROMIUM
CHROMIUM_ARGS: list[str] = _CHROMIUM_SETTINGS.CHROMIUM_ARGS


class PageProblem(Exception):
    """A page of the installed station is broken; the message lists every finding."""


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.found.append(str(a["src"]))
        elif tag == "link" and a.get("href") and a.get("rel") in {"stylesheet", "icon", "preload"}:
            self.found.append(str(a["href"]))
        elif tag in {"img", "audio", "source"} and a.get("src"):
            self.found.append(str(a["src"]))


def referenced_assets(html: str) -> list[str]:
    """The scripts, styles, icons, images and sounds an HTML page references, in order."""
    parser = _Assets()
    parser.feed(html)
    return parser.found


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def check_pages(base: str, paths: Iterable[str]) -> list[str]:
    """Load each page of the station at ``base``; one summary line per page, or PageProblem."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise PageProblem(f"{CHROMIUM} is not installed (apt-get install chromium)")
    problems: list[str] = []
    summary: list[str] = []
    origin = urlsplit(base).netloc
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for path in paths:
                url = base + path
                context = browser.new_context()
                page = context.new_page()
                seen: dict[str, int] = {}
                failed: list[str] = []
                errors: list[str] = []
                page.on("response", lambda r, seen=seen: seen.setdefault(r.url, r.status))
                page.on("requestfailed", lambda r, f=failed: f.append(f"{r.url} ({r.failure})"))
                page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
                try:
                    doc = page.goto(url, wait_until="load", timeout=15000)
                    if doc is None or doc.status != 200:
                        problems.append(f"{path}: {doc.status if doc else 'no response'}")
                        continue
                    assets = referenced_assets(doc.text())
                    page.wait_for_timeout(300)  # the scripts' first fetches
                except PlaywrightError as exc:
                    problems.append(f"{path}: {exc}")
                    continue
                finally:
                    context.close()
                if not assets:
                    problems.append(f"{path}: references no script or style")
                for asset in assets:
                    full = urljoin(url, asset)
                    status = seen.get(full) or _status(full)
                    if status != 200:
                        problems.append(f"{path}: {asset} answered {status}")
                for got, status in seen.items():
                    parts = urlsplit(got)
                    if (
                        parts.netloc == origin
                        and parts.path.startswith("/static/")
                        and status != 200
                    ):
                        problems.append(f"{path}: the page asked for {parts.path}: {status}")
                problems += [f"{path}: request failed: {f}" for f in failed if "/static/" in f]
                problems += [f"{path}: script error: {e}" for e in errors]
                summary.append(f"{path}: 200, {len(assets)} scripts/styles/icons 200")
        finally:
            browser.close()
    if problems:
        raise PageProblem("\n   ".join(problems))
    return summary
