"""The hall screen's frames under chromium's CPU throttling (CDP), for display_cpu.py.

``Emulation.setCPUThrottlingRate`` slows the page's renderer main thread ``rate`` times (a
stand-in for a slower CPU: ×4 ≈ a Pi 4 core). Over a window this measures, on that thread:

- the frames over 50 ms (``long-animation-frame`` entries, which chromium reports for every
  frame whose work took more than 50 ms) and the longest frame;
- the share of the throttled core busy (``Performance.getMetrics`` ``TaskDuration``: the
  thread's task time, in the throttled clock, over the window's wall time);
- the cost per changed card: that task time over the number of card changes drawn (a
  ``MutationObserver`` counts, per delivery, the distinct cards whose DOM changed).

Only the renderer main thread is throttled; raster and compositing run in other threads and
processes at full speed, so the /proc figure of display_cpu.py is reported beside it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

# Installed before the page's own scripts: the frame observer and the card-change counter.
INIT = """
(() => {
  const qz = (window.__qzFrames = { long: [], changes: 0, deliveries: 0, types: [] });
  qz.types = PerformanceObserver.supportedEntryTypes || [];
  const kind = qz.types.includes("long-animation-frame") ? "long-animation-frame" : "longtask";
  qz.kind = kind;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      // Where a long frame went: its scripts (by what invoked them) and style + layout.
      const scripts = (e.scripts || []).map((x) => [x.invoker || x.name, Math.round(x.duration)]);
      const layout = e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0;
      qz.long.push([e.startTime, e.duration, Math.round(layout), scripts]);
    }
  }).observe({ type: kind, buffered: true });
  const count = new MutationObserver((records) => {
    const seen = new Set();
    for (const r of records) {
      const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const card = node && node.closest && node.closest(".card[data-board]");
      if (card) seen.add(card);
    }
    qz.changes += seen.size;
    qz.deliveries += 1;
  });
  const start = () => count.observe(document.body, {
    subtree: true, childList: true, characterData: true, attributes: true });
  if (document.body) start(); else document.addEventListener("DOMContentLoaded", start);
})();
"""


TIMES = ("TaskDuration", "ScriptDuration", "RecalcStyleDuration", "LayoutDuration")


async def _times(cdp: Any) -> dict[str, float]:
    """The renderer main thread's task, script, style and layout time so far (s)."""
    metrics = (await cdp.send("Performance.getMetrics"))["metrics"]
    return {m["name"]: m["value"] for m in metrics if m["name"] in TIMES}


async def prepare(context: Any, page: Any, rate: float) -> Any:
    """Install the observers and the throttling on ``page`` (before it is loaded)."""
    await context.add_init_script(INIT)
    cdp = await context.new_cdp_session(page)
    await cdp.send("Performance.enable")
    if rate > 1:
        await cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
    return cdp


async def measure(page: Any, cdp: Any, window_s: float) -> dict[str, Any]:
    """Frames, the throttled core's share and the cost per changed card over the window."""
    get = "() => { const q = window.__qzFrames; return [q.long.length, q.changes]; }"
    n0, changes0 = await page.evaluate(get)
    times0, t0 = await _times(cdp), time.monotonic()
    now0 = await page.evaluate("() => performance.now()")
    await asyncio.sleep(window_s)
    times1, t1 = await _times(cdp), time.monotonic()
    q = await page.evaluate("() => window.__qzFrames")
    long = [f for f in q["long"] if f[0] >= now0]
    frames = [f[1] for f in long]
    changes = q["changes"] - changes0
    used = {k: (times1[k] - times0[k]) * 1000 for k in TIMES}
    busy_ms = used["TaskDuration"]
    per_card = {
        k.removesuffix("Duration").lower(): round(v / max(changes, 1), 3) for k, v in used.items()
    }
    worst = sorted(long, key=lambda f: -f[1])[:3]
    return {
        "frame_kind": q["kind"],
        "frames_over_50ms": len(frames),
        "longest_frame_ms": round(max(frames, default=0.0), 1),
        "throttled_core_pct": round(100 * busy_ms / 1000 / (t1 - t0), 1),
        "card_changes_per_s": round(changes / (t1 - t0), 1),
        "ms_per_changed_card": round(busy_ms / max(changes, 1), 3),
        "ms_per_changed_card_by_kind": per_card,  # task = all; script, style, layout of it
        "longest_frames": [
            {"ms": round(f[1]), "style_layout_ms": f[2], "scripts": f[3][:3]} for f in worst
        ],
        "_n0": n0,
    }


# A devtools trace of the window (``--trace``): what the page's main thread spent its time on.
TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink"]


def trace_summary(raw: bytes, top: int = 14) -> dict[str, Any]:
    """The renderer main thread's self time by trace event (ms, throttled clock) and its layouts:
    how many, how many objects each laid out, and their layout roots (partial or the whole
    document)."""
    events = json.loads(raw)
    events = events["traceEvents"] if isinstance(events, dict) else events
    mains = {(e["pid"], e["tid"]) for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e["args"].get("name") == "CrRendererMain"}  # fmt: skip
    busy = Counter((e["pid"], e["tid"]) for e in events if (e.get("pid"), e.get("tid")) in mains)
    if not busy:
        return {}
    main = busy.most_common(1)[0][0]
    spans = sorted(
        (e for e in events if (e.get("pid"), e.get("tid")) == main and e.get("ph") == "X"
         and "dur" in e),
        key=lambda e: (e["ts"], -e["dur"]),
    )  # fmt: skip
    own: Counter[str] = Counter()
    stack: list[tuple[int, str]] = []  # (end ts, name)
    for e in spans:
        while stack and stack[-1][0] <= e["ts"]:
            stack.pop()
        if stack:
            own[stack[-1][1]] -= e["dur"]
        own[e["name"]] += e["dur"]
        stack.append((e["ts"] + e["dur"], e["name"]))
    layouts = [e for e in spans if e["name"] == "Layout"]
    objects = [e["args"].get("beginData", {}).get("totalObjects", 0) for e in layouts]
    partial = sum(1 for e in layouts if e["args"].get("beginData", {}).get("partialLayout"))
    roots = Counter(len(e["args"].get("endData", {}).get("layoutRoots", [])) for e in layouts)
    return {
        "self_ms": {k: round(v / 1000, 1) for k, v in own.most_common(top)},
        "layouts": len(layouts),
        "partial_layouts": partial,
        "objects_per_layout_max": max(objects, default=0),
        "layout_roots_per_layout": dict(roots),
    }
