"""The serial clock protocol's messages, as frozen dataclasses with ``to_bytes``/``from_bytes``.

Each class carries its type byte (``TYPE``), whether it is acknowledged and retransmitted
(``RELIABLE``) and its direction (``FROM_DEVICE``). ``to_bytes`` gives the payload only; the
type byte, seq, CRC and COBS framing are ``serial_frames.Frame``'s job. Integers are big endian.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import ClassVar, Self

from clock_service import Side
from firmware_bridge.serial.codec import BadPayloadError

__all__ = [
    "MESSAGE_TYPES",
    "SHOW_FLAG_BLACK",
    "SHOW_FLAG_RED",
    "TEXT_MAX",
    "Ack",
    "Battery",
    "Beep",
    "Brightness",
    "Capability",
    "Hello",
    "HelloAck",
    "Key",
    "KeyKind",
    "Message",
    "Nak",
    "NakReason",
    "Ping",
    "Pong",
    "Power",
    "PowerState",
    "Press",
    "Show",
]

TEXT_MAX = 8


class KeyKind(enum.IntEnum):
    PAUSE = 0
    ARBITER = 1


class PowerState(enum.IntEnum):
    OFF = 0
    ON = 1


class NakReason(enum.IntEnum):
    UNKNOWN_TYPE = 1
    BAD_PAYLOAD = 2
    VERSION = 3
    UNEXPECTED = 4  # a valid message the receiver does not take (wrong direction)


class Capability(enum.IntFlag):
    LEVER = 0x0001  # one lever with two contacts instead of two buttons
    PAUSE_KEY = 0x0002
    ARBITER_KEY = 0x0004
    POWER_SENSE = 0x0008
    BATTERY_SENSE = 0x0010
    BUZZER = 0x0020
    BRIGHTNESS = 0x0040
    TEXT = 0x0080  # can show the 8-character text of SHOW


_SIDE_CODE = {Side.RED: 0, Side.BLACK: 1}
_CODE_SIDE = {v: k for k, v in _SIDE_CODE.items()}
_RUNNING_CODE = {None: 0, Side.RED: 1, Side.BLACK: 2}
_CODE_RUNNING = {v: k for k, v in _RUNNING_CODE.items()}
SHOW_FLAG_RED = 0x01  # red's flag has fallen
SHOW_FLAG_BLACK = 0x02


def _check(name: str, value: int, hi: int, lo: int = 0) -> None:
    if not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, not {value!r}")


def _unpack(cls: type, fmt: str, payload: bytes) -> tuple[int, ...]:
    size = struct.calcsize(fmt)
    if len(payload) != size:
        raise BadPayloadError(f"{cls.__name__}: payload is {len(payload)} bytes, expected {size}")
    return struct.unpack(fmt, payload)


def _enum(cls: type, enum_cls: type[enum.IntEnum], code: int) -> enum.IntEnum:
    try:
        return enum_cls(code)
    except ValueError:
        raise BadPayloadError(f"{cls.__name__}: {code} is not a {enum_cls.__name__}") from None


class Message:
    """Base of the message dataclasses. ``reliable`` ones carry a seq and are acknowledged."""

    TYPE: ClassVar[int]
    RELIABLE: ClassVar[bool] = False
    # The direction it travels: True device -> host, False host -> device, None both.
    FROM_DEVICE: ClassVar[bool | None] = None

    def to_bytes(self) -> bytes:
        raise NotImplementedError

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class _U32Event(Message):
    """Device events: one code byte and the device's millisecond clock (wraps at 2**32)."""

    FMT: ClassVar[str] = ">BI"
    RELIABLE: ClassVar[bool] = True
    FROM_DEVICE: ClassVar[bool | None] = True


