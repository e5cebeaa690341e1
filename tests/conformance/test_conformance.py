"""Every conformance case against a minislurm cluster, compared with what real Slurm did.

Without an oracle, the reference is the recording in ``expected/``; with
``CONFORMANCE_ORACLE=1`` it is the live oracle, and the summary says how many
cases matched each. A case whose result differs fails: the suite is the list
of what is left to make Slurm-compatible.
"""

from __future__ import annotations

import functools
import os

import pytest

from . import expected
from .cases import Case, load_all
from .conftest import TALLY
from .harness import ClusterStuck, Run, Runner, SetupFailed

CASES = load_all()

# The oracle ran every case as root (holds are an administrator's, nodes are drained):
# another user's view of the same commands differs from the recording.
pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="the cases were recorded as root")


@functools.cache
def _recorded(area: str) -> dict[str, expected.Recorded]:
    return expected.load(area)


def _recording(case: Case) -> expected.Recorded | None:
    """The oracle's recorded run of this very definition of the case, if any."""
    recorded = _recorded(case.area).get(case.name)
    return recorded if recorded is not None and recorded.digest == case.digest() else None


def _run(runner: Runner, case: Case) -> Run:
    """Run a case, failing the test (not erroring) when it cannot run."""
    try:
        return runner.run(case)
    except (SetupFailed, ClusterStuck) as exc:
        TALLY.failed[case.id] = f"{type(exc).__name__} on {runner.target.name}"
        pytest.fail(f"{runner.target.name}: {exc}", pytrace=False)


def _why(diff: str) -> str:
    """The first changed line of a report, for the summary."""
    changed = [
        line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    return (changed or diff.splitlines() or ["?"])[0][:100]


@pytest.mark.timeout(240)  # setup and run may take a case's timeout each, clean-up a minute
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Case, minislurm: Runner, oracle: Runner | None) -> None:
    TALLY.total += 1
    got = _run(minislurm, case)
    recorded = _recording(case)
    if recorded is None:
        report = "no recorded oracle result for this case: python -m tests.conformance.record"
    else:
        report = expected.differences(case, recorded.run, got, "slurm", "minislurm")
        if not report:
            TALLY.recorded.append(case.id)
    if oracle is not None:  # the live oracle is the reference
        TALLY.live_total += 1
        live = _run(oracle, case)
        report = expected.differences(case, live, got, "slurm (live)", "minislurm")
        if not report:
            TALLY.live.append(case.id)
        if recorded is not None and expected.differences(case, recorded.run, live, "", ""):
            TALLY.drifted.append(case.id)
    if report:
        TALLY.failed[case.id] = _why(report)
        pytest.fail(f"{case.id} differs from real Slurm\n{report}", pytrace=False)
