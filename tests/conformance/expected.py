"""The oracle's recorded results (``expected/<area>.json``) and how a run is compared with them.

Real Slurm's output is kept as it was printed (but for the recording
machine's paths, already placeholders), with the context needed to normalise
it (its jobs' ids, host, user…), so a change of normalisation needs no new
recording. Imports the suite's own
modules only.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, replace
from pathlib import Path

from .cases import Case
from .harness import Run
from .normalise import Context, normalise

EXPECTED_DIR = Path(__file__).parent / "expected"


@dataclass(frozen=True)
class Recorded:
    """What the oracle did for one case, and which definition of the case it ran."""

    digest: str
    run: Run

    def to_json(self) -> dict[str, object]:
        """The entry of ``expected/<area>.json``."""
        run = self.run
        return {
            "digest": self.digest,
            "rc": run.rc,
            "out": run.out.split("\n"),  # lines, so the file reads as the output did
            "err": run.err.split("\n"),
            "context": run.ctx.to_json(),
        }

    @classmethod
    def of(cls, case: Case, run: Run) -> Recorded:
        """A run to record, with the recording machine's paths already their placeholders."""
        ctx = run.ctx

        def scrub(text: str) -> str:
            return text.replace(ctx.workdir, "<WORKDIR>").replace(ctx.conf, "<SLURM_CONF>")

        scrubbed = replace(ctx, workdir="<WORKDIR>", conf="<SLURM_CONF>")
        return cls(case.digest(), Run(run.rc, scrub(run.out), scrub(run.err), scrubbed))

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Recorded:
        """An entry of ``expected/<area>.json``."""
        ctx = Context.from_json(data["context"])  # type: ignore[arg-type]
        out, err = ("\n".join(data[name]) for name in ("out", "err"))  # type: ignore[call-overload]
        run = Run(int(data["rc"]), out, err, ctx)  # type: ignore[call-overload]
        return cls(str(data["digest"]), run)


def load(area: str) -> dict[str, Recorded]:
    """The recorded results of an area (none when it was never recorded).

    Args:
        area: the area's name.

    Returns:
        Case name to recorded result.
    """
    path = EXPECTED_DIR / f"{area}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {name: Recorded.from_json(entry) for name, entry in data["cases"].items()}


def save(area: str, version: str, results: dict[str, Recorded]) -> Path:
    """Write an area's recorded results (cases in name order, so diffs stay small).

    Args:
        area: the area's name.
        version: the oracle's ``sbatch --version``.
        results: case name to recorded result.

    Returns:
        The file written.
    """
    EXPECTED_DIR.mkdir(exist_ok=True)
    path = EXPECTED_DIR / f"{area}.json"
    cases = {name: results[name].to_json() for name in sorted(results)}
    path.write_text(json.dumps({"recorded_with": version, "cases": cases}, indent=1) + "\n")
    return path


def compared(case: Case, run: Run) -> dict[str, object]:
    """What the case compares of a run, normalised.

    Args:
        case: the case.
        run: one run of it.

    Returns:
        ``rc``, ``out`` and/or ``err`` as the case's ``compare`` names them.
    """
    out, err = normalise(case, run.ctx, run.out, run.err)
    streams: dict[str, object] = {"rc": run.rc, "out": out, "err": err}
    return {name: streams[name] for name in case.compare}


def differences(case: Case, want: Run, got: Run, want_name: str, got_name: str) -> str:
    """The differences between two runs of a case, as a readable report ("" when none).

    Args:
        case: the case.
        want: the reference run (real Slurm).
        got: the run under test.
        want_name: what to call the reference in the report.
        got_name: what to call the run under test.

    Returns:
        A unified diff per differing stream, or "".
    """
    expected, actual = compared(case, want), compared(case, got)
    report = []
    for name in case.compare:
        if expected[name] == actual[name]:
            continue
        if name == "rc":
            report.append(f"exit code: {want_name} {expected['rc']}, {got_name} {actual['rc']}")
            continue
        diff = difflib.unified_diff(
            str(expected[name]).splitlines(),
            str(actual[name]).splitlines(),
            f"{want_name} {name}",
            f"{got_name} {name}",
            lineterm="",
        )
        lines = list(diff)
        if not lines:  # they differ in a final newline only
            lines = [
                f"{want_name} {name}: {expected[name]!r}",
                f"{got_name} {name}: {actual[name]!r}",
            ]
        report.append("\n".join(lines))
    return "\n".join(report)
