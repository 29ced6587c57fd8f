"""``qizhong clock``: a two-player clock in the terminal, to try the core by hand.

Keys: ``a`` or ← is red's button, ``l`` or → is black's, space starts the clock and then
pauses / resumes it, ``q`` (or Ctrl-C) quits. The pure parts — key mapping and the status
line — are separate from the raw-tty loop so they are tested without a terminal.
"""

from __future__ import annotations

import argparse
import enum
import os
import select
import sys
import termios
import time
import tty
from collections.abc import Callable
from typing import TextIO

from clock_service import ClockEvent, GameClock, Phase, Side, TimeControl

__all__ = ["Action", "action_for_key", "add_arguments", "apply", "format_ms", "render", "run"]


class Action(enum.Enum):
    PRESS_RED = "press_red"
    PRESS_BLACK = "press_black"
    TOGGLE = "toggle"  # start, then pause / resume
    QUIT = "quit"


KEYS: dict[str, Action] = {
    "a": Action.PRESS_RED,
    "A": Action.PRESS_RED,
    "\x1b[D": Action.PRESS_RED,  # left arrow
    "l": Action.PRESS_BLACK,
    "L": Action.PRESS_BLACK,
    "\x1b[C": Action.PRESS_BLACK,  # right arrow
    " ": Action.TOGGLE,
    "q": Action.QUIT,
    "Q": Action.QUIT,
    "\x03": Action.QUIT,  # Ctrl-C arrives as a byte in raw mode
}

TEXT = {
    "zh": {
        Side.RED: "红",
        Side.BLACK: "黑",
        Phase.IDLE: "未开始（空格开始）",
        Phase.RUNNING: "走棋中",
        Phase.PAUSED: "暂停（空格继续）",
        Phase.FINISHED: "结束",
        "flag": "{side}方超时",
        "moves": "{n}步",
        "byoyomi": "读秒{n}次",
        "help": "a/← 红方按钟  l/→ 黑方按钟  空格 开始/暂停  q 退出",
        "no_tty": "qizhong clock 需要一个终端（标准输入和输出都必须是 tty）。",
    },
    "en": {
        Side.RED: "RED",
        Side.BLACK: "BLACK",
        Phase.IDLE: "not started (space starts)",
        Phase.RUNNING: "running",
        Phase.PAUSED: "paused (space resumes)",
        Phase.FINISHED: "finished",
        "flag": "{side} flagged",
        "moves": "{n} moves",
        "byoyomi": "byo-yomi x{n}",
        "help": "a/left red presses  l/right black presses  space start/pause  q quit",
        "no_tty": "qizhong clock needs a terminal (stdin and stdout must both be a tty).",
    },
}


def action_for_key(key: str) -> Action | None:
    """The action of one key (a character or an escape sequence), None if unbound."""
    return KEYS.get(key)


def split_keys(data: str) -> list[str]:
    """Split raw terminal input into keys, keeping arrow escape sequences whole."""
    keys, i = [], 0
    while i < len(data):
        if data.startswith("\x1b[", i) and i + 2 < len(data):
            keys.append(data[i : i + 3])
            i += 3
        else:
            keys.append(data[i])
            i += 1
    return keys


def apply(clock: GameClock, action: Action) -> tuple[ClockEvent, ...]:
    """Apply a key's action to the clock; QUIT is the caller's business."""
    if action is Action.PRESS_RED:
        return clock.press(Side.RED)
    if action is Action.PRESS_BLACK:
        return clock.press(Side.BLACK)
    if action is Action.TOGGLE:
        phase = clock.phase
        if phase is Phase.IDLE:
            return clock.start()
        return clock.pause() if phase is Phase.RUNNING else clock.resume()
    return ()


def format_ms(ms: int) -> str:
    """``1799950`` -> ``"29:59.9"``; hours shown when needed; tenths rounded down."""
    tenths = ms // 100
    minutes, tenths = divmod(tenths, 600)
    hours, minutes = divmod(minutes, 60)
    seconds = f"{tenths // 10:02d}.{tenths % 10}"
    return f"{hours}:{minutes:02d}:{seconds}" if hours else f"{minutes:02d}:{seconds}"


def _side_text(clock: GameClock, side: Side, text: dict[object, str]) -> str:
    reading = clock.reading(side)
    shown = format_ms(reading.main_ms)
    if reading.in_byoyomi:
        shown = f"{format_ms(reading.period_ms)} {text['byoyomi'].format(n=reading.periods)}"
    elif reading.delay_ms:
        shown += f" (+{format_ms(reading.delay_ms)})"
    mark = "▶" if clock.running is side else " "
    moves = text["moves"].format(n=clock.moves(side))
    return f"{mark} {text[side]} {shown} {moves}"


def render(clock: GameClock, lang: str = "zh") -> str:
    """The status line: both times, who runs, the phase or the flag."""
    text: dict[object, str] = TEXT[lang]
    flag = clock.flag
    state = text["flag"].format(side=text[flag]) if flag is not None else text[clock.phase]
    red, black = (_side_text(clock, side, text) for side in Side)
    return f"{red}  |  {black}  |  {state}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tc", default="30m+5s", type=_time_control, help="time control (default 30m+5s)"
    )
    parser.add_argument(
        "--black-tc", type=_time_control, default=None, help="black's own time control"
    )
    parser.add_argument("--lang", choices=sorted(TEXT), default="zh", help="display language")


def _time_control(text: str) -> TimeControl:
    try:
        return TimeControl.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    lang = args.lang
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(TEXT[lang]["no_tty"], file=sys.stderr)
        return 2
    clock = GameClock(args.tc, now=time.monotonic_ns, black=args.black_tc)
    return _loop(clock, lang, sys.stdin, sys.stdout)


def _loop(clock: GameClock, lang: str, stdin: TextIO, stdout: TextIO) -> int:
    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    write: Callable[[str], object] = stdout.write
    write(f"{TEXT[lang]['help']}\r\n")
    try:
        tty.setcbreak(fd)
        while True:
            ready, _, _ = select.select([fd], [], [], 0.05)
            keys = split_keys(os.read(fd, 64).decode(errors="replace")) if ready else []
            if ready and not keys:
                break  # end of input
            actions = [action_for_key(key) for key in keys]
            if Action.QUIT in actions:
                break
            for action in actions:
                if action is not None:
                    apply(clock, action)
            clock.settle()  # the flag falls on screen even if nobody presses
            write(f"\r\x1b[K{render(clock, lang)}")
            stdout.flush()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        write(f"\r\x1b[K{render(clock, lang)}\r\n")
        stdout.flush()
    return 0
