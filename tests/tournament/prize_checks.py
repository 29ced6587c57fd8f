"""The prize list's checks, shared by both events' test modules: what the organiser read
(prize_page.read_prizes) against what the seed gives (seed_prizes, from seed_rules' standings)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from tournament.event import EventRecord
from tournament.prize_page import csv_table, page_rows, place, yuan
from tournament.seed_prizes import PRIZES, Prize, expected_prizes, fen, final_order
from tournament.seed_rules import knockout_places, rank

__all__ = [
    "api_list",
    "check_api",
    "check_csv",
    "check_english",
    "check_final",
    "check_page_rows",
    "check_print",
    "check_provisional_before",
    "check_totals",
    "expected",
    "page_list",
]

Row = tuple[int, int, str, Decimal | None]


def expected(record: EventRecord) -> dict[str, list[Prize]]:
    """Each list's prizes by the seed, from the test's own results (seed_rules.rank)."""
    ko: list[str] = []
    if record.seed.knockout_after is not None:
        ko = knockout_places(record.ko_matches)
    rest = [p for p in record.players if p not in ko]
    rows = rank(record.seed, record.games, rest, last=record.seed.rounds)
    return expected_prizes(record.regulation, final_order(record.regulation, rows, ko), record.tags)


def _rows(prizes: list[Prize]) -> list[Row]:
    return [p.row for p in prizes]


def _read(record: EventRecord, lang: str = "zh") -> dict[str, Any]:
    read = record.prizes.get(lang)
    assert read, f"/prizes not read in {lang}: {record.prizes.get('problems')}"
    return read


def page_list(record: EventRecord, key: str, lang: str = "zh") -> list[Row]:
    """The rows of one list's table on the page: the table headed by the list's Chinese name
    (the regulation's words; in English the table in the same place); a one-list regulation:
    the page's only table."""
    table = PRIZES[record.regulation]
    zh = _read(record, "zh")["tables"]
    tables = _read(record, lang)["tables"]
    assert len(tables) == len(zh) == len(table.lists), [t["name"] for t in tables]
    if len(table.lists) == 1:
        return page_rows(tables[0], record.players)
    name = table.list(key).zh
    mine = [i for i, t in enumerate(zh) if name in t["name"]]
    assert len(mine) == 1, (name, [t["name"] for t in zh])
    return page_rows(tables[mine[0]], record.players)


def _api(record: EventRecord) -> dict[str, Any]:
    api = record.prizes.get("api") or {}
    assert api.get("status") == 200, api
    return dict(api["body"])


def api_list(record: EventRecord, key: str) -> dict[str, Any]:
    lst = PRIZES[record.regulation].list(key)
    lists = _api(record)["lists"]
    if len(PRIZES[record.regulation].lists) == 1:
        assert len(lists) == 1, lists
        return dict(lists[0])
    return dict(next(x for x in lists if x["zh"] == lst.zh))


def check_page_rows(record: EventRecord) -> None:
    mine = expected(record)
    seen = {key: page_list(record, key) for key in mine}
    assert seen == {key: _rows(rows) for key, rows in mine.items()}


def check_api(record: EventRecord) -> None:
    table = PRIZES[record.regulation]
    body = _api(record)
    assert (body["regulation"], body["registered"]) == (record.regulation, len(record.players))
    assert body["combinable"] is table.combinable or len(table.lists) == 1
    assert len(body["lists"]) == len(table.lists)
    for key, rows in expected(record).items():
        got = api_list(record, key)
        api_rows = [(r["place"], r["to"], r["player"], Decimal(r["prize"])) for r in got["rows"]]
        assert api_rows == _rows(rows), key
        assert [r["shared"] for r in got["rows"]] == [p.place != p.to for p in rows], key
        assert [r["prize"] for r in got["rows"]] == [f"{p.yuan:.2f}" for p in rows], key


def check_totals(record: EventRecord) -> None:
    """Each list's total (in full) and what it pays now, the event's total: in the API and on
    the page (the numbers in its text)."""
    table = PRIZES[record.regulation]
    mine = expected(record)
    body = _api(record)
    assert Decimal(body["total"]) == table.total
    shown = {
        yuan(n) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", _read(record)["inner"].replace(" ", ""))
    }
    for key, rows in mine.items():
        got = api_list(record, key)
        paid = fen(sum(p.yuan for p in rows))
        lst = table.list(key)
        assert (Decimal(got["total"]), Decimal(got["paid"])) == (lst.total, paid), key
        assert paid in shown, (key, paid, "not on the page")
    assert table.total in shown, (table.total, "the event's total not on the page")


def check_final(record: EventRecord) -> None:
    body = _api(record)
    assert (body["final"], body["provisional"]) == (True, [])
    read = _read(record)
    assert "暂定" not in read["inner"], read["inner"]
    assert "最终名单" in read["inner"], read["inner"]  # said on screen, not only on paper
    en = record.prizes.get("en") or {}
    assert "provisional" not in en.get("inner", "").lower()
    assert "Final list" in en.get("inner", ""), en.get("inner")


def check_provisional_before(record: EventRecord) -> None:
    """Before the last round (and, Meishan, before the knockout) the list says it is not
    final, and why: rounds not played, the knockout not finished."""
    assert len(record.prizes_before) == 2, record.prizes_before
    for round_no, api in record.prizes_before.items():
        assert api["status"] == 200, api
        body = api["body"]
        ko = record.seed.knockout_after
        want = {"rounds"} | ({"knockout"} if ko is not None and round_no <= ko + 1 else set())
        got = (body["final"], set(body["provisional"]))
        assert got == (False, want), (round_no, got)


def check_csv(record: EventRecord) -> None:
    """The zh CSV: a BOM, the documented header, and the page's rows (list, place, player,
    amount) in the page's order."""
    raw = record.prizes.get("csv") or {}
    assert raw.get("status") == 200, raw.get("status")
    bom, rows = csv_table(raw["bytes"])
    assert bom
    assert rows[0] == ["奖项", "名次", "棋手", "奖金（元）", "说明"], rows[0]
    table = PRIZES[record.regulation]
    csv_rows = []
    for r in rows[1:]:
        span = place(r[1]) or (0, 0)
        csv_rows.append((r[0], span[0], span[1], r[2], yuan(r[3])))
    page = []
    for lst in table.lists:
        name = lst.zh
        if len(table.lists) == 1:
            name = csv_rows[0][0] if csv_rows else ""
        page += [(name, *row) for row in page_list(record, lst.key)]
    assert csv_rows == page
    # the English one: the same rows under the documented English header
    raw_en = record.prizes.get("csv_en") or {}
    assert raw_en.get("status") == 200, raw_en.get("status")
    bom, rows_en = csv_table(raw_en["bytes"])
    assert bom and rows_en[0] == ["List", "Place", "Player", "Prize (yuan)", "Note"], rows_en[0]
    assert [r[1:4] for r in rows_en[1:]] == [r[1:4] for r in rows[1:]]


# raw codes: anywhere (u14, null, a template's braces), or a list's / group's code as a whole
# text (English words such as "women" are fine in a sentence)
RAW = re.compile(
    r"\b(u14|null|undefined|NaN)\b|[{}]|^(open|combined|local|women|master|true|false)$"
)
LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_'.-]*")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+")
LATIN_ALLOWED = {"CSV", "English", "PDF"}


def check_english(record: EventRecord) -> None:
    """Switched to English once: the words change, the rows stay; no raw code on either
    page; no Chinese on the English one but the names (and the 中文 switch), no Latin word on
    the Chinese one but file formats."""
    zh, en = _read(record, "zh"), _read(record, "en")
    assert zh["inner"] != en["inner"]
    raw_zh = [t for t in zh["texts"] if RAW.search(t)]
    raw_en = [t for t in en["texts"] if RAW.search(t)]
    assert (raw_zh, raw_en) == ([], []), f"raw codes shown: {raw_zh} {raw_en}"
    names = sorted(record.players, key=len, reverse=True)

    def cjk(t: str) -> bool:
        for n in [*names, "中文"]:
            t = t.replace(n, "")
        return bool(CJK.search(t))

    chinese = [t for t in en["texts"] if cjk(t)]
    assert chinese == [], f"Chinese on the English page: {chinese}"
    latin = [t for t in zh["texts"] if set(LATIN.findall(t)) - LATIN_ALLOWED]
    assert latin == [], f"Latin words on the Chinese page: {latin}"
    for key in expected(record):
        assert page_list(record, key, "en") == page_list(record, key, "zh"), key


def check_print(record: EventRecord) -> None:
    """Printed: white paper (no dark background), dark text, no buttons, the rows there."""
    printed = record.prizes.get("print")
    assert printed, record.prizes.get("problems")
    white = ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")
    assert printed["body"] in white, printed
    # the page around the body: printed with 背景图形 / "Background graphics" ticked, a dark
    # one is a black block under a short list on an A4 sheet
    assert printed["html"] in white, f"printed, the page around the list is {printed['html']}"
    assert printed["controls"] == [], printed["controls"]
    first = expected(record)["open"][0].player
    assert first in printed["inner"]
