"""Registration day on the pairing page, as an outsider organiser wrote it (helper-27, stop 41):
the players files a pairing program writes (TRF columns, a Chinese name one column a character),
the groups spreadsheet, and the page's import as a person does it (choose, 导入, 确认导入)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from support.station import station_config
from venue_station.auth import hash_password
from venue_station.web.web_server import StationWithWeb

NAMES = [
    "王天一",
    "郑惟桐",
    "王晓明",
    "赵鑫鑫",
    "唐丹",
    "王琳娜",
    "洪智",
    "许银川",
    "吕钦",
    "蒋川",
    "孙勇征",
    "谢靖",
    "陈幸琳",
    "刘欢",
    "李少庚",
    "程鸣",
    "武俊强",
    "党斐",
    "黄竹风",
    "才溢",
]
RATINGS = [2480 - 20 * i for i in range(20)]


def pad(text: str, width: int) -> str:
    assert len(text) <= width
    return text + " " * (width - len(text))


def line001(
    sr: int,
    name: str,
    rating: int,
    *,
    sex: str = "m",
    points: float = 0.0,
    rank: int | None = None,
    cells: list[tuple[int, str, str]] = (),
) -> str:
    s = (
        f"001 {sr:>4} {sex}    {pad(name, 33)} {rating:>4} CHN {'':>11} {'':>10} "
        f"{points:>4.1f} {'' if rank is None else rank:>4}  "
    )
    s += "  ".join(f"{opp:>4} {col} {res}" for opp, col, res in cells)
    return s.rstrip()


def header(n: int, event: str = "武隆象棋公开赛") -> list[str]:
    return [
        f"012 {event}",
        "022 武隆",
        "032 CHN",
        "042 2026/09/19",
        "052 2026/09/20",
        f"062 {n}",
        "092 Individual: Swiss-System",
        "102 李明",
        "142 9",
        "XXR 9",
        "152 W",
        "162  W 2.0    D 1.0",
        "BBW  2.0",
        "BBD  1.0",
        "XXS W=2 D=1 PAB=2",
    ]


def trf(
    players: dict[int, str],
    *,
    event: str = "武隆象棋公开赛",
    round1: bool = False,
    played: dict[int, str] | None = None,
) -> str:
    """A players file (start rank -> name), optionally with round 1 paired 1-11, 2-12 … (the
    higher start rank red = w); ``played``: start rank -> result letter of round 1."""
    lines = header(len(players), event)
    ranks = sorted(players)
    half = len(ranks) // 2
    opp: dict[int, tuple[int, str]] = {}
    if round1:
        for a, b in zip(ranks[:half], ranks[half : 2 * half], strict=False):
            opp[a] = (b, "w")
            opp[b] = (a, "b")
    for sr in ranks:
        cells = []
        if round1:
            if sr in opp:
                res = (played or {}).get(sr, " ")
                cells = [(opp[sr][0], opp[sr][1], res)]
            else:
                cells = [(0, "-", "U")]
        sex = "w" if players[sr] in ("唐丹", "王琳娜", "陈幸琳") else "m"
        lines.append(line001(sr, players[sr], RATINGS[(sr - 1) % 20], sex=sex, cells=cells))
    return "\r\n".join(lines) + "\r\n"


V1 = {i + 1: n for i, n in enumerate(NAMES)}
# The corrected file: 王晓明 -> 王小明 (3), 孙勇征 -> 孙勇正 (11) put right, 洪智 (7) did not
# come, 申鹏 registered late (21).
V2 = {**V1, 3: "王小明", 11: "孙勇正", 21: "申鹏"}
del V2[7]

GROUPS_CSV = (
    "name,club,rating,tags\n唐丹,北京,,women\n王琳娜,上海,,women\n陈幸琳,广东,,women\n"
    "刘欢,武隆,,u14 local\n王晓明,武隆,,local\n孙勇征,武隆,,u14\n洪智,武隆,,local\n"
)


async def as_chief(page: Any, station: Any, path: str = "/pairing") -> None:
    url = station.http_url
    await page.goto(f"{url}/pairing")
    login = json.dumps({"username": "chief", "password": "pw-chief"})
    await page.evaluate(
        """(body) => fetch('/api/auth/login', {method: 'POST', body,
             headers: {'Content-Type': 'application/json'}}).then(r => r.status)""",
        login,
    )
    await page.goto(f"{url}{path}")
    if path == "/pairing":
        await page.wait_for_selector("#login-needed[hidden]", state="attached")


# the page's answer, not its "importing…" while the station works (a loaded CI read that)
SAID = """() => { const t = document.getElementById('result').textContent.trim();
  return t !== '' && !t.includes('正在导入') && !t.startsWith('Importing'); }"""


async def upload(
    page: Any, tmp: Path, name: str, text: str, *, kind: str | None = None, apply: bool = True
) -> tuple[str, str]:
    """Choose a file on /pairing and import it as a person does: the preview's words, then
    (``apply``) 确认导入 and the result's words. Returns (preview, result)."""
    f = tmp / name
    f.write_text(text, "utf-8")
    if kind:
        await page.select_option("#kind", kind)
    if await page.locator("#send").count() and await page.is_checked("#send"):
        await page.uncheck("#send")
    await page.evaluate("document.getElementById('result').textContent = ''")
    await page.set_input_files("#file", str(f))
    await page.click("#upload")
    await page.wait_for_function(SAID)
    await page.wait_for_timeout(200)
    preview = (await page.text_content("#result") or "").strip()
    if not apply or not await page.is_visible("#apply"):
        return preview, preview
    await page.evaluate("document.getElementById('result').textContent = ''")
    await page.click("#apply")
    await page.wait_for_function(SAID)
    await page.wait_for_timeout(300)
    return preview, (await page.text_content("#result") or "").strip()


