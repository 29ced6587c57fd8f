"""Bundled regulation profiles (``*.toml``), loaded with ``Regulation.load(name)``."""
