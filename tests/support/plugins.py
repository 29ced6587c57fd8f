"""Fixture modules shared by every test area, registered from ``tests/conftest.py``."""

pytest_plugins: list[str] = [
    "support.parts",  # first: the others import it
    "support.broker",
    "support.gpio",
    "support.station",
    "support.web",
    "support.chaos",
    "support.netns",
    "support.nats",
    "support.tournament",
]
