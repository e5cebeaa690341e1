"""The house rules of the layout (README "Architecture"), checked on the source.

- the core (``minislurm/`` outside its sub-packages) imports no transport,
  security or tooling module, and nothing of ``ctld``, ``nodeagent`` or ``cli``;
- ``ctld/`` below the servicers (and the dispatcher that calls the agents)
  imports no generated ``*_pb2`` module;
- ``ctld/store/`` imports nothing from ``ctld``;
- no hand-written module over 800 lines, no class of 30 or more methods;
- a job's state is written by ``ctld/jobs.py``'s ``apply_event`` alone (nodes
  and steps have their writers in ``ctld/nodes.py`` and ``ctld/steps.py``).

Each rule lists the places that do not keep it yet (``STILL_*``). The lists
only shrink: a rule fails for a new offender, and for a listed place that
keeps the rule now, so that its entry is removed with the fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("minislurm", "ctld", "nodeagent", "cli")
GENERATED = ROOT / "minislurm" / "wire" / "rpc"
CORE_SUBPACKAGES = ("minislurm.wire", "minislurm.security", "minislurm.local", "minislurm.site")
MAX_LINES = 800
MAX_METHODS = 30

# The edges of the controller where protobuf meets the model.
PB_EDGES = {"ctld/servicer.py", "ctld/dispatch.py"}
STILL_PB: set[str] = set()
STILL_STORE_IMPORTS_CTLD: set[str] = set()
STILL_LONG: set[str] = set()
STILL_BIG_CLASSES: set[str] = set()
JOB_STATE_WRITER = "ctld/jobs.py:apply_event"
OTHER_STATE_WRITERS = {"ctld/nodes.py", "ctld/steps.py"}
# An earlier run's batch step shown CANCELLED by sacct: a record built for display.
STILL_JOB_STATE_WRITERS = {"ctld/accounting/runs.py:run_records"}


def modules() -> Iterator[Path]:
    """Every hand-written Python module of the four packages."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if GENERATED not in path.parents:
                yield path


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def imported(path: Path) -> set[str]:
    """The modules ``path`` imports, anywhere in it (functions included), as dotted names."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def is_core(path: Path) -> bool:
    dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return under(dotted, "minislurm") and not under(dotted, *CORE_SUBPACKAGES)


def offenders(rule: dict[str, bool]) -> set[str]:
    return {where for where, breaks in rule.items() if breaks}


def check_ratchet(found: set[str], still: set[str], what: str) -> None:
    new = found - still
    fixed = still - found
    assert not new, f"{what}: {sorted(new)}"
    assert not fixed, f"these keep the rule now; remove them from the list: {sorted(fixed)}"


def test_the_core_imports_no_transport_security_tooling_or_daemon() -> None:
    bad = {
        f"{rel(path)} imports {name}"
        for path in modules()
        if is_core(path)
        for name in imported(path)
        if under(name, *CORE_SUBPACKAGES, "ctld", "nodeagent", "cli")
    }
    assert not bad, sorted(bad)


def test_ctld_below_the_servicers_imports_no_protobuf() -> None:
    found = offenders(
        {
            rel(path): any(name.endswith("_pb2") for name in imported(path))
            for path in (ROOT / "ctld").rglob("*.py")
            if rel(path) not in PB_EDGES
        }
    )
    check_ratchet(found, STILL_PB, "ctld modules below the servicers import protobuf")


def test_the_store_imports_nothing_from_ctld() -> None:
    found = offenders(
        {
            rel(path): any(
                under(name, "ctld") and not under(name, "ctld.store") for name in imported(path)
            )
            for path in (ROOT / "ctld" / "store").rglob("*.py")
        }
    )
    check_ratchet(found, STILL_STORE_IMPORTS_CTLD, "ctld/store modules import ctld")


def test_no_module_is_over_800_lines() -> None:
    found = {rel(p) for p in modules() if len(p.read_text().splitlines()) > MAX_LINES}
    check_ratchet(found, STILL_LONG, f"modules over {MAX_LINES} lines")


def test_no_class_has_30_methods_or_more() -> None:
    found = set()
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                methods = [
                    n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                if len(methods) >= MAX_METHODS:
                    found.add(f"{rel(path)}:{node.name}")
    check_ratchet(found, STILL_BIG_CLASSES, f"classes of {MAX_METHODS} methods or more")


def test_the_rules_see_the_modules_they_judge() -> None:
    """A rule over no files passes by itself: the walk must find the packages' modules."""
    names = {rel(p) for p in modules()}
    assert {"minislurm/model.py", "ctld/servicer.py", "ctld/store/repo.py"} <= names
    assert not any(name.startswith("minislurm/wire/rpc/") for name in names)
    assert "minislurm.wire.rpc.minislurm_pb2" in imported(ROOT / "ctld" / "servicer.py")


def state_writers(path: Path) -> set[str]:
    """``path:function`` of each ``replace(..., state=...)`` in ``path``."""
    found = set()
    for func in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "replace"
                and any(keyword.arg == "state" for keyword in node.keywords)
            ):
                found.add(f"{rel(path)}:{func.name}")
    return found


def test_a_jobs_state_is_written_by_apply_event_alone() -> None:
    writers = set().union(*(state_writers(p) for p in modules()))
    assert JOB_STATE_WRITER in writers  # the rule sees the writer it allows
    found = {w for w in writers - {JOB_STATE_WRITER} if w.split(":")[0] not in OTHER_STATE_WRITERS}
    check_ratchet(found, STILL_JOB_STATE_WRITERS, "functions that write a job's state")
