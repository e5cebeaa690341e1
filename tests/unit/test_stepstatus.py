"""srun's Ctrl-C status report (cli/stepstatus.py), worded as Slurm 22.05's srun words it."""

from __future__ import annotations

import pytest

from cli.stepstatus import status_lines, task_ranges


@pytest.mark.parametrize(
    ("ids", "text"),
    [([0], "0"), ([0, 1], "0-1"), ([0, 1, 2, 5], "0-2,5"), ([0, 2, 4, 5], "0,2,4-5"), ([], "")],
)
def test_task_ranges_print_as_slurms_bitmaps(ids: list[int], text: str) -> None:
    assert task_ranges(ids) == text


def test_states_come_in_slurms_order_one_line_each() -> None:
    # Measured: srun -n3, task 0 exited 3, task 2 exited 0, task 1 running.
    assert status_lines("41.0", [0, 1, 2], {0: (3, 0), 2: (0, 0)}, set()) == [
        "StepId=41.0 task 1: running",
        "StepId=41.0 task 0: exited abnormally",
        "StepId=41.0 task 2: exited",
    ]
    assert status_lines("40.0", [0, 1], {}, set()) == ["StepId=40.0 tasks 0-1: running"]
    assert status_lines("7.1", [0, 1, 2, 3], {1: (2, 0), 3: (0, 9)}, {1}) == [
        "StepId=7.1 task 1: failed to start",
        "StepId=7.1 tasks 0,2: running",
        "StepId=7.1 task 3: exited abnormally",
    ]
