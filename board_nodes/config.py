"""``node.toml``: the node's configuration, validated with pydantic.

A bad file fails at start with the file, the key and the reason, e.g.::

    node.toml: board[1].face: Input should be 'gpio', 'serial' or 'simulated'
"""

from __future__ import annotations

import errno
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from board_nodes.errors import BoardNodeError
from clock_service import Regulation, RegulationError
from wire_contract.broker import BrokerSettings
from wire_contract.messages import ID_PATTERN

__all__ = ["BoardConfig", "BrokerConfig", "NodeConfig", "NodeConfigError", "SimulatedConfig"]

Id = Annotated[str, Field(pattern=ID_PATTERN)]


class NodeConfigError(BoardNodeError, ValueError):
    """A configuration file that cannot be used; the message names file, key and reason."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BrokerConfig(BrokerSettings):
    """The node's broker: the contract's settings and how the node keeps its link."""

    # A cut-off board is shown lost within 1.5 × keepalive_s (link.broker_keepalive).
    keepalive_s: Annotated[int, Field(ge=6, le=600)] = 10
    reconnect_min_s: Annotated[float, Field(gt=0, le=60)] = 0.2
    # A board is back within about connect_timeout_s + reconnect_max_s of its link (docs/node.md).
    reconnect_max_s: Annotated[float, Field(gt=0, le=600)] = 2.0
    connect_timeout_s: Annotated[float, Field(gt=0, le=60)] = 2.0


class SimulatedConfig(_Strict):
    mode: Literal["random", "idle"] = "random"
    mean_move_s: Annotated[float, Field(gt=0)] = 20.0
    sigma: Annotated[float, Field(ge=0, le=3)] = 0.9
    pause_probability: Annotated[float, Field(ge=0, le=1)] = 0.0
    pause_s: Annotated[float, Field(gt=0)] = 10.0
    speed: Annotated[float, Field(gt=0)] = 1.0
    seed: int | None = None
    power_off_after_s: Annotated[float, Field(gt=0)] | None = None  # a scripted fault (demo)
    power_off_for_s: Annotated[float, Field(gt=0)] = 30.0


class BoardConfig(_Strict):
    id: Id
    face: Literal["gpio", "serial", "simulated"]
    url: str | None = None  # serial: /dev/ttyUSB0, socket://host:port or a pty path
    gpio: dict[str, Any] | None = None  # GpioFaceConfig, validated by firmware_bridge
    simulated: SimulatedConfig = Field(default_factory=SimulatedConfig)

    @model_validator(mode="after")
    def _face_needs(self) -> BoardConfig:
        if self.face == "serial" and not self.url:
            raise ValueError("a serial face needs url (a device path, socket://host:port or a pty)")
        if self.face == "gpio" and not self.gpio:
            raise ValueError("a gpio face needs a [board.gpio] table of pins")
        return self


class NodeConfig(_Strict):
    venue: Id
    node: Id
    regulation: str = "meishan-2016"
    data_dir: Path
    broker: BrokerConfig = Field(default_factory=BrokerConfig)
    board: Annotated[list[BoardConfig], Field(min_length=1)]
    checkpoint_s: Annotated[float, Field(gt=0, le=1.0)] = 0.5
    outbox_capacity: Annotated[int, Field(ge=100)] = 100_000
    outbox_alarm_ratio: Annotated[float, Field(gt=0, lt=1)] = 0.8
    # Sent events kept for a rebirth: the whole event's journal of every board of the node,
    # so a fresh station can be rebuilt from seq 1 (docs/operations.md, "Sizing the journal"):
    # a 9-round day, 4 boards, a long game ~450 events: 16,200; 60,000 is 8 boards and room.
    replay_keep: Annotated[int, Field(ge=100)] = 60_000
    # Only for load simulations: skip the fsync per event (a power cut may lose the last ones).
    journal_durable: bool = True

    @model_validator(mode="after")
    def _unique_boards(self) -> NodeConfig:
        seen: set[str] = set()
        for board in self.board:
            if board.id in seen:
                raise ValueError(f"board {board.id!r} is configured twice")
            seen.add(board.id)
        return self

    @classmethod
    def load(cls, path: str | Path) -> NodeConfig:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise NodeConfigError(f"{path}: cannot read: {exc.strerror}") from None
        except UnicodeDecodeError as exc:  # a Windows editor's GBK, say: save it as UTF-8
            raise NodeConfigError(
                f"{path}: not UTF-8 text (byte {exc.start}): save the file as UTF-8"
            ) from None
        return cls.from_toml(text, source=str(path), base=path.parent)

    @classmethod
    def from_toml(
        cls, text: str, *, source: str = "<node.toml>", base: Path | None = None
    ) -> NodeConfig:
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise NodeConfigError(f"{source}: not valid TOML: {exc}") from None
        try:
            config = cls.model_validate(raw)
        except ValidationError as exc:
            raise NodeConfigError(f"{source}: {describe(exc)}") from None
        if base is not None:
            # Relative paths are the file's: systemd starts the node in /, a technician
            # anywhere; both mean the folder node.toml is in.
            if not config.data_dir.is_absolute():
                config.data_dir = base / config.data_dir
            config.broker = config.broker.resolved_against(base)
        return config

    def preflight(self, *, source: str = "node.toml") -> None:
        """What start would need from the disk, tried now: the broker's password and TLS files
        readable, the data folder there or creatable and writable. A ``NodeConfigError`` naming the
        key and the path otherwise (``qizhong node --check`` runs it); and the regulation's
        profile, which the node loads first thing at start."""
        try:
            Regulation.load(self.regulation)
        except RegulationError as exc:
            raise NodeConfigError(f"{source}: regulation: {exc}") from None
        try:
            self.broker.read_password()
        except OSError as exc:
            raise NodeConfigError(
                f"{source}: broker.password_file: cannot read {self.broker.password_file}: "
                f"{exc.strerror}"
            ) from None
        for key in ("ca_file", "cert_file", "key_file"):
            path = getattr(self.broker, key)
            if path is not None and not path.is_file():
                raise NodeConfigError(f"{source}: broker.{key}: no such file {path}")
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".qz-write-probe"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                return  # a full card: the node starts anyway and keeps its clocks (journal.py)
            raise NodeConfigError(
                f"{source}: data_dir: cannot write {self.data_dir}: {exc.strerror}"
            ) from None


def describe(exc: ValidationError, *, most: int = 3) -> str:
    """A validation's errors as ``key.path: reason`` (list indexes as ``[i]``), the first
    ``most`` of them: a key misspelt is both an unknown key and a missing one."""
    said = []
    for err in exc.errors()[:most]:
        where = ""
        for part in err["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        reason = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            reason = "unknown key"
        elif err["type"] == "missing":
            reason = "missing value"
        said.append(f"{where or 'file'}: {reason}")
    more = len(exc.errors()) - len(said)
    return "; ".join(said) + (f" (and {more} more)" if more > 0 else "")
