"""The demo's arbiter: the station's HTTP API as an arbiter uses it, and the demo players' names.

Shared by ``qizhong demo`` and ``qizhong demo --tournament`` (``tournament_demo.py``), so that
neither imports the other for them.
"""

from __future__ import annotations

import http.cookiejar
import json
import random
import urllib.error
import urllib.request
from typing import Any

from qizhong.simulation.venue import VenueError

__all__ = ["ArbiterClient", "player_names"]

SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜"
GIVEN = "天一惟桐志强伟东海波建国春明华立新宏斌俊杰文博宇浩然子轩思远嘉豪振宇德胜家乐铭泽"


def player_names(count: int, rng: random.Random) -> list[str]:
    names: set[str] = set()
    while len(names) < count:
        names.add(rng.choice(SURNAMES) + "".join(rng.sample(GIVEN, rng.choice((1, 2)))))
    listed = sorted(names)  # not the set's order: it changes with PYTHONHASHSEED
    rng.shuffle(listed)
    return listed


class ArbiterClient:
    """The station's HTTP API as the arbiter uses it: a session cookie and the CSRF token."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.csrf = ""
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def request(self, method: str, path: str, body: Any = None, *, raw: bool = False) -> Any:
        data = None
        headers = {"X-CSRF-Token": self.csrf} if self.csrf else {}
        if body is not None:
            data = body.encode() if raw else json.dumps(body).encode()
            headers["Content-Type"] = "text/csv" if raw else "application/json"
        req = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with self._opener.open(req, timeout=10) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return json.loads(exc.read() or b"null")

    def login(self, username: str, password: str) -> None:
        body = self.request("POST", "/api/auth/login", {"username": username, "password": password})
        if not body or "csrf" not in body:
            raise VenueError(f"the demo arbiter cannot log in: {body}")
        self.csrf = body["csrf"]