@dataclass(frozen=True, slots=True, repr=False)
class Hello(Message):
    """Device -> host, unreliable (seq 0): who the device is and where its seq counter stands.

    ``session`` is chosen at random at each device boot; ``tx_seq`` is the oldest seq the
    device has not seen acknowledged (its next seq if none), where the host starts counting.
    """

    TYPE: ClassVar[int] = 0x01
    FROM_DEVICE: ClassVar[bool | None] = True
    version: int
    firmware: tuple[int, int, int]
    capabilities: Capability
    device_id: int
    session: int
    tx_seq: int

    def __post_init__(self) -> None:
        _check("version", self.version, 0xFF)
        if len(self.firmware) != 3:
            raise ValueError(f"firmware is (major, minor, patch), not {self.firmware!r}")
        for part in self.firmware:
            _check("firmware part", part, 0xFF)
        _check("capabilities", int(self.capabilities), 0xFFFF)
        _check("device_id", self.device_id, 0xFFFFFFFF)
        _check("session", self.session, 0xFFFF)
        _check("tx_seq", self.tx_seq, 255, 1)

    def to_bytes(self) -> bytes:
        return struct.pack(
            ">BBBBHIHB", self.version, *self.firmware, int(self.capabilities),
            self.device_id, self.session, self.tx_seq,
        )  # fmt: skip

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        v, a, b, c, caps, dev, session, tx_seq = _unpack(cls, ">BBBBHIHB", payload)
        try:
            return cls(v, (a, b, c), Capability(caps), dev, session, tx_seq)
        except ValueError as exc:
            raise BadPayloadError(f"Hello: {exc}") from None

    def __repr__(self) -> str:
        return (
            f"Hello(version={self.version}, firmware={self.firmware!r}, "
            f"capabilities=Capability({int(self.capabilities):#06x}), "
            f"device_id={self.device_id:#010x}, session={self.session:#06x}, "
            f"tx_seq={self.tx_seq})"
        )


@dataclass(frozen=True, slots=True)
class HelloAck(Message):
    """Host -> device, unreliable: the HELLO with this session is accepted.

    ``tx_seq`` is the host's oldest unacknowledged seq (its next seq if none).
    """

    TYPE: ClassVar[int] = 0x02
    FROM_DEVICE: ClassVar[bool | None] = False
    version: int
    session: int
    tx_seq: int

    def __post_init__(self) -> None:
        _check("version", self.version, 0xFF)
        _check("session", self.session, 0xFFFF)
        _check("tx_seq", self.tx_seq, 255, 1)

    def to_bytes(self) -> bytes:
        return struct.pack(">BHB", self.version, self.session, self.tx_seq)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        try:
            return cls(*_unpack(cls, ">BHB", payload))
        except ValueError as exc:
            raise BadPayloadError(f"HelloAck: {exc}") from None


@dataclass(frozen=True, slots=True, repr=False)
class Press(_U32Event):
    """A player pressed (completed a move) on ``side``."""

    TYPE: ClassVar[int] = 0x10
    side: Side
    device_ms: int

    def __post_init__(self) -> None:
        if self.side not in _SIDE_CODE:
            raise ValueError(f"side must be a Side, not {self.side!r}")
        _check("device_ms", self.device_ms, 0xFFFFFFFF)

    def to_bytes(self) -> bytes:
        return struct.pack(self.FMT, _SIDE_CODE[self.side], self.device_ms)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        code, ms = _unpack(cls, cls.FMT, payload)
        if code not in _CODE_SIDE:
            raise BadPayloadError(f"Press: side code {code} is neither 0 (red) nor 1 (black)")
        return cls(_CODE_SIDE[code], ms)

    def __repr__(self) -> str:
        return f"Press(side=Side.{self.side.name}, device_ms={self.device_ms})"


@dataclass(frozen=True, slots=True, repr=False)
class Key(_U32Event):
    """The pause key or the arbiter key was pressed."""

    TYPE: ClassVar[int] = 0x11
    key: KeyKind
    device_ms: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", KeyKind(self.key))
        _check("device_ms", self.device_ms, 0xFFFFFFFF)

    def to_bytes(self) -> bytes:
        return struct.pack(self.FMT, int(self.key), self.device_ms)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        code, ms = _unpack(cls, cls.FMT, payload)
        return cls(_enum(cls, KeyKind, code), ms)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Key(key=KeyKind.{self.key.name}, device_ms={self.device_ms})"


