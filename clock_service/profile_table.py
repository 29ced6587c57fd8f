"""The strict reader of a TOML profile: every key used, every type checked, errors that name
the file, the dotted key and the reason (a silently ignored typo in a regulation decides games).
"""

from __future__ import annotations

import datetime
import difflib
import enum
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from clock_service.errors import ClockServiceError

__all__ = ["CODE_RE", "RegulationError", "Table", "enum_value", "toml_type"]

CODE_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_T = TypeVar("_T")
_E = TypeVar("_E", bound=enum.Enum)


class RegulationError(ClockServiceError, ValueError):
    """A profile that cannot be used; ``source``, ``key`` (dotted) and ``reason`` say why."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


# -- the strict reader -------------------------------------------------------------------------
class Table:
    """One TOML table being read; remembers which keys were used so leftovers are errors."""

    def __init__(self, data: Mapping[str, Any], path: str, source: str) -> None:
        self.data = data
        self.path = path
        self.source = source
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def error(self, name: str, reason: str) -> RegulationError:
        return RegulationError(self.source, self.key(name), reason)

    def has(self, name: str) -> bool:
        return name in self.data

    def _get(self, name: str, expected: type, what: str) -> Any:
        self.used.add(name)
        if name not in self.data:
            raise self.error(name, f"missing value ({what} expected)")
        value = self.data[name]
        # bool is an int in Python; in a profile ``true`` is never a number.
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise self.error(name, f"wrong type: {what} expected, got {toml_type(value)}")
        return value

    def text(self, name: str) -> str:
        value: str = self._get(name, str, "a string")
        if not value.strip():
            raise self.error(name, "must not be empty")
        return value

    def integer(self, name: str, *, low: int = 0, high: int = 10_000) -> int:
        value: int = self._get(name, int, "an integer")
        if not low <= value <= high:
            raise self.error(name, f"{value} is out of range {low}..{high}")
        return value

    def boolean(self, name: str) -> bool:
        value: bool = self._get(name, bool, "a boolean (true or false)")
        return value

    def array(self, name: str, item: Callable[[str, Any], _T], what: str) -> tuple[_T, ...]:
        values: list[Any] = self._get(name, list, f"an array of {what}")
        return tuple(item(f"{name}[{i}]", v) for i, v in enumerate(values))

    def codes(self, name: str) -> tuple[str, ...]:
        def code(key: str, value: Any) -> str:
            if not isinstance(value, str) or not CODE_RE.match(value):
                raise self.error(key, f"{value!r} is not a code like 'board_pause'")
            return value

        found = self.array(name, code, "codes")
        if len(set(found)) != len(found):
            raise self.error(name, "a code is listed twice")
        return found

    def enum(self, name: str, kind: type[_E]) -> _E:
        return enum_value(self, name, self.text(name), kind)

    def table(self, name: str) -> Table:
        return Table(self._get(name, dict, "a table"), self.key(name), self.source)

    def tables(self, name: str) -> tuple[Table, ...]:
        items: list[Any] = self._get(name, list, "an array of tables")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.error(f"{name}[{i}]", f"wrong type: a table expected, got {item!r}")
            out.append(Table(item, self.key(f"{name}[{i}]"), self.source))
        return tuple(out)

    def done(self) -> None:
        for name in self.data:
            if name not in self.used:
                near = difflib.get_close_matches(name, [str(k) for k in self.used], n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise self.error(name, f"unknown key{hint}")


def enum_value(table: Table, key: str, text: str, kind: type[_E]) -> _E:
    for member in kind:
        if member.value == text:
            return member
    allowed = ", ".join(repr(m.value) for m in kind)
    raise table.error(key, f"{text!r} is not one of {allowed}")


def toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array", dict: "a table", datetime.date: "a date", datetime.time: "a time"}
    for kind, label in names.items():
        if type(value) is kind:
            if kind is bool:
                return f"{label} ({str(value).lower()})"
            return f"{label} ({value!r})" if kind not in (list, dict) else label
    return type(value).__name__
