"""How srun tells the ends of a node's tasks (cli.steprun), as Slurm 22.05's srun tells them.

Slurm's stepd reports the tasks it reaped together in one message; srun says
those with one status in one line (``srun: error: n1: tasks 0-1: Killed``),
and each other end on a line of its own, in the order they came.
"""

from __future__ import annotations

import pytest

from cli import common, steprun
from minislurm.wire.protowire import Message

pytestmark = pytest.mark.timeout(10)

EXITED, STDERR = steprun.EXITED, steprun.STDERR


class Batch:
    """A node's stream that gives, once, the events that came together."""

    def __init__(self, events: list[Message]) -> None:
        self.events = events
        self.done = False

    def read(self, block: bool = True) -> list[Message]:
        events, self.events = self.events, []
        return events


def ended(task: int, code: int = 0, sig: int = 0) -> Message:
    return Message(
        "minislurm.v1.TaskEvent",
        {"kind": EXITED, "task_id": task, "exit_code": code, "signal": sig},
    )


def said(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *batches: list[Message],
    kill_on_bad_exit: bool = False,
) -> list[str]:
    monkeypatch.setattr(common, "tls_context", lambda: None)
    node = {"node": "n1", "addr": "127.0.0.1", "port": 9, "task_ids": [0, 1, 2, 3]}
    reply = Message("minislurm.v1.CreateStepReply", {"step": {"job_id": 5, "nodes": [node]}})
    run = steprun.StepRun("srun", reply, {}, {"kill_on_bad_exit": kill_on_bad_exit})
    monkeypatch.setattr(run, "signal_all", lambda *args, **kwargs: None)
    (link,) = run.links
    for events in batches:
        link.stream = Batch(events)  # type: ignore[assignment]
        run._drain(link)
    return capsys.readouterr().err.splitlines()


def test_tasks_that_ended_together_with_one_status_share_a_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = said(monkeypatch, capsys, [ended(1, sig=9), ended(0, sig=9), ended(3, 2), ended(2, 2)])
    assert lines == [
        "srun: error: n1: tasks 0-1: Killed",
        "srun: error: n1: tasks 2-3: Exited with exit code 2",
    ]


def test_ends_that_came_apart_or_differ_get_a_line_each(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = Message("minislurm.v1.TaskEvent", {"kind": STDERR, "task_id": 2, "data": b"x\n"})
    lines = said(monkeypatch, capsys, [ended(1, 3)], [ended(0, 3), out, ended(2, 3), ended(3, 4)])
    assert lines == [
        "srun: error: n1: task 1: Exited with exit code 3",
        "srun: error: n1: task 0: Exited with exit code 3",
        "x",
        "srun: error: n1: task 2: Exited with exit code 3",
        "srun: error: n1: task 3: Exited with exit code 4",
    ]


def test_kill_on_bad_exit_terminates_after_the_end_is_told(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = said(monkeypatch, capsys, [ended(1, 5)], kill_on_bad_exit=True)
    assert lines == [
        "srun: error: n1: task 1: Exited with exit code 5",
        "srun: launch/slurm: _step_signal: Terminating StepId=5.0",
    ]
