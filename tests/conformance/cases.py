"""The conformance cases: one TOML file per area under ``cases/``, loaded into :class:`Case`.

A case is shell text run the same way on both systems: ``setup`` (its output is
not compared; it must succeed) and ``run`` (the command under test; its exit
status is the status of the text's last command). ``compare`` names what must
match, and ``fields``/``grep``/``sort``/``subst`` narrow or normalise it for
this case alone (README.md). Imports only the standard library.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

CASES_DIR = Path(__file__).parent / "cases"
STREAMS = ("rc", "out", "err")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
KEYS = {"name", "run", "setup", "compare", "fields", "grep", "sort", "subst", "timeout", "note"}


@dataclass(frozen=True)
class Case:
    """One command (or short shell text) under test and what of its result to compare."""

    area: str
    name: str
    run: str
    setup: str = ""
    compare: tuple[str, ...] = STREAMS
    fields: tuple[str, ...] = ()
    grep: str = ""
    sort: bool = False
    subst: tuple[tuple[str, str], ...] = ()
    timeout: float = 40.0
    note: str = ""

    @property
    def id(self) -> str:
        """``area/name``, the case's name in reports."""
        return f"{self.area}/{self.name}"

    def digest(self) -> str:
        """A hash of what a run does (setup and run): recordings of another digest are stale.

        What a case compares, and how, applies to the recorded output as it was printed, so
        it may change without a new recording.

        Returns:
            12 hex digits.
        """
        text = json.dumps([self.setup, self.run])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


class CaseError(ValueError):
    """A case file that does not describe cases as README.md says."""


def _tuple_of_str(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CaseError(f"{what} must be a list of strings")
    return tuple(value)


def _substitutions(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise CaseError(f"{what} must be a list of [regex, replacement] pairs")
    pairs = []
    for pair in value:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise CaseError(f"{what}: {pair!r} is not a [regex, replacement] pair")
        re.compile(pair[0])
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _case(area: str, raw: dict[str, object]) -> Case:
    """One ``[[case]]`` table as a Case, every key checked."""
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise CaseError(f"{area}: case name {name!r} must be lower_snake_case")
    where = f"{area}/{name}"
    unknown = set(raw) - KEYS
    if unknown:
        raise CaseError(f"{where}: unknown key(s) {sorted(unknown)}")
    run, setup, note = raw.get("run"), raw.get("setup", ""), raw.get("note", "")
    if not isinstance(run, str) or not run.strip():
        raise CaseError(f"{where}: run must be non-empty shell text")
    if not isinstance(setup, str) or not isinstance(note, str):
        raise CaseError(f"{where}: setup and note must be strings")
    compare = _tuple_of_str(raw.get("compare", list(STREAMS)), f"{where}: compare")
    if not compare or set(compare) - set(STREAMS):
        raise CaseError(f"{where}: compare must name some of {STREAMS}")
    grep = raw.get("grep", "")
    if not isinstance(grep, str):
        raise CaseError(f"{where}: grep must be a regex")
    re.compile(grep)
    sort, timeout = raw.get("sort", False), raw.get("timeout", 40.0)
    if not isinstance(sort, bool) or not isinstance(timeout, int | float):
        raise CaseError(f"{where}: sort is true/false, timeout a number of seconds")
    return Case(
        area=area,
        name=name,
        run=run,
        setup=setup,
        compare=compare,
        fields=_tuple_of_str(raw.get("fields", []), f"{where}: fields"),
        grep=grep,
        sort=sort,
        subst=_substitutions(raw.get("subst", []), f"{where}: subst"),
        timeout=float(timeout),
        note=note,
    )


def load_area(path: Path) -> list[Case]:
    """The cases of one area file.

    Args:
        path: ``cases/<area>.toml``.

    Returns:
        Its cases, in file order.

    Raises:
        CaseError: the file is malformed or names a case twice.
    """
    area = path.stem
    with open(path, "rb") as f:
        data = tomllib.load(f)
    if set(data) != {"case"} or not isinstance(data["case"], list):
        raise CaseError(f"{path.name}: only [[case]] tables are allowed")
    cases = [_case(area, raw) for raw in data["case"]]
    names = [case.name for case in cases]
    twice = {name for name in names if names.count(name) > 1}
    if twice:
        raise CaseError(f"{path.name}: case(s) named twice: {sorted(twice)}")
    return cases


def load_all(areas: list[str] | None = None) -> list[Case]:
    """Every case, area by area (alphabetical), or only those of ``areas``.

    Args:
        areas: area names (file stems); None: all.

    Returns:
        The cases.

    Raises:
        CaseError: a file is malformed, or an area does not exist.
    """
    paths = sorted(CASES_DIR.glob("*.toml"))
    if areas is not None:
        missing = set(areas) - {p.stem for p in paths}
        if missing:
            raise CaseError(f"no such area(s): {sorted(missing)}")
        paths = [p for p in paths if p.stem in areas]
    return [case for path in paths for case in load_area(path)]
