"""Screenshots of the station's pages for docs/screenshots/ (not part of ``make test``).

Starts a small simulated venue (``qizhong.simulation.venue.LocalVenue``: a private Mosquitto,
the station and node processes with simulated faces), pairs and starts round 1 as the demo's
arbiter bot does, lets the players play for a while at high speed, drives a few things an
arbiter sees (a foul, a pause, entered results, a refusal), then opens the arbiter, board, hall,
standings and pairing pages in Debian's chromium at 1920×1080, 1366×768 and 390×844, in zh-CN
and in English, and saves each as ``docs/screenshots/<page>-<width>x<height>-<lang>.png``.
A PNG over 300 KB is reduced to a palette of 128 colours (the pages are flat colours).

    .venv/bin/python tools/screenshots.py [--boards 40] [--play-s 40] [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qizhong.simulation.demo import Director  # noqa: E402
from qizhong.simulation.venue import LocalVenue  # noqa: E402

SIZES = [(1920, 1080), (1366, 768), (390, 844)]
LANGS = ("zh", "en")
MAX_BYTES = 300_000


def _chromium() -> Any:
    # chromium launched one way, tests and tools alike (tools/README.md)
    path = ROOT / "tests" / "support" / "chromium.py"
    spec = importlib.util.spec_from_file_location("qz_chromium_settings", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play(venue: LocalVenue, director: Director, seconds: float) -> None:
    """Let the round run, entering results as games end, with a few arbiter actions."""
    api = director.api
    started = time.monotonic()
    acted = False
    while time.monotonic() - started < seconds:
        boards = director.boards()
        director.enter_results(boards)
        if not acted and time.monotonic() - started > seconds / 3:
            acted = True
            api.request("POST", "/api/boards/2/cmd", {"cmd": "pause", "args": {}})
            api.request(
                "POST",
                "/api/boards/2/cmd",
                {"cmd": "adjust", "args": {"side": "black", "delta_ms": 30_000}},
            )
            api.request(
                "POST",
                "/api/boards/2/cmd",
                {"cmd": "foul", "args": {"side": "red", "reason": "disturbing"}},
            )
            api.request("POST", "/api/boards/2/cmd", {"cmd": "resume", "args": {}})
            for board, winner, reason in (("3", "red", "resigned"), ("4", None, "agreed")):
                args = {"winner": winner, "reason": reason}
                api.request("POST", f"/api/boards/{board}/cmd", {"cmd": "result", "args": args})
        time.sleep(1.0)


def shrink(path: Path) -> None:
    if path.stat().st_size <= MAX_BYTES:
        return
    from PIL import Image

    with Image.open(path) as img:
        small = img.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)


def shoot(venue: LocalVenue, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    chromium = _chromium()
    saved: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(chromium.CHROMIUM), args=chromium.CHROMIUM_ARGS
        )
        for width, height in SIZES:
            for short in LANGS:
                context = browser.new_context(
                    viewport={"width": width, "height": height}, bypass_csp=True
                )
                page = context.new_page()
                page.set_default_timeout(15_000)

                def save(
                    name: str, page: Any = page, w: int = width, h: int = height, lang: str = short
                ) -> None:
                    time.sleep(0.8)  # the page's follow-up fetches land
                    path = out / f"{name}-{w}x{h}-{lang}.png"
                    page.screenshot(path=str(path), full_page=False)
                    shrink(path)
                    saved.append(path)

                page.goto(f"{venue.url}/arbiter?lang={short}")
                page.fill("#username", "arbiter")
                page.fill("#password", venue.arbiter_password)
                page.click("#login-submit")
                page.wait_for_selector(f'#boards .card[data-board="{venue.boards}"]')
                if width >= 1900:  # the wide screen: a board chosen, its panel beside the grid
                    page.click('#boards .card[data-board="2"]')
                    page.wait_for_selector("#board-history li")
                save("arbiter")
                page.goto(f"{venue.url}/board/2?lang={short}")
                page.wait_for_selector("#history li")
                save("board")
                page.goto(f"{venue.url}/?boards=1-{venue.boards}&lang={short}")
                page.wait_for_selector(f'.card[data-board="{venue.boards}"]')
                save("hall")
                page.goto(f"{venue.url}/standings?lang={short}")
                page.wait_for_selector("body[data-loaded]")
                save("standings")
                page.goto(f"{venue.url}/pairing?lang={short}")
                page.wait_for_selector("#round option[data-n]", state="attached")
                save("pairing")
                context.close()
        browser.close()
    return saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=40)
    parser.add_argument("--speed", type=float, default=20.0)
    parser.add_argument("--play-s", type=float, default=40.0, help="seconds of play first")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="qizhong-shots-"))
    venue = LocalVenue(work, boards=args.boards, speed=args.speed, venue="screenshots")
    try:
        venue.start()
        director = Director(venue, seed=2016)
        director.pair_and_start_round()
        play(venue, director, args.play_s)
        for path in shoot(venue, args.out):
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
                  f"  {path.stat().st_size // 1024} KB")  # fmt: skip
    finally:
        venue.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
