"""Where the station's own files are: the pages (``static/``) and the database migrations.

Found through ``importlib.resources``, so they resolve inside the installed package wherever pip
put it, never through a path built from ``__file__`` (which only holds in a source tree and
hid issue 19: the wheel shipped without ``static/``). Starlette's ``StaticFiles`` and alembic
need real folders, so a package that is not unpacked on disk (a zip import) is refused with a
clear error instead of failing later on a missing directory.
"""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path

from venue_station.errors import StationError

__all__ = ["PAGES", "ResourceError", "migrations_dir", "static_dir"]

# The pages the routes serve as files; the station refuses to start without them.
PAGES = ("display.html", "board.html", "arbiter.html", "standings.html")
_MIGRATION_FILES = ("env.py", "script.py.mako", "versions")


class ResourceError(StationError):
    """A file the station ships with is not installed; reinstall qizhong from its wheel."""


def _folder(package: str, name: str | None, needs: tuple[str, ...]) -> Path:
    found = importlib.resources.files(package)
    if name is not None:
        found = found / name
    where = f"{package.replace('.', '/')}/{name or ''}".rstrip("/")
    if not isinstance(found, Path) or not found.is_dir():
        raise ResourceError(
            f"{where}: not a folder on disk ({found}); install qizhong from its wheel with pip"
        )
    missing = [n for n in needs if not (found / n).exists()]
    if missing:
        raise ResourceError(
            f"{where} ({found}) lacks {', '.join(missing)}: the installed qizhong is incomplete; "
            "reinstall it from its wheel"
        )
    return found


@functools.cache
def static_dir() -> Path:
    """``venue_station/web/static`` as installed: the pages, scripts, styles and icon."""
    return _folder("venue_station.web", "static", PAGES)


@functools.cache
def migrations_dir() -> Path:
    """``venue_station/store/migrations`` as installed: alembic's ``script_location``."""
    return _folder("venue_station.store.migrations", None, _MIGRATION_FILES)