@dataclass(frozen=True, slots=True, repr=False)
class Power(_U32Event):
    """The clock face's own power switch moved (sensed apart from the Pi's power)."""

    TYPE: ClassVar[int] = 0x12
    state: PowerState
    device_ms: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", PowerState(self.state))
        _check("device_ms", self.device_ms, 0xFFFFFFFF)

    def to_bytes(self) -> bytes:
        return struct.pack(self.FMT, int(self.state), self.device_ms)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        code, ms = _unpack(cls, cls.FMT, payload)
        return cls(_enum(cls, PowerState, code), ms)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Power(state=PowerState.{self.state.name}, device_ms={self.device_ms})"


@dataclass(frozen=True, slots=True)
class Battery(_U32Event):
    """The clock's battery went low (``low=True``) or recovered (``low=False``)."""

    TYPE: ClassVar[int] = 0x13
    low: bool
    device_ms: int

    def __post_init__(self) -> None:
        if not isinstance(self.low, bool):
            raise ValueError(f"low must be a bool, not {self.low!r}")
        _check("device_ms", self.device_ms, 0xFFFFFFFF)

    def to_bytes(self) -> bytes:
        return struct.pack(self.FMT, int(self.low), self.device_ms)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        code, ms = _unpack(cls, cls.FMT, payload)
        if code > 1:
            raise BadPayloadError(f"Battery: low must be 0 or 1, not {code}")
        return cls(bool(code), ms)


