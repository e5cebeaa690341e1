"""What each install brings: a lean runtime, ``make demo`` installing it alone, ``dev`` all else.

Reads pyproject.toml, and asks make which commands its targets would run
(``make -n``: nothing is run or installed).
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
# What a demo never runs; installing it would cost minutes and gigabytes.
NOT_RUNTIME = {"torch", "numpy", "pytest", "hypothesis", "mypy", "ruff", "matplotlib", "parsl"}
# `pip install [-e] .` or `'.[a,b]'`: the package, and which of its extras.
PIP_INSTALL = re.compile(r"pip install .*?(?:-e )?'?\.(?:\[([^\]]*)\])?'?(?:\s|$)")


def requirement_name(requirement: str) -> str:
    """The project a requirement names, normalised (``Foo_Bar>=1; marker`` -> ``foo-bar``)."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def installed_extras(target: str) -> set[str]:
    """The extras of minislurm that ``make <target>`` installs, from scratch.

    Raises:
        AssertionError: the target installs minislurm nowhere.
    """
    # A make above this one (make test) must not pass its flags or job server down.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    installs = [m for line in dry_run.stdout.splitlines() if (m := PIP_INSTALL.search(line))]
    assert installs, f"make {target} installs no minislurm:\n{dry_run.stdout}"
    return {extra.strip() for m in installs for extra in (m.group(1) or "").split(",") if extra}


def test_runtime_dependencies_hold_no_test_lint_or_training_library() -> None:
    runtime = {requirement_name(r) for r in PROJECT["dependencies"]}
    optional = {requirement_name(r) for name, reqs in EXTRAS.items() if name != "dev" for r in reqs}
    assert runtime.isdisjoint(NOT_RUNTIME)
    assert runtime.isdisjoint(optional), "a runtime dependency is also listed as optional"


def test_dev_extra_is_every_other_extra() -> None:
    (aggregate,) = EXTRAS["dev"]
    name, _, extras = aggregate.partition("[")
    assert name == PROJECT["name"]
    assert set(extras.rstrip("]").split(",")) == set(EXTRAS) - {"dev"}


@pytest.mark.parametrize("target", ["demo", "demo-down"])
def test_make_demo_installs_the_package_and_its_runtime_only(target: str) -> None:
    assert installed_extras(target) == set()


@pytest.mark.parametrize("target", ["test", "venv", "lint"])
def test_make_test_installs_everything_the_suite_needs(target: str) -> None:
    assert installed_extras(target) == {"dev"}


def test_make_demo_ddp_adds_the_training_examples_extra_only() -> None:
    assert installed_extras("demo-ddp") == {"ddp"}
    assert {requirement_name(r) for r in EXTRAS["ddp"]} >= {"torch"}
