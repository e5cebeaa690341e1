"""Record what real Slurm does for every case: ``python -m tests.conformance.record``.

Runs the cases against a running Slurm cluster shaped like the reference one
(``../shared/reference/real-slurm/up.sh``: nodes n1, n2 with 8 CPUs and 8 GPUs,
partitions gpu and debug) through its commands, and writes
``expected/<area>.json``. ``--check`` writes nothing and reports the cases
whose live result differs from the recorded one (a case that is not
deterministic, or a recording gone stale). Imports the suite's own modules.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import expected
from .cases import Case, load_all
from .harness import Runner, SetupFailed, Target


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.record", description=__doc__)
    parser.add_argument(
        "--conf",
        default=os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf"),
        help="the oracle's slurm.conf (default: $SLURM_CONF, else /etc/slurm/slurm.conf)",
    )
    parser.add_argument(
        "--bin", default="/usr/bin", help="the oracle's commands (default /usr/bin)"
    )
    parser.add_argument("--area", action="append", help="record only this area (repeatable)")
    parser.add_argument("--case", action="append", help="record only this case name (repeatable)")
    parser.add_argument(
        "--check", action="store_true", help="compare with the recording, write nothing"
    )
    parser.add_argument("--root", help="where case working directories go (default: a temp dir)")
    return parser.parse_args(argv)


def _version(bin_dir: Path) -> str:
    done = subprocess.run([str(bin_dir / "sbatch"), "--version"], capture_output=True, text=True)
    return done.stdout.strip()


def _record(runner: Runner, cases: list[Case], check: bool) -> tuple[dict[str, dict], list[str]]:
    """Run the cases; return area -> name -> Recorded, and the ids of cases that went wrong."""
    results: dict[str, dict[str, expected.Recorded]] = {}
    problems = []
    for case in cases:
        started = time.monotonic()
        try:
            run = runner.run(case)
        except SetupFailed as exc:
            problems.append(case.id)
            print(f"SETUP FAILED {exc}", flush=True)
            continue
        took = time.monotonic() - started
        print(f"{case.id}: rc={run.rc} jobs={len(run.ctx.jobs)} ({took:.1f}s)", flush=True)
        if check:
            before = expected.load(case.area).get(case.name)
            if before is None or before.digest != case.digest():
                problems.append(case.id)
                print("  not recorded for this definition", flush=True)
                continue
            diff = expected.differences(case, before.run, run, "recorded", "live")
            if diff:
                problems.append(case.id)
                print("  " + diff.replace("\n", "\n  "), flush=True)
        results.setdefault(case.area, {})[case.name] = expected.Recorded.of(case, run)
    return results, problems


def main(argv: list[str] | None = None) -> int:
    """Record (or check) the oracle's results.

    Args:
        argv: the command line (default: sys.argv).

    Returns:
        The exit status: 1 when a case's setup failed (or, with --check, differed).
    """
    args = _arguments(argv)
    cases = load_all(args.area)
    if args.case:
        cases = [case for case in cases if case.name in args.case]
    root = Path(args.root or tempfile.mkdtemp(prefix="conformance-oracle-"))
    target = Target("slurm", Path(args.bin), Path(args.conf), root)
    runner = Runner(target)
    runner.start()
    version = _version(target.bin_dir)
    print(f"recording {len(cases)} case(s) from {version} ({args.conf}) in {root}", flush=True)
    results, problems = _record(runner, cases, args.check)
    if not args.check:
        defined = {case.id for case in load_all([*results])}
        for area, recorded in results.items():
            merged = {**expected.load(area), **recorded}  # a failed setup keeps the old entry
            kept = {name: r for name, r in merged.items() if f"{area}/{name}" in defined}
            print(f"wrote {expected.save(area, version, kept)}")
    if problems:
        print(f"{len(problems)} case(s) went wrong: {' '.join(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