@dataclass(frozen=True, slots=True, repr=False)
class Show(Message):
    """Host -> device: both remaining times as of receipt, the running side, flags, a text.

    The device counts the running side down by itself from the moment it receives SHOW.
    """

    TYPE: ClassVar[int] = 0x20
    RELIABLE: ClassVar[bool] = True
    FROM_DEVICE: ClassVar[bool | None] = False
    red_ms: int
    black_ms: int
    running: Side | None = None
    flags: int = 0
    text: str = ""

    def __post_init__(self) -> None:
        _check("red_ms", self.red_ms, 0xFFFFFFFF)
        _check("black_ms", self.black_ms, 0xFFFFFFFF)
        if self.running not in _RUNNING_CODE:
            raise ValueError(f"running must be a Side or None, not {self.running!r}")
        _check("flags", self.flags, 0xFF)
        if len(self.text) > TEXT_MAX or not all(" " <= ch <= "~" for ch in self.text):
            raise ValueError(f"text must be at most 8 printable ASCII characters: {self.text!r}")

    def to_bytes(self) -> bytes:
        head = struct.pack(
            ">IIBBB", self.red_ms, self.black_ms, _RUNNING_CODE[self.running], self.flags,
            len(self.text),
        )  # fmt: skip
        return head + self.text.encode("ascii")

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        if len(payload) < 11:
            raise BadPayloadError(f"Show: payload is {len(payload)} bytes, at least 11 needed")
        red, black, running, flags, n = struct.unpack(">IIBBB", payload[:11])
        if len(payload) != 11 + n:
            raise BadPayloadError(f"Show: text length {n} but {len(payload) - 11} text bytes")
        if running not in _CODE_RUNNING:
            raise BadPayloadError(f"Show: running code {running} is not 0, 1 or 2")
        try:
            return cls(red, black, _CODE_RUNNING[running], flags, payload[11:].decode("ascii"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadPayloadError(f"Show: {exc}") from None

    def __repr__(self) -> str:
        running = f"Side.{self.running.name}" if self.running else "None"
        return (
            f"Show(red_ms={self.red_ms}, black_ms={self.black_ms}, running={running}, "
            f"flags={self.flags:#04x}, text={self.text!r})"
        )


@dataclass(frozen=True, slots=True)
class Beep(Message):
    TYPE: ClassVar[int] = 0x21
    RELIABLE: ClassVar[bool] = True
    FROM_DEVICE: ClassVar[bool | None] = False
    ms: int

    def __post_init__(self) -> None:
        _check("ms", self.ms, 0xFFFF)

    def to_bytes(self) -> bytes:
        return struct.pack(">H", self.ms)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        return cls(*_unpack(cls, ">H", payload))


@dataclass(frozen=True, slots=True)
class Brightness(Message):
    TYPE: ClassVar[int] = 0x22
    RELIABLE: ClassVar[bool] = True
    FROM_DEVICE: ClassVar[bool | None] = False
    level: int

    def __post_init__(self) -> None:
        _check("level", self.level, 15)

    def to_bytes(self) -> bytes:
        return struct.pack(">B", self.level)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        (level,) = _unpack(cls, ">B", payload)
        if level > 15:
            raise BadPayloadError(f"Brightness: level {level} is above 15")
        return cls(level)


@dataclass(frozen=True, slots=True)
class Ping(Message):
    """Host -> device keepalive. ``token`` comes back in PONG; flags bit 0 asks for a HELLO."""

    TYPE: ClassVar[int] = 0x30
    FROM_DEVICE: ClassVar[bool | None] = False
    WANT_HELLO: ClassVar[int] = 0x01
    token: int
    flags: int = 0

    def __post_init__(self) -> None:
        _check("token", self.token, 0xFFFFFFFF)
        _check("flags", self.flags, 0xFF)

    def to_bytes(self) -> bytes:
        return struct.pack(">IB", self.token, self.flags)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        return cls(*_unpack(cls, ">IB", payload))


@dataclass(frozen=True, slots=True)
class Pong(Message):
    """Device -> host: the PING's token and the device clock when it answered."""

    TYPE: ClassVar[int] = 0x31
    FROM_DEVICE: ClassVar[bool | None] = True
    token: int
    device_ms: int

    def __post_init__(self) -> None:
        _check("token", self.token, 0xFFFFFFFF)
        _check("device_ms", self.device_ms, 0xFFFFFFFF)

    def to_bytes(self) -> bytes:
        return struct.pack(">II", self.token, self.device_ms)

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        return cls(*_unpack(cls, ">II", payload))


@dataclass(frozen=True, slots=True)
class Ack(Message):
    """Either direction: the reliable frame ``seq`` arrived (sent for duplicates too)."""

    TYPE: ClassVar[int] = 0x40
    seq: int

    def __post_init__(self) -> None:
        _check("seq", self.seq, 255, 1)

    def to_bytes(self) -> bytes:
        return bytes([self.seq])

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        (seq,) = _unpack(cls, ">B", payload)
        if seq == 0:
            raise BadPayloadError("Ack: seq 0 is never acknowledged")
        return cls(seq)


@dataclass(frozen=True, slots=True, repr=False)
class Nak(Message):
    """Either direction: frame ``seq`` (0: an unreliable one) was refused; do not resend it."""

    TYPE: ClassVar[int] = 0x41
    seq: int
    reason: NakReason

    def __post_init__(self) -> None:
        _check("seq", self.seq, 255)
        object.__setattr__(self, "reason", NakReason(self.reason))

    def to_bytes(self) -> bytes:
        return bytes([self.seq, int(self.reason)])

    @classmethod
    def from_bytes(cls, payload: bytes) -> Self:
        seq, reason = _unpack(cls, ">BB", payload)
        return cls(seq, _enum(cls, NakReason, reason))  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Nak(seq={self.seq}, reason=NakReason.{self.reason.name})"


MESSAGE_TYPES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (Hello, HelloAck, Press, Key, Power, Battery, Show, Beep, Brightness, Ping, Pong,
                Ack, Nak)
}  # fmt: skip
