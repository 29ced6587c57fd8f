"""``qizhong trf``: FIDE TRF files and pairs lists on the command line.

* ``check FILE``: read a TRF, check its points and games, print a summary (exit 2 on a bad file,
  with the line, the columns and the reason), then which pairing engine (bbpPairings, JaVaFo,
  Swiss-Manager as far as its rules are known) would refuse which line and column, and why
  (exit 3 if one would).
* ``pairs FILE``: read a pairing engine's pairs list.
* ``export --station URL [--round N] [--absent 7,12] [-o FILE]``: the station's TRF after a round.
* ``login --station URL --user NAME``: log in once (the password from ``QZ_PASSWORD`` or a
  prompt); the session is kept in ``--session FILE`` (default ``~/.qizhong/trf-session.json``,
  mode 0600) and reused by the calls below; ``--print-token`` prints it as a token for
  ``--token`` / ``QZ_TOKEN`` (a script's way).
* ``import --station URL FILE [--pairs] [--round N] [--no-send]``: a TRF or a pairs list into
  the station (a chief's or an admin's session).
* ``pair --station URL``: run the station's pairing engine for the next round and show its
  proposal; ``approve --station URL [--no-send]`` imports it; ``discard`` forgets it.

Each action prints one line (``--json``: the station's full reply); an error names the line and
the columns of the file, or the station's reason.
"""

from __future__ import annotations

import argparse
import getpass
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
from qizhong.errors import QizhongError

__all__ = ["add_arguments", "run"]


SESSION_FILE = Path("~/.qizhong/trf-session.json")
COOKIE = "qz_session"  # venue_station.auth.COOKIE


def _station_args(p: argparse.ArgumentParser, *, user: bool = True) -> None:
    p.add_argument("--station", required=True, help="the station's URL, http://host:port")
    if user:
        p.add_argument("--user", help="log in with this account when no session is kept")
        p.add_argument("--token", default=os.environ.get("QZ_TOKEN"), help="a login's token")
        p.add_argument("--session", type=Path, default=None, help=f"default {SESSION_FILE}")
    p.add_argument("--json", action="store_true", help="print the station's full reply")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser("check", help="read and check a TRF; which engine would refuse it")
    check.add_argument("file", type=Path)
    pairs = sub.add_parser("pairs", help="read a pairing engine's pairs list")
    pairs.add_argument("file", type=Path)
    export = sub.add_parser("export", help="the station's TRF after a round")
    _station_args(export, user=False)
    export.add_argument("--round", type=int, help="after this round (default: the last)")
    export.add_argument("--absent", default="", help="start ranks absent next round: 7,12")
    export.add_argument("-o", "--output", type=Path, help="write here (default: stdout)")
    login = sub.add_parser("login", help="log in once; the session is kept for the others")
    _station_args(login)
    login.add_argument("--print-token", action="store_true", help="print the session's token")
    imp = sub.add_parser("import", help="a TRF or a pairs list into the station")
    imp.add_argument("file", type=Path)
    _station_args(imp)
    imp.add_argument("--pairs", action="store_true", help="the file is a pairs list")
    imp.add_argument("--round", type=int, help="the pairs list's round (default: the next)")
    imp.add_argument("--no-send", action="store_true", help="store only; no set_game")
    for name, what in (
        ("pair", "run the station's pairing engine for the next round; show the proposal"),
        ("approve", "import the engine's proposal"),
        ("discard", "forget the engine's proposal"),
    ):
        one = sub.add_parser(name, help=what)
        _station_args(one)
        if name == "approve":
            one.add_argument("--no-send", action="store_true", help="store only; no set_game")


class StationRefused(QizhongError):
    """The station refused: its reason (which names the line and columns of a bad file)."""


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


def _base(args: argparse.Namespace) -> str:
    return str(args.station).rstrip("/")


