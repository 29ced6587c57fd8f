"""Outsider organiser: registration day and the morning of round 1 (corrected TRF files,
groups, wrong files, undo, a rename after play, a withdrawal, both languages).

Written by a tester who read only the documents (helper-27, stop 41); seven of its scenarios
failed on the first cut of "a name put right" and are mended: a no-show dropped left a gap the
engine refused, a renumbered file was refused, undo left the late entrant, the spreadsheet
brought old names back, a typo found after round 1 was paired could not be put right, one
sentence gave two reasons, the change log waited for a reload. The helpers are in
tests/support/registration.py."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.registration import (
    CJK,
    GROUPS_CSV,
    NAMES,
    RAW,
    V1,
    V2,
    api,
    api_text,
    as_chief,
    body_text,
    entrants,
    import_v1_groups_v2,
    no_chinese_but_names,
    trf,
    upload,
    wulong_station,
)
from support.trf_boards import Boards

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Any]:
    async with wulong_station(tmp_path) as started:
        yield started


async def test_corrected_file_puts_names_right_drops_the_no_show_adds_the_late_one(
    page: Any, station: Any, tmp_path: Path
) -> None:
    preview, result = await import_v1_groups_v2(page, station, tmp_path)
    assert "改正姓名 2 名：王晓明 → 王小明、孙勇征 → 孙勇正" in preview, preview
    assert "移除名单中已没有的未参赛棋手 1 名：洪智" in preview and "新棋手 1 名" in preview
    assert "改正姓名 2 名" in result and "洪智" in result, result
    # (stop 41: before round 1 a list with a gap — 洪智's 7 — is numbered 1..20 in its order,
    # said in the preview: a pairing engine refuses a missing number)
    assert "序号不连续（缺 7）" in preview, preview
    renumbered = {i: V2[r] for i, r in enumerate(sorted(V2), 1)}
    rows = await entrants(page)
    assert [r[0] for r in rows] == [str(i) for i in sorted(renumbered)]
    assert rows[2][1:] == ["王小明", "王小明"] and rows[-1][1:] == ["申鹏", "申鹏"]
    # the standings page and its CSV
    await page.goto(f"{station.http_url}/standings")
    await page.wait_for_function("document.body.innerText.includes('申鹏')")
    text = await body_text(page)
    assert "王小明" in text and "孙勇正" in text
    assert "王晓明" not in text and "孙勇征" not in text and "洪智" not in text
    csv = await api_text(page, "/api/export/standings.csv")
    assert "王小明" in csv and "申鹏" in csv and "洪智" not in csv and "王晓明" not in csv
    # the groups follow the name; the no-show is in no group
    local = [r["player"] for r in (await api(page, "/api/standings?tag=local"))["standings"]]
    assert sorted(local) == sorted(["刘欢", "王小明"]), local
    u14 = [r["player"] for r in (await api(page, "/api/standings?tag=u14"))["standings"]]
    assert sorted(u14) == sorted(["刘欢", "孙勇正"]), u14
    prizes = await api(page, "/api/prizes")
    assert prizes["registered"] == 20
    lists = {x["key"]: x for x in prizes["lists"]}
    assert lists["open"]["paid_places"] == 6
    assert lists["local"]["members"] == 2, lists["local"]
    await page.goto(f"{station.http_url}/prizes")
    await page.wait_for_function("document.body.innerText.includes('公开组')")
    ptext = await body_text(page)
    assert "报名参赛 20 人" in ptext and "洪智" not in ptext and "王晓明" not in ptext, ptext
    # what the pairing engine reads
    export = await api_text(page, "/api/export/tournament.trf")
    names = {
        int(line[4:8]): line[14:47].strip()
        for line in export.splitlines()
        if line.startswith("001")
    }
    assert names == renumbered, names


async def test_a_no_show_dropped_shrinks_the_prize_list(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """20 registered -> 6 prizes (30 %); the no-show removed -> 19 -> 5 (rounded down)."""
    await as_chief(page, station)
    await upload(page, tmp_path, "v1.trf", trf(V1))
    assert (await api(page, "/api/prizes"))["lists"][0]["paid_places"] == 6
    fewer = dict(V1)
    del fewer[7]
    _preview, result = await upload(page, tmp_path, "v1b.trf", trf(fewer))
    assert "洪智" in result, result
    prizes = await api(page, "/api/prizes")
    assert prizes["registered"] == 19 and prizes["lists"][0]["paid_places"] == 5, prizes
    await page.goto(f"{station.http_url}/prizes")
    await page.wait_for_function("document.body.innerText.includes('公开组')")
    text = await body_text(page)
    assert "报名参赛 19 人" in text
    # no groups given yet: the group lists say nobody is in them (not "no winners yet")
    assert text.count("本组没有棋手") == 2 and "暂无获奖者" not in text, text


async def test_the_groups_spreadsheet_imported_again_after_a_rename(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """The organiser's groups spreadsheet still says 王晓明 / 孙勇征 / 洪智 (it was typed before
    the corrections). Importing it again must not bring the old names back as extra entrants:
    they would count as registered players (the 30 % rule) and stand in the standings."""
    await import_v1_groups_v2(page, station, tmp_path)
    before = await api(page, "/api/prizes")
    preview, result = await upload(page, tmp_path, "groups.csv", GROUPS_CSV, kind="players")
    print("PREVIEW:", preview, "\nRESULT:", result)
    standings = [r["player"] for r in (await api(page, "/api/standings"))["standings"]]
    after = await api(page, "/api/prizes")
    lists = {x["key"]: x for x in after["lists"]}
    print(
        "GHOSTS: registered",
        before["registered"],
        "->",
        after["registered"],
        "local members",
        lists["local"]["members"],
        [r["player"] for r in (await api(page, "/api/standings?tag=local"))["standings"]],
    )
    assert "王晓明" not in standings and "洪智" not in standings, (preview, standings)
    assert after["registered"] == before["registered"] == 20, (
        before["registered"],
        after["registered"],
    )


async def test_another_events_file_and_swapped_names_are_refused_in_words(
    page: Any, station: Any, tmp_path: Path
) -> None:
    await as_chief(page, station)
    await upload(page, tmp_path, "v1.trf", trf(V1))
    before = await entrants(page)
    other = {
        i + 1: n
        for i, n in enumerate(
            [
                "甲一",
                "乙二",
                "丙三",
                "丁四",
                "戊五",
                "己六",
                "庚七",
                "辛八",
                "壬九",
                "癸十",
                "子一",
                "丑二",
                "寅三",
                "卯四",
                "辰五",
                "巳六",
                "午七",
                "未八",
                "申九",
                "酉十",
            ]
        )
    }
    preview, _ = await upload(
        page, tmp_path, "other.trf", trf(other, event="梅山公开赛"), apply=False
    )
    assert "导入失败" in preview or "拒绝" in preview or "不" in preview, preview
    assert not await page.is_visible("#apply")
    assert not RAW.search(preview), preview
    await page.click("#lang")
    en = (await page.text_content("#result") or "").strip()
    assert not no_chinese_but_names(en, list(other.values()) + NAMES), en
    assert not RAW.search(en), en
    await page.click("#lang")
    print("OTHER:", preview, "|", en)
    # (stop 41: two names swapped before round 1 is the pairing program's renumbering: taken,
    # said in the preview; once a round is paired it is refused — test_players_corrected.py)
    swapped = {**V1, 3: V1[4], 4: V1[3]}
    await page.select_option("#kind", "trf")
    preview, _ = await upload(page, tmp_path, "swapped.trf", trf(swapped), apply=False)
    print("SWAPPED:", preview)
    assert await page.is_visible("#apply")
    assert "新序号" in preview, preview
    assert not RAW.search(preview), preview
    await page.click("#cancel")
    six = {**V1, **{i: V1[i] + "甲" for i in (2, 4, 6, 8, 10, 12)}}
    preview, _ = await upload(page, tmp_path, "six.trf", trf(six), apply=False)
    print("SIX:", preview)
    assert not await page.is_visible("#apply")
    assert await entrants(page) == before


async def test_undo_the_corrected_import_then_import_it_again(
    page: Any, station: Any, tmp_path: Path
) -> None:
    await import_v1_groups_v2(page, station, tmp_path)
    after_v2 = await entrants(page)
    await page.reload()
    await page.wait_for_selector("#login-needed[hidden]", state="attached")
    await page.wait_for_timeout(500)
    audit = await page.locator("#audit li").all_text_contents()
    print("AUDIT:", audit)
    assert audit and ("王小明" in audit[0] or "改正" in audit[0] or "TRF" in audit[0]), audit
    await page.click("#undo")
    await page.wait_for_timeout(800)
    print("UNDO:", await page.text_content("#t-result"))
    await page.reload()
    await page.wait_for_selector("#login-needed[hidden]", state="attached")
    rows = await entrants(page)
    assert [r[1] for r in rows] == [V1[i] for i in sorted(V1)], rows
    local = [r["player"] for r in (await api(page, "/api/standings?tag=local"))["standings"]]
    assert sorted(local) == sorted(["刘欢", "王晓明", "洪智"]), local
    players = [r["player"] for r in (await api(page, "/api/standings"))["standings"]]
    assert sorted(players) == sorted(V1.values()), sorted(set(players) - set(V1.values()))
    assert (await api(page, "/api/prizes"))["registered"] == 20
    _, result = await upload(page, tmp_path, "v2.trf", trf(V2))
    assert "改正姓名 2 名" in result, result
    assert await entrants(page) == after_v2
    local = [r["player"] for r in (await api(page, "/api/standings?tag=local"))["standings"]]
    assert sorted(local) == sorted(["刘欢", "王小明"]), local


async def play_round1(page: Any, station: Any, tmp: Path, players: dict[int, str]) -> None:
    _, result = await upload(page, tmp, "r1.trf", trf(players, round1=True))
    assert "第1轮" in result, result
    games = await api(page, "/api/games?round=1")
    boards = Boards(station)
    for g in games if isinstance(games, list) else games["games"]:
        boards.decide(g["board"], g["game"], "red")
    await page.wait_for_timeout(500)


async def test_a_player_who_has_played_cannot_be_renamed_and_is_told_why(
    page: Any, station: Any, tmp_path: Path
) -> None:
    await import_v1_groups_v2(page, station, tmp_path)
    await play_round1(page, station, tmp_path, V2)
    st = {r["player"]: r["points"] for r in (await api(page, "/api/standings"))["standings"]}
    assert st["王天一"] == 2 and st["王小明"] == 2, st
    # the pairing program's file after round 1 (results in), same names: taken
    played = {sr: ("1" if i < 10 else "0") for i, sr in enumerate(sorted(V2))}
    _, result = await upload(page, tmp_path, "after1.trf", trf(V2, round1=True, played=played))
    print("AFTER1:", result)
    # now the organiser notices 王天一 is really 王天乙 (he has played)
    renamed = {**V2, 1: "王天乙"}
    preview, _ = await upload(
        page, tmp_path, "rename-played.trf", trf(renamed, round1=True, played=played), apply=False
    )
    print("RENAME-PLAYED:", preview)
    await page.click("#lang")
    en = (await page.text_content("#result") or "").strip()
    await page.click("#lang")
    print("RENAME-PLAYED-EN:", en)
    assert not await page.is_visible("#apply")
    assert "王天一" in preview and "王天乙" in preview and "已有对局" in preview, preview
    assert not no_chinese_but_names(en, ["王天一", "王天乙"]), en
    st = {r["player"] for r in (await api(page, "/api/standings"))["standings"]}
    assert "王天一" in st and "王天乙" not in st


async def test_a_typo_found_after_round_1_is_paired_but_before_it_starts(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """Morning of round 1: the pairings are out, nobody has played; 王小明 says his name is
    王小名. The pairing program exports the same round 1 with the name put right."""
    await import_v1_groups_v2(page, station, tmp_path)
    _, result = await upload(page, tmp_path, "r1.trf", trf(V2, round1=True))
    assert "第1轮" in result, result
    renamed = {**V2, 3: "王小名"}
    preview, result = await upload(page, tmp_path, "r1-fixed.trf", trf(renamed, round1=True))
    print("R1-TYPO:", preview, "|", result, "| replace offered:", await page.is_visible("#replace"))
    games = await api(page, "/api/games?round=1")
    games = games if isinstance(games, list) else games["games"]
    names = {g["red"] for g in games} | {g["black"] for g in games}
    assert "王小名" in names and "王小明" not in names, (preview, result)


async def test_a_bye_of_round_1_follows_a_name_put_right(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """21 entrants: round 1 gives the lowest a pairing-allocated bye (2 points); then his name
    is put right. The 2 points must stay with him, not with a ghost of his old name."""
    await import_v1_groups_v2(page, station, tmp_path)
    field = {**V2, 7: "洪智"}  # 21 players
    await upload(page, tmp_path, "v21.trf", trf(field))
    ranks = sorted(field)
    bye = ranks[-1]  # 21 申鹏
    _, result = await upload(page, tmp_path, "r1.trf", trf(field, round1=True))
    print("R1-21:", result)
    renamed = {**field, bye: "申朋"}
    preview, result = await upload(page, tmp_path, "r1-fixed.trf", trf(renamed, round1=True))
    print("BYE-RENAME:", preview, "|", result)
    st = {r["player"]: r["points"] for r in (await api(page, "/api/standings"))["standings"]}
    assert "申鹏" not in st or "申朋" not in st, st
    if "申朋" in st:
        assert st["申朋"] == 2, st


async def test_a_withdrawn_player_renamed_stays_withdrawn(
    page: Any, station: Any, tmp_path: Path
) -> None:
    await as_chief(page, station)
    await upload(page, tmp_path, "v1.trf", trf(V1))
    await page.fill("#wd-player", "王晓明")
    await page.click("#withdraw")
    await page.wait_for_function("document.getElementById('t-result').textContent.trim() !== ''")
    print("WD:", await page.text_content("#t-result"))
    assert (await api(page, "/api/prizes"))["registered"] == 19
    preview, result = await upload(page, tmp_path, "v2.trf", trf({**V1, 3: "王小明"}))
    print("WD-RENAME:", preview, "|", result)
    data = await api(page, "/api/standings")
    assert "王小明" in data["withdrawn"] and "王晓明" not in data["withdrawn"], data["withdrawn"]
    assert (await api(page, "/api/prizes"))["registered"] == 19
    await page.goto(f"{station.http_url}/standings")
    await page.wait_for_function("document.body.innerText.includes('王小明')")
    text = await body_text(page)
    assert "王晓明" not in text
    export = await api_text(
        page,
        "/api/export/tournament.trf",
    )
    line = next(x for x in export.splitlines() if x.startswith("001    3"))
    print("EXPORT-3:", line)
    assert "王小明" in line
    # the page's undo of the withdrawal now acts on the renamed player
    await page.goto(f"{station.http_url}/pairing")
    await page.wait_for_selector("#login-needed[hidden]", state="attached")
    await page.fill("#wd-player", "王小明")
    await page.click("#readmit")
    await page.wait_for_timeout(600)
    print("READMIT:", await page.text_content("#t-result"))
    assert (await api(page, "/api/standings"))["withdrawn"] == []


async def test_the_english_page_says_the_corrections_in_english(
    page: Any, station: Any, tmp_path: Path
) -> None:
    await as_chief(page, station)
    await page.click("#lang")
    _, result = await upload(page, tmp_path, "v1.trf", trf(V1))
    print("EN-V1:", result)
    preview, result = await upload(page, tmp_path, "v2.trf", trf(V2))
    print("EN-V2:", preview, "|", result)
    for text in (preview, result):
        assert not no_chinese_but_names(text, NAMES + list(V2.values())), text
    await page.wait_for_timeout(500)
    page_text = await body_text(page)
    proper = ["武隆象棋公开赛", "李明", "武隆", "中文"]  # names, the title and the switch
    leftover = no_chinese_but_names(page_text, NAMES + list(V2.values()) + proper)
    assert not leftover, leftover
    audit = await page.locator("#audit li").all_text_contents()
    print("EN-AUDIT:", audit)
    for path in ("/standings?lang=en", "/prizes?lang=en"):
        await page.goto(f"{station.http_url}{path}")
        await page.wait_for_timeout(800)
        t = await body_text(page)
        left = no_chinese_but_names(t, NAMES + list(V2.values()) + ["武隆象棋公开赛"])
        print("EN-PAGE", path, repr(left), t[:300].replace("\n", " / "))
    # a players-only file has no round: "round —: 0 games" is not something to print
    assert "round —" not in result, result


ENGINE = Path(__file__).resolve().parents[1] / "support" / "trf_engine.py"


@pytest_asyncio.fixture(loop_scope="session")
async def engine_station(tmp_path: Path) -> AsyncIterator[Any]:
    """A station whose pairing engine is the stand-in (tests/support/trf_engine.py), invoked
    as bbpPairings is."""
    wrapper = tmp_path / "bbpPairings"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {ENGINE} "$@"\n')
    wrapper.chmod(0o755)
    engine = {"engine": "bbpPairings", "path": str(wrapper)}
    async with wulong_station(tmp_path, pairing=engine) as started:
        yield started


async def test_round_1_is_paired_by_the_engine_after_a_no_show_is_dropped(
    page: Any, engine_station: Any, tmp_path: Path
) -> None:
    """The no-show (start rank 7) removed leaves a hole in the start ranks; the export must
    still be a file the engine pairs, and 运行引擎 must propose round 1."""
    await import_v1_groups_v2(page, engine_station, tmp_path)
    export = await api_text(page, "/api/export/tournament.trf")
    from clock_service.trf.engines import refusals

    print("REFUSALS:", refusals(export))
    await page.click("#propose")
    await page.wait_for_function(
        "document.getElementById('engine-status').textContent.trim() !== ''", timeout=30000
    )
    await page.wait_for_timeout(1500)
    status = (await page.text_content("#engine-status") or "").strip()
    detail = (await page.text_content("#engine-detail") or "").strip()
    print("ENGINE:", status, "|", detail)
    await page.click("#lang")
    en = (await page.text_content("#engine-status") or "").strip()
    print("ENGINE-EN:", en)
    assert refusals(export) == [], refusals(export)
    assert await page.locator("#proposal-boards tr").count() == 10, (status, detail)
    assert not CJK.search(en), f"the English switch leaves the engine's status in Chinese: {en}"


async def test_a_renumbered_file_from_the_pairing_program_before_round_1(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """Swiss-Manager and Vega renumber the start ranks before round 1 when a player is deleted
    (8..20 become 7..19) and the late entrant is 20. Nobody has played: what does the organiser
    get, and is there a way to take the pairing program's numbers?"""
    await as_chief(page, station)
    await upload(page, tmp_path, "v1.trf", trf(V1))
    kept = [V1[i] for i in sorted(V1) if i != 7] + ["申鹏"]
    renumbered = {i + 1: n for i, n in enumerate(kept)}
    preview, result = await upload(page, tmp_path, "renum.trf", trf(renumbered))
    print("RENUM:", preview, "|", result)
    rows = await entrants(page)
    assert [r[1] for r in rows] == kept, (preview, rows)


async def test_the_change_log_shows_the_corrected_import_to_undo(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """After the corrected import the organiser looks at 变更记录 to see what 撤销上一步 would
    undo: the import should be there at once and say what it changed."""
    await import_v1_groups_v2(page, station, tmp_path)
    await page.wait_for_timeout(1500)
    now = await page.locator("#audit li").all_text_contents()
    await page.reload()
    await page.wait_for_selector("#login-needed[hidden]", state="attached")
    await page.wait_for_timeout(800)
    reloaded = await page.locator("#audit li").all_text_contents()
    await page.click("#lang")
    english = await page.locator("#audit li").all_text_contents()
    print("AUDIT-NOW:", now, "\nAUDIT-RELOADED:", reloaded, "\nAUDIT-EN:", english)
    assert now, "the change log stays empty after an import until the page is reloaded"
    assert "王小明" in reloaded[0] or "改正" in reloaded[0], reloaded
