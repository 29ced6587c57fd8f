"""``qizhong trf``: FIDE TRF files and pairs lists on the command line.

* ``check FILE``: read a TRF, check its points and games, print a summary (exit 2 on a bad file,
  with the line, the columns and the reason), then which pairing engine (bbpPairings, JaVaFo,
  Swiss-Manager as far as its rules are known) would refuse which line and column, and why
  (exit 3 if one would).
* ``pairs FILE``: read a pairing engine's pairs list.
* ``export --station URL [--round N] [--absent 7,12] [-o FILE]``: the station's TRF after a round.
* ``import --station URL --user NAME FILE [--pairs] [--round N] [--no-send]``: a TRF or a pairs
  list into the station (the chief arbiter's account; the password from ``QZ_PASSWORD`` or a
  prompt).
"""

from __future__ import annotations

import argparse
import getpass
import http.cookiejar
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from clock_service.trf import engines
from clock_service.trf.document import Trf, TrfError
from clock_service.trf.pairs import parse_pairs

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser("check", help="read and check a TRF; print a summary")
    check.add_argument("file", type=Path)
    pairs = sub.add_parser("pairs", help="read a pairing engine's pairs list")
    pairs.add_argument("file", type=Path)
    export = sub.add_parser("export", help="the station's TRF after a round")
    export.add_argument("--station", required=True, help="the station's URL, http://host:port")
    export.add_argument("--round", type=int, help="after this round (default: the last)")
    export.add_argument("--absent", default="", help="start ranks absent next round: 7,12")
    export.add_argument("-o", "--output", type=Path, help="write here (default: stdout)")
    imp = sub.add_parser("import", help="a TRF or a pairs list into the station")
    imp.add_argument("file", type=Path)
    imp.add_argument("--station", required=True, help="the station's URL, http://host:port")
    imp.add_argument("--user", required=True, help="an account with the chief or admin role")
    imp.add_argument("--pairs", action="store_true", help="the file is a pairs list")
    imp.add_argument("--round", type=int, help="the pairs list's round (default: the next)")
    imp.add_argument("--no-send", action="store_true", help="store only; no set_game")


def _short(reason: str) -> str:
    # bbpPairings quotes the whole line; the line number says which
    return re.sub(r'"(.{30}).{4,}"', r'"\1…"', reason)


def _check(path: Path) -> int:
    data = path.read_bytes()
    trf = Trf.parse(data)
    trf.check()
    paired = trf.paired_round()
    scoring = " ".join(f"{k}={v}" for k, v in trf.scoring.items())
    print(
        f"{trf.name or '(no name)'}: {len(trf.players)} players, {trf.rounds_played} rounds "
        f"played of {trf.total_rounds or '?'}; scoring {scoring}"
    )
    if paired is not None:
        print(
            f"round {paired} paired: {len(trf.pairings(paired))} games, byes {trf.absent(paired)}"
        )
    print("points and games agree")
    # as for pairing the next round, unless every round is played (then as bbp's -c check)
    pairing = trf.total_rounds is None or trf.rounds_played < trf.total_rounds
    found = engines.refusals(data, pairing=pairing)
    for engine in engines.ENGINES:
        mine = [r for r in found if r.engine == engine]
        if not mine:
            print(f"{engine}: reads it")
            continue
        print(f"{engine}: refuses it")
        for r in mine:
            where = f"line {r.line}" + (f", column {r.column}" if r.column else "")
            print(f"  {where if r.line else 'the file'}: {_short(r.reason)}")
    if paired is not None and found:
        print("(a file with a round paired and no results is for import, not for an engine)")
    return 3 if found else 0


def _pairs(path: Path) -> int:
    for board, (white, black) in enumerate(parse_pairs(path.read_bytes()), 1):
        print(f"board {board}: {white} - {black}" if black else f"bye: {white}")
    return 0


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )


def _request(
    opener: urllib.request.OpenerDirector,
    url: str,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    with opener.open(req, timeout=60) as resp:
        body: bytes = resp.read()
        return body


def _export(args: argparse.Namespace) -> int:
    query = {
        k: v for k, v in (("round", args.round), ("absent", args.absent)) if v not in (None, "")
    }
    url = f"{args.station.rstrip('/')}/api/export/tournament.trf"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    body = _request(_opener(), url)
    if args.output:
        args.output.write_bytes(body)
    else:
        sys.stdout.write(body.decode("utf-8"))
    return 0


def _import(args: argparse.Namespace) -> int:
    data = args.file.read_bytes()
    # Refuse a bad file here, naming the line, before anything reaches the station.
    if args.pairs:
        parse_pairs(data)
    else:
        Trf.parse(data)
    password = os.environ.get("QZ_PASSWORD") or getpass.getpass(f"password for {args.user}: ")
    base = args.station.rstrip("/")
    opener = _opener()
    login = json.dumps({"username": args.user, "password": password}).encode()
    session = json.loads(
        _request(opener, f"{base}/api/auth/login", login, {"Content-Type": "application/json"})
    )
    query: dict[str, str] = {"send": "0" if args.no_send else "1"}
    if args.round is not None:
        query["round"] = str(args.round)
    path = "/api/pairs" if args.pairs else "/api/trf"
    url = f"{base}{path}?{urllib.parse.urlencode(query)}"
    reply = _request(opener, url, data, {"X-CSRF-Token": session["csrf"]})
    print(json.dumps(json.loads(reply), ensure_ascii=False, indent=2))
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "check":
            return _check(args.file)
        if args.action == "pairs":
            return _pairs(args.file)
        if args.action == "export":
            return _export(args)
        return _import(args)
    except TrfError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a missing file, a station that cannot be reached
        detail = ""
        if isinstance(exc, urllib.error.HTTPError):
            detail = ": " + exc.read().decode("utf-8", "replace")
        print(f"qizhong trf {args.action}: {exc}{detail}", file=sys.stderr)
        return 1