def _call(
    url: str, data: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            body: bytes = resp.read()
            return resp.status, body
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _refused(status: int, body: bytes) -> StationRefused:
    try:
        reply = json.loads(body)
        reason = reply.get("error") or reply.get("message") or str(reply)
    except ValueError:
        reason = body.decode("utf-8", "replace")[:300]
    return StationRefused(f"the station answered {status}: {reason}")


class _Session:
    """One login, kept in a file (mode 0600) or given as a token, reused by every call."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.base = _base(args)
        self.file = (args.session or SESSION_FILE).expanduser()
        self.sid = self.csrf = ""
        if args.token:
            self.sid, _, self.csrf = str(args.token).partition(".")
        elif self.file.is_file():
            kept = json.loads(self.file.read_text(encoding="utf-8"))
            if kept.get("station") == self.base:
                self.sid, self.csrf = kept["sid"], kept["csrf"]

    def login(self) -> None:
        user = self.args.user
        if not user:
            raise StationRefused(
                f"no session for {self.base}: qizhong trf login --station {self.base} --user NAME"
            )
        password = os.environ.get("QZ_PASSWORD") or getpass.getpass(f"password for {user}: ")
        body = json.dumps({"username": user, "password": password}).encode()
        req = urllib.request.Request(
            f"{self.base}/api/auth/login", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                cookie = resp.headers.get("Set-Cookie", "")
                reply = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise _refused(exc.code, exc.read()) from None
        found = re.search(rf"{COOKIE}=([^;]+)", cookie)
        if not found:
            raise StationRefused("the station set no session cookie")
        self.sid, self.csrf = found.group(1), reply["csrf"]
        self.file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"station": self.base, "user": user, "sid": self.sid, "csrf": self.csrf}, out)

    @property
    def token(self) -> str:
        return f"{self.sid}.{self.csrf}"

    def post(self, path: str, data: bytes = b"") -> dict[str, object]:
        if not self.sid:
            self.login()
        for attempt in (1, 2):
            headers = {"Cookie": f"{COOKIE}={self.sid}", "X-CSRF-Token": self.csrf}
            status, body = _call(f"{self.base}{path}", data, headers)
            if status == 401 and attempt == 1 and self.args.user and not self.args.token:
                self.login()  # the kept session expired: once more with a new one
                continue
            if status != 200:
                raise _refused(status, body)
            reply: dict[str, object] = json.loads(body)
            return reply
        raise AssertionError("unreachable")


def _export(args: argparse.Namespace) -> int:
    query = {
        k: v for k, v in (("round", args.round), ("absent", args.absent)) if v not in (None, "")
    }
    url = f"{_base(args)}/api/export/tournament.trf"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    status, body = _call(url)
    if status != 200:
        raise _refused(status, body)
    if args.output:
        args.output.write_bytes(body)
        trf = Trf.parse(body)
        print(
            f"{args.output}: {len(trf.players)} players after round {trf.rounds_played} "
            f"of {trf.total_rounds}"
        )
    else:
        sys.stdout.write(body.decode("utf-8"))
    return 0


def _sent(reply: dict[str, object]) -> str:
    replies = reply.get("set_game")
    if not isinstance(replies, dict) or not replies:
        return ""
    counts: dict[str, int] = {}
    for r in replies.values():
        outcome = str(r.get("outcome")) if isinstance(r, dict) else str(r)
        counts[outcome] = counts.get(outcome, 0) + 1
    return "; set_game " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


def _round_line(reply: dict[str, object]) -> str:
    return f"round {reply['round']}: {reply['games']} games, {reply['byes']} byes stored"


def _show(args: argparse.Namespace, reply: dict[str, object], line: str) -> int:
    print(json.dumps(reply, ensure_ascii=False, indent=2) if args.json else line)
    return 0


def _import(args: argparse.Namespace) -> int:
    data = args.file.read_bytes()
    # Refuse a bad file here, naming the line, before anything reaches the station.
    if args.pairs:
        parse_pairs(data)
    else:
        Trf.parse(data)
    query: dict[str, str] = {"send": "0" if args.no_send else "1"}
    if args.round is not None:
        query["round"] = str(args.round)
    path = "/api/pairs" if args.pairs else "/api/trf"
    reply = _Session(args).post(f"{path}?{urllib.parse.urlencode(query)}", data)
    if args.pairs:
        line = _round_line(reply)
    else:
        line = f"{reply['players']} players imported"
        if reply.get("round") is not None:
            line += f"; {_round_line(reply)}"
    return _show(args, reply, line + _sent(reply))


def _engine(args: argparse.Namespace) -> int:
    session = _Session(args)
    if args.action == "login":
        session.login()
        if args.print_token:
            print(session.token)
        else:
            print(f"logged in as {args.user} at {session.base}; session kept in {session.file}")
        return 0
    if args.action == "pair":
        reply = session.post("/api/pairing/propose")
        boards = reply.get("boards")
        assert isinstance(boards, list)
        shown = " ".join(
            f"{b['white']}-{b['black']}" if b["black"] else f"{b['white']} bye" for b in boards
        )
        line = f"round {reply['round']} proposed by {reply['engine']}: {shown}"
        return _show(args, reply, line + f" (qizhong trf approve --station {session.base})")
    if args.action == "approve":
        query = urllib.parse.urlencode({"send": "0" if args.no_send else "1"})
        reply = session.post(f"/api/pairing/approve?{query}")
        return _show(args, reply, _round_line(reply) + _sent(reply))
    reply = session.post("/api/pairing/discard")
    return _show(args, reply, "proposal discarded")


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "check":
            return _check(args.file)
        if args.action == "pairs":
            return _pairs(args.file)
        if args.action == "export":
            return _export(args)
        if args.action == "import":
            return _import(args)
        return _engine(args)
    except TrfError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return 2
    except StationRefused as exc:
        print(f"qizhong trf {args.action}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a missing file, a station that cannot be reached
        print(f"qizhong trf {args.action}: {exc}", file=sys.stderr)
        return 1
