"""Tests of SWF reading and the jobs a trace describes.

Imports minislurm.swf.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from minislurm.swf import SwfError, read_swf, trace_jobs

TRACE = """\
; Version: 2.2
; MaxNodes: 16
; MaxProcs: 32

1 0 5 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 2 -1 -1 -1 -1 -1 1 2 1 1 1 1 -1 -1
3 20 -1 0 2 -1 -1 2 60 -1 0 2 1 1 1 1 -1 -1
4 30 -1 300 64 -1 -1 64 400 -1 1 2 1 1 1 1 -1 -1
5 40 -1 900 1 -1 -1 1 600 -1 1 2 1 1 1 1 -1 -1
"""


def write(tmp_path: Path, text: str, name: str = "t.swf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_read_swf_takes_header_values_and_records(tmp_path: Path) -> None:
    trace = read_swf(write(tmp_path, TRACE))
    assert trace.machine_size == 32  # MaxProcs wins over MaxNodes
    assert [r.job_number for r in trace.records] == [1, 2, 3, 4, 5]
    first = trace.records[0]
    assert (first.submit_time, first.run_time, first.requested_procs) == (0, 100, 4)
    assert first.requested_time == 200


def test_read_swf_limit_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "t.swf.gz"
    with gzip.open(path, "wt") as stream:
        stream.write(TRACE)
    assert len(read_swf(str(path), 2).records) == 2


def test_read_swf_rejects_a_short_or_non_numeric_line(tmp_path: Path) -> None:
    with pytest.raises(SwfError, match=r"t.swf:2: 3 fields"):
        read_swf(write(tmp_path, "; MaxProcs: 4\n1 2 3\n"))
    with pytest.raises(SwfError, match="not a number"):
        read_swf(write(tmp_path, "1 x" + " 1" * 16 + "\n"))


def test_trace_jobs_estimates_are_limits_and_run_times_are_capped_by_them(tmp_path: Path) -> None:
    jobs, skipped = trace_jobs(read_swf(write(tmp_path, TRACE)).records, 32)
    # 3 has no run time, 4 is wider than the machine
    assert skipped == 2
    assert [(j.job_id, j.procs, j.limit, j.run_time) for j in jobs] == [
        (1, 4, 200, 100),
        (2, 2, 50, 50),  # no request: allocated processors, run time as its limit
        (5, 1, 600, 600),  # ran past its estimate: killed at its limit
    ]
