"""The Pi image recipe (deploy/pi-image/recipe.toml) that the pi-check builds its roots from:
the technician's guide lists the same packages, a bad recipe is named, and a root is named by
what goes into it (so it is rebuilt exactly when that changes)."""

from __future__ import annotations

import itertools
import os
import re
import shutil
from pathlib import Path

import pytest

from qizhong.deploy.piroot import (
    MACHINES,
    PiRoot,
    PiRootError,
    ensure_root,
    load_recipe,
    recipe_path,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def _docs_groups() -> dict[str, list[str]]:
    """``# ... ([packages] GROUP)`` followed by ``sudo apt install ...`` in docs/deploy.md."""
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    out: dict[str, list[str]] = {}
    for here, after in itertools.pairwise(lines):
        m = re.search(r"\(\[packages\] ([\w-]+)\)", here)
        if m:
            assert "apt install" in after, after
            out[m[1]] = after.split("apt install", 1)[1].split()
    return out


def test_the_guide_lists_exactly_the_recipes_packages() -> None:
    recipe = load_recipe()
    assert _docs_groups() == {g: list(p) for g, p in recipe.packages.items() if p}


def test_each_pi_root_gets_its_group_and_the_common_one() -> None:
    recipe = load_recipe()
    for machine in MACHINES:
        got = recipe.packages_for(machine)
        assert got[: len(recipe.packages["all"])] == recipe.packages["all"]
        assert "python3-venv" in got
    assert "python3-pil" in recipe.packages_for("armv7l")
    assert "python3-lgpio" not in recipe.packages_for("aarch64")  # not in Debian


def test_a_root_is_named_by_what_goes_into_it(tmp_path: Path) -> None:
    text = recipe_path().read_text(encoding="utf-8")
    base = load_recipe()
    (tmp_path / "comment.toml").write_text("# another comment\n" + text)
    assert load_recipe(tmp_path / "comment.toml").digest("aarch64") == base.digest("aarch64")
    more = text.replace('armv7l = ["python3-pil"', 'armv7l = ["python3-numpy", "python3-pil"')
    assert more != text
    (tmp_path / "armv7.toml").write_text(more)
    changed = load_recipe(tmp_path / "armv7.toml")
    assert changed.digest("armv7l") != base.digest("armv7l")
    assert changed.digest("aarch64") == base.digest("aarch64")  # the other root stays


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (('suite = "bookworm"', "suite = 12"), "suite"),
        (('all = ["python3",', "all = [3,"), "packages.all[]"),
        (('armv7l = { debian = "armhf", ', "armv7l = { "), "arch.armv7l.debian"),
        (("[packages]", "[packages"), "recipe.toml"),
    ],
)
def test_a_bad_recipe_is_named_with_its_key(tmp_path: Path, edit: tuple[str, str],
                                             where: str) -> None:  # fmt: skip
    text = recipe_path().read_text(encoding="utf-8")
    assert edit[0] in text
    bad = tmp_path / "recipe.toml"
    bad.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(PiRootError, match=re.escape(where)) as info:
        load_recipe(bad)
    assert str(bad) in str(info.value)


def test_a_finished_root_is_used_as_it_is(tmp_path: Path) -> None:
    recipe = load_recipe()
    done = tmp_path / f"aarch64-{recipe.digest('aarch64')[:12]}"
    done.mkdir()
    (done / ".complete").write_text(recipe.digest("aarch64"))
    root = ensure_root("aarch64", recipe=recipe, where=tmp_path)
    assert root.path == done and root.qemu == "qemu-aarch64-static"
    cmd = root.command(["/usr/bin/python3", "-V"], binds=[tmp_path])
    at = cmd.index("proot")
    assert cmd[at : at + 4] == ["proot", "-q", "qemu-aarch64-static", "-0"]
    assert cmd[-2:] == ["/usr/bin/python3", "-V"] and str(tmp_path) in cmd


def _binds(cmd: list[str]) -> list[str]:
    return [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "-b"]


def test_nothing_inside_a_root_can_touch_the_hosts_mounts_or_dev(tmp_path: Path) -> None:
    """debootstrap's second stage mounts and unmounts /dev/pts and mknods devices: through a
    bind of the host's /dev, as real root, it once unmounted this machine's /dev/pts."""
    root = PiRoot("aarch64", tmp_path, "qemu-aarch64-static")
    cmd = root.command(["true"])
    if os.geteuid() == 0 and shutil.which("unshare"):
        assert cmd[:4] == ["unshare", "--mount", "--propagation", "private"]
    assert "/dev" in _binds(cmd)
    second_stage = root.command(["/debootstrap/debootstrap", "--second-stage"], host_dev=False)
    assert "/dev" not in _binds(second_stage) and "/proc" in _binds(second_stage)


def test_an_unknown_machine_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PiRootError, match="unknown machine 'riscv64'"):
        ensure_root("riscv64", where=tmp_path)
    assert list(tmp_path.iterdir()) == []
