"""Registration day on the pairing page (docs/pairing.md, "What an import may change"): the
organiser typed a name wrong in the pairing program and left in a player who did not come. He
puts both right there, exports the players' TRF again and imports it on the page, as he did
the first one. The preview names what changes (王晓明 → 王小明, the absent player removed); once
imported, the entrants, the standings and the TRF the station exports hold the corrected list
and nothing of the old one; 撤销 in the change log puts the first list back. Once a player
has played, his name stays: a file that renames him is refused in words and changes nothing.

The files are written here from the TRF format (docs/pairing.md, FIDE's columns), as the
pairing program writes them: no round played, eight players, then seven.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from support.web import station_without_broker

from venue_station.domain.station import Station

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

GOLDEN = Path(__file__).resolve().parents[1] / "trf" / "golden"
FIELD = [
    ("王天一", 2480), ("郑惟桐", 2470), ("赵鑫鑫", 2460), ("孟辰", 2350),
    ("王晓明", 2300), ("唐丹", 2290), ("王琳娜", 2280), ("洪智", 2270),
]  # fmt: skip
RESULT = "(w) => document.getElementById('result').textContent.includes(w)"


def trf(players: list[tuple[str, int]]) -> bytes:
    """A players file before round 1, with the header lines of the golden event (xiangqi's
    2/1/0 points) and one 001 line a player (columns: a Chinese name takes one per character)."""
    header = (GOLDEN / "xiangqi-r3.trf").read_text("utf-8").splitlines()[:11]
    header = [f"062 {len(players)}" if h.startswith("062") else h for h in header]
    header = [h for h in header if not h.startswith(("142", "XXR"))] + ["142 9", "XXR 9"]
    lines = [
        f"001 {rank:>4} m    {name}{' ' * (33 - len(name))} {rating:>4} CHN {'':>11} {'':>10}"
        f" {'0.0':>4} {rank:>4}"
        for rank, (name, rating) in enumerate(players, 1)
    ]
    return ("\n".join([*header, "162  W 2.0    D 1.0", "BBW  2.0", "BBD  1.0",
                       "XXS W=2 D=1 PAB=2", *lines]) + "\n").encode()  # fmt: skip


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    async with station_without_broker(tmp_path) as started:
        yield started


async def log_in(page: Any) -> None:
    login = json.dumps({"username": "chief", "password": "pw-chief"})
    status = await page.evaluate(
        """(body) => fetch('/api/auth/login', {method: 'POST', body,
             headers: {'Content-Type': 'application/json'}}).then(r => r.status)""",
        login,
    )
    assert status == 200


async def import_file(page: Any, path: Path, *, confirm: bool = True) -> str:
    """The file chosen and 导入 pressed: the preview's words; then 确认导入 (``confirm``)."""
    await page.set_input_files("#file", str(path))
    await page.uncheck("#send")
    await page.click("#upload")
    await page.wait_for_function(
        "() => { const t = document.getElementById('result').textContent;"
        " return !!t && !t.includes('正在导入'); }"
    )
    said = await page.text_content("#result")
    if confirm and await page.is_visible("#apply"):
        await page.click("#apply")
        await page.wait_for_function(RESULT, arg="已导入")
    return str(said)


async def entrants(page: Any) -> list[list[str]]:
    return list(
        await page.eval_on_selector_all(
            "#entrants tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )
    )


async def standings_names(station: Station) -> set[str]:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        rows = (await client.get("/api/standings")).json()["standings"]
    return {r["player"] for r in rows}


async def exported_names(station: Station) -> list[str]:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        await client.post("/api/auth/login", json={"username": "chief", "password": "pw-chief"})
        text = (await client.get("/api/export/tournament.trf")).text
    return [line[14:47].rstrip() for line in text.splitlines() if line.startswith("001")]


async def test_a_name_put_right_and_a_no_show_dropped_before_round_one(
    page: Any, station: Station, tmp_path: Path
) -> None:
    first = tmp_path / "registration.trf"
    first.write_bytes(trf(FIELD))
    corrected = [(("王小明", r) if n == "王晓明" else (n, r)) for n, r in FIELD][:7]  # 洪智 gone
    second = tmp_path / "registration-2.trf"
    second.write_bytes(trf(corrected))

    await page.goto(f"{station.http_url}/pairing")
    await log_in(page)
    await page.goto(f"{station.http_url}/pairing")
    await page.wait_for_selector("#login-needed[hidden]", state="attached")
    await import_file(page, first)
    await page.wait_for_function("document.querySelectorAll('#entrants tr').length >= 8")
    assert [r[1] for r in await entrants(page)][4] == "王晓明"

    # the corrected list: the preview says what it changes before anything is stored
    said = await import_file(page, second, confirm=False)
    assert "预览" in said and "改正姓名 1 名：王晓明 → 王小明" in said, said
    assert "移除名单中已没有的未参赛棋手 1 名：洪智" in said, said
    assert await standings_names(station) == {n for n, _ in FIELD}  # nothing stored yet
    await page.click("#apply")
    await page.wait_for_function(RESULT, arg="已导入")
    said = await page.text_content("#result")
    assert "王晓明 → 王小明" in said and "洪智" in said, said
    await page.wait_for_function(
        "document.querySelectorAll('#entrants tr').length === 7 && [...document"
        ".querySelectorAll('#entrants tr')].some(r => r.textContent.includes('王小明'))"
    )
    assert [r[1] for r in await entrants(page)] == [n for n, _ in corrected]
    want = {n for n, _ in corrected}
    assert await standings_names(station) == want  # neither 王晓明 nor 洪智 stays behind
    assert await exported_names(station) == [n for n, _ in corrected]

    # 撤销 (the change log) puts the first list back, names and all
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post("/api/auth/login", json={"username": "chief", "password": "pw-chief"})
        client.headers["X-CSRF-Token"] = r.json()["csrf"]
        assert (await client.post("/api/tournament/undo")).status_code == 200
    assert await standings_names(station) == {n for n, _ in FIELD}
    assert await exported_names(station) == [n for n, _ in FIELD]
    await import_file(page, second)
    assert await standings_names(station) == want

    # round 1 is paired and 王小明 has a game: a file that renames him is refused in words
    pairs = tmp_path / "round1.pairs"
    pairs.write_text("4\n1 5\n6 2\n3 7\n4 0\n")  # (a bye for 孟辰)
    await page.select_option("#kind", "pairs")
    await page.fill("#pairs-round", "1")
    await import_file(page, pairs)
    renamed = tmp_path / "registration-3.trf"
    renamed.write_bytes(trf([(("王晓敏", r) if n == "王小明" else (n, r)) for n, r in corrected]))
    await page.select_option("#kind", "trf")
    said = await import_file(page, renamed, confirm=False)
    assert "文件中的棋手与本赛事不符" in said and "姓名不能再改" in said, said
    assert "王小明" in said and "王晓敏" in said, said
    assert not await page.is_visible("#apply")
    assert await standings_names(station) == want
    await page.click("#lang")
    said = await page.text_content("#result")
    assert "he is paired or has played: his name stays" in said, said
