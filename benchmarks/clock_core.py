"""GameClock presses per second and the cost of remaining_ms, against a bare function call.

The baseline is a bare Python call of a one-argument function in the same loop shape, timed
in the same run, so the ratios mean "one press costs as much as N plain calls" on any machine.
Time comes from a counter (a fake monotonic source): the figures are the core's own cost.
"""

from __future__ import annotations

from _common import best_of, emit, parse_args, time_per_call_ns

from clock_service import GameClock, Side, TimeControl


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    calls = 50_000 if args.quick else 500_000
    repeats = 3 if args.quick else 7

    ticks = [0]

    def now() -> int:
        ticks[0] += 1_234_567  # every call moves 1.23 ms on: a fast game that never flags
        return ticks[0]

    def bare(_side: Side) -> None:
        return None

    def measure_baseline() -> float:
        return time_per_call_ns(lambda: bare(Side.RED), calls)

    def measure_press() -> float:
        clock = GameClock(TimeControl.parse("100h+5s"), now=now)
        clock.start()
        state = {"side": Side.RED}

        def press() -> None:
            side = state["side"]
            clock.press(side)
            state["side"] = side.other

        return time_per_call_ns(press, calls)

    def measure_remaining() -> float:
        clock = GameClock(TimeControl.parse("100h+5s"), now=now)
        clock.start()
        return time_per_call_ns(lambda: clock.remaining_ms(Side.RED), calls)

    def measure_remaining_idle_side() -> float:
        clock = GameClock(TimeControl.parse("100h+5s"), now=now)
        clock.start()
        return time_per_call_ns(lambda: clock.remaining_ms(Side.BLACK), calls)

    baseline = best_of(repeats, measure_baseline)
    press = best_of(repeats, measure_press)
    remaining = best_of(repeats, measure_remaining)
    remaining_idle = best_of(repeats, measure_remaining_idle_side)
    emit(
        {
            "benchmark": "clock_core",
            "quick": args.quick,
            "calls": calls,
            "baseline_call_ns": round(baseline, 1),
            "press_ns": round(press, 1),
            "presses_per_s": round(1e9 / press),
            "remaining_ms_running_ns": round(remaining, 1),
            "remaining_ms_waiting_ns": round(remaining_idle, 1),
            "press_ratio": round(press / baseline, 2),
            "remaining_ratio": round(remaining / baseline, 2),
            "ratio": round(press / baseline, 2),
        }
    )


if __name__ == "__main__":
    main()
