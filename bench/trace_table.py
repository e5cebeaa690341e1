"""The trace table: FIFO and backfill on the shared traces, against the EASY reference figures.

Run by hand: ``.venv/bin/python bench/trace_table.py [--jobs 10000] [--procs N]``
(each cell is ``minislurm simulate --trace T --jobs N --policy P --json``, run
in parallel). Prints a Markdown table of utilization and mean bounded slowdown
(10 s), with the reference figures (EASY backfilling, FIFO) beside ours.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
MINISLURM = Path(sys.executable).with_name("minislurm")
# trace: (EASY utilization, EASY mean bsld, FIFO utilization, FIFO mean bsld)
REFERENCE = {
    "lublin_256.swf": (0.936, 590.0, 0.655, 66502.0),
    "lublin_256_new2.swf": (0.603, 256.0, 0.412, 54575.0),
    "HPC2N-2002-2.2-first3171.swf": (0.396, 16.2, 0.394, 47.0),
}


def cell(trace: str, policy: str, jobs: int) -> dict[str, float]:
    """One simulation's measures."""
    argv = [str(MINISLURM), "simulate", "--trace", str(TRACES / trace), "--jobs", str(jobs)]
    out = subprocess.run(
        [*argv, "--policy", policy, "--json"], capture_output=True, text=True, check=True
    )
    measures: dict[str, float] = json.loads(out.stdout)
    return measures


def main() -> None:
    """Run every cell and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--procs", type=int, default=6)
    args = parser.parse_args()
    cells = [(t, p) for t in REFERENCE for p in ("backfill", "fifo")]
    with ThreadPoolExecutor(args.procs) as pool:
        results = dict(zip(cells, pool.map(lambda c: cell(*c, args.jobs), cells), strict=True))
    print(
        "| trace | backfill util | EASY util | backfill bsld | EASY bsld "
        "| FIFO util (ref) | FIFO bsld (ref) | backfill jobs/s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for trace, (e_util, e_bsld, f_util, f_bsld) in REFERENCE.items():
        bf, fifo = results[(trace, "backfill")], results[(trace, "fifo")]
        print(
            f"| {trace} | {bf['utilization']:.4f} | {e_util} | {bf['mean_bsld']:.2f} | {e_bsld}"
            f" | {fifo['utilization']:.4f} ({f_util}) | {fifo['mean_bsld']:.1f} ({f_bsld})"
            f" | {bf['jobs_per_second']:.0f} |"
        )


if __name__ == "__main__":
    main()
