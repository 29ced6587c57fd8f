"""clock_service — the pure clock core of qizhong.

No I/O and no imports from the other qizhong packages: time comes in through an injected
monotonic source, so a whole game runs in microseconds under a fake clock.
"""

from clock_service.side import Side

__all__ = ["Side"]