async def entrants(page: Any) -> list[list[str]]:
    await page.wait_for_timeout(400)
    rows = await page.eval_on_selector_all(
        "#entrants tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    return [r for r in rows if r and r[0].isdigit()]


async def api(page: Any, path: str) -> Any:
    return await page.evaluate("(p) => fetch(p).then(r => r.json())", path)


async def api_text(page: Any, path: str) -> str:
    return await page.evaluate("(p) => fetch(p).then(r => r.text())", path)


async def post(page: Any, path: str, body: Any, ctype: str = "application/json") -> tuple[int, Any]:
    return tuple(
        await page.evaluate(
            """async ([path, body, ctype]) => {
          const s = await (await fetch('/api/auth/session')).json();
          const r = await fetch(path, {method: 'POST', body,
            headers: {'X-CSRF-Token': s.csrf, 'Content-Type': ctype}});
          let j = null; try { j = await r.json(); } catch (e) {}
          return [r.status, j];
        }""",
            [path, body if isinstance(body, str) else json.dumps(body), ctype],
        )
    )


CJK = re.compile(r"[\u4e00-\u9fff]")
RAW = re.compile(r"players_mismatch|start_rank|\bkept\b|\bfile\b:|undefined|null|NaN|\{|\}|_")


def no_chinese_but_names(text: str, names: list[str]) -> str:
    for n in sorted(names, key=len, reverse=True):
        text = text.replace(n, "")
    return "".join(CJK.findall(text))


async def body_text(page: Any) -> str:
    return await page.evaluate("document.body.innerText")


async def import_v1_groups_v2(page: Any, station: Any, tmp: Path) -> tuple[str, str]:
    await as_chief(page, station)
    _, res = await upload(page, tmp, "v1.trf", trf(V1))
    assert res.startswith("已导入"), res
    _, res = await upload(page, tmp, "groups.csv", GROUPS_CSV, kind="players")
    assert res.startswith("已导入棋手名单"), res
    await page.select_option("#kind", "trf")
    return await upload(page, tmp, "v2.trf", trf(V2))


@contextlib.asynccontextmanager
async def wulong_station(tmp_path: Path, **config: Any) -> AsyncIterator[Any]:
    """A Wulong station, no broker, with the chief's account (``chief`` / ``pw-chief``)."""
    accounts = [{"username": "chief", "password_hash": hash_password("pw-chief"), "role": "chief"}]
    cfg = station_config(tmp_path, account=accounts, regulation="wulong-2015", **config)
    started = StationWithWeb(cfg, connect=False)
    await started.start()
    try:
        yield started
    finally:
        await started.stop()
