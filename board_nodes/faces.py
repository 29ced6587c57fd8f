"""Build a board's ClockFace from its ``[[board]]`` table."""

from __future__ import annotations

from board_nodes.config import BoardConfig
from firmware_bridge.face import ClockFace
from firmware_bridge.simulated import SimulatedFace

__all__ = ["make_face"]


def make_face(config: BoardConfig, *, pin_factory: object | None = None) -> ClockFace:
    if config.face == "simulated":
        sim = config.simulated
        return SimulatedFace(
            mode=sim.mode,
            mean_move_s=sim.mean_move_s,
            sigma=sim.sigma,
            pause_probability=sim.pause_probability,
            pause_s=sim.pause_s,
            speed=sim.speed,
            seed=sim.seed,
            power_off_after_s=sim.power_off_after_s,
            power_off_for_s=sim.power_off_for_s,
            name=f"board-{config.id}",
        )
    if config.face == "serial":
        from firmware_bridge.serial.face import SerialClockFace

        assert config.url is not None
        return SerialClockFace(config.url)
    from firmware_bridge.gpio_config import GpioFaceConfig
    from firmware_bridge.gpio_face import GpioClockFace

    face: ClockFace = GpioClockFace(
        GpioFaceConfig.model_validate(config.gpio), pin_factory=pin_factory
    )
    return face
