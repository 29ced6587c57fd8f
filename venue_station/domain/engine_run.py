"""Pair the next round with the configured engine (``[pairing]`` in station.toml), for review.

``propose``: the round after the last one (which must be complete: an engine refuses a paired
game without a result) is exported as TRF and handed to the engine in a temporary folder of its
own; its pairs list is kept (``meta`` key ``trf.proposal``) with the export's digest. ``approve``
imports those pairs through ``trf_io.import_pairs`` (the guarded import) if the results have not
changed since; ``discard`` forgets them.

The engine is a subprocess: its own session (killed as a group on the time limit), no inherited
descriptors (``close_fds``), stdin closed, an environment of PATH/LANG/HOME only (no secrets of
the station's), stdout, stderr and the output file bounded to ``max_output_bytes``. It is not cut
off from the network (no namespace without privileges); bbpPairings and JaVaFo use none.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clock_service.trf.pairs import pairs_text, parse_pairs
from venue_station.domain.standings import game_records
from venue_station.domain.trf_export import export_trf
from venue_station.domain.trf_io import import_pairs
from venue_station.domain.trf_state import load_state, tournament_rounds
from venue_station.errors import StationError

if TYPE_CHECKING:
    from venue_station.config import PairingConfig
    from venue_station.domain.station import Station

__all__ = ["PairingEngineError", "approve", "discard", "proposal", "propose", "run_engine"]

PROPOSAL_KEY = "trf.proposal"
_ENV_PATH = "/usr/local/bin:/usr/bin:/bin"


class PairingEngineError(StationError, ValueError):
    """The engine cannot be run or gave no usable answer; ``status`` the HTTP status to use
    (409: the station's state does not allow it, 502: the engine failed)."""

    def __init__(self, reason: str, *, status: int = 409, code: str = "engine_failed") -> None:
        super().__init__(reason)
        self.status = status
        self.code = code  # what the page says, in the reader's language


def _argv(cfg: PairingConfig) -> list[str]:
    assert cfg.path is not None
    program = str(cfg.path)
    if cfg.engine == "bbpPairings":
        return [program, "--dutch", "input.trf", "-p", "output.txt"]
    if program.endswith(".jar"):
        return ["java", "-jar", program, "input.trf", "-p", "output.txt"]
    return [program, "input.trf", "-p", "output.txt"]


async def _drain(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    buf = bytearray()
    while stream is not None and (chunk := await stream.read(65536)):
        buf += chunk
        if len(buf) > limit:
            raise PairingEngineError(f"the engine wrote more than {limit} bytes", status=502)
    return bytes(buf)


async def run_engine(cfg: PairingConfig, trf_text: str) -> str:
    """The engine's pairs list for this TRF. Raises ``PairingEngineError``."""
    if cfg.engine is None or cfg.path is None:
        raise PairingEngineError(
            "no pairing engine is configured ([pairing] in station.toml)", code="no_engine"
        )
    with tempfile.TemporaryDirectory(prefix="qz-pairing-") as tmp:
        folder = Path(tmp)
        (folder / "input.trf").write_bytes(trf_text.encode("utf-8"))
        env = {"PATH": _ENV_PATH, "LANG": "C.UTF-8", "HOME": tmp, "TMPDIR": tmp}
        try:
            proc = await asyncio.create_subprocess_exec(
                *_argv(cfg),
                cwd=tmp,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            raise PairingEngineError(f"cannot start {cfg.path}: {exc}", status=502) from None
        try:
            _out, err = await _bounded(proc, cfg)
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        if proc.returncode != 0:
            text = err.decode("utf-8", "replace").strip()[-800:]
            raise PairingEngineError(
                f"{cfg.engine} exited with {proc.returncode}: {text or '(nothing on stderr)'}",
                status=502,
            )
        output = folder / "output.txt"
        if not output.is_file():
            raise PairingEngineError(f"{cfg.engine} wrote no output.txt", status=502)
        if output.stat().st_size > cfg.max_output_bytes:
            raise PairingEngineError(
                f"{cfg.engine}'s output is larger than {cfg.max_output_bytes} bytes", status=502
            )
        return output.read_bytes().decode("utf-8", "replace")


async def _bounded(proc: asyncio.subprocess.Process, cfg: PairingConfig) -> tuple[bytes, bytes]:
    async def both() -> tuple[bytes, bytes]:
        out, err, _ = await asyncio.gather(
            _drain(proc.stdout, cfg.max_output_bytes),
            _drain(proc.stderr, cfg.max_output_bytes),
            proc.wait(),
        )
        return out, err

    try:
        async with asyncio.timeout(cfg.timeout_s):
            return await both()
    except TimeoutError:
        raise PairingEngineError(
            f"{cfg.engine} did not answer within {cfg.timeout_s:g} s", status=502
        ) from None


async def _round_to_pair(station: Station) -> int:
    store = station.require_store()
    records = await game_records(store, station.regulation)
    last = max((g.round for g in records), default=0)
    open_games = [g for g in records if g.round == last and g.result is None]
    if open_games:
        raise PairingEngineError(
            f"round {last}: {len(open_games)} games have no result yet; the engine pairs the "
            "round after a complete one",
            code="round_open",
        )
    rounds = tournament_rounds(await load_state(store), station.regulation.tournament.rounds)
    if last >= rounds:
        raise PairingEngineError(f"all {rounds} rounds are paired", code="all_paired")
    return last + 1


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def propose(station: Station) -> dict[str, Any]:
    """Run the engine for the next round; keep and return its proposal."""
    cfg = station.config.pairing
    if cfg.engine is None:
        raise PairingEngineError(
            "no pairing engine is configured ([pairing] in station.toml)", code="no_engine"
        )
    round_no = await _round_to_pair(station)
    text = await export_trf(station, after_round=round_no - 1)
    answer = await run_engine(cfg, text)
    try:
        pairs = parse_pairs(answer)
    except ValueError as exc:
        raise PairingEngineError(f"{cfg.engine}'s pairs list: {exc}", status=502) from None
    kept = {"round": round_no, "engine": cfg.engine, "pairs": pairs, "export": _digest(text)}
    store = station.require_store()
    await store.set_meta(PROPOSAL_KEY, json.dumps(kept))
    return await _view(station, kept)


async def _view(station: Station, kept: dict[str, Any]) -> dict[str, Any]:
    store = station.require_store()
    key_of = (await load_state(store)).key_of()
    after = int(kept["round"]) - 1
    points: dict[str, str] = {}
    if after:
        points = {r.player: str(r.points) for r in await station.standings(after_round=after)}
    boards = []
    for board, (white, black) in enumerate(kept["pairs"], 1):
        red, blk = key_of.get(white, f"#{white}"), key_of.get(black, "") if black else ""
        boards.append(
            {
                "board": board,
                "white": white,
                "black": black,
                "red_player": red,
                "black_player": blk,
                "red_points": points.get(red, "0"),
                "black_points": points.get(blk, "0") if black else None,
            }
        )
    return {"round": kept["round"], "engine": kept["engine"], "boards": boards}


async def _kept(station: Station) -> dict[str, Any] | None:
    text = await station.require_store().get_meta(PROPOSAL_KEY)
    return json.loads(text) if text else None


async def proposal(station: Station) -> dict[str, Any] | None:
    kept = await _kept(station)
    return None if kept is None else await _view(station, kept)


async def approve(
    station: Station, *, send: bool = True, user: str | None = None
) -> dict[str, Any]:
    """Import the kept proposal as its round, unless the results changed since."""
    kept = await _kept(station)
    if kept is None:
        raise PairingEngineError("no proposal to approve: run the engine first", code="no_proposal")
    round_no = int(kept["round"])
    if await _round_to_pair(station) != round_no:
        raise PairingEngineError(
            f"round {round_no} is no longer the next round; run it again", code="stale"
        )
    text = await export_trf(station, after_round=round_no - 1)
    if _digest(text) != kept["export"]:
        raise PairingEngineError(
            "the tournament (results, byes, players) changed since the engine ran; run it again",
            code="stale",
        )
    pairs = [(int(w), int(b)) for w, b in kept["pairs"]]
    out = await import_pairs(station, pairs_text(pairs), round_no=round_no, send=send, user=user)
    await discard(station)
    return out


async def discard(station: Station) -> None:
    await station.require_store().set_meta(PROPOSAL_KEY, "")
