"""A step's pty task (``srun --pty``) under a real stepd, driven as slurmd drives it.

The task's stdin, stdout and stderr are one pseudo-terminal, its controlling
terminal in a session of its own; keystrokes go through the node's line
discipline (Ctrl-C becomes SIGINT), window sizes reach it as SIGWINCH, and
a lost slurmd hangs the terminal up.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from helpers import until
from test_stepio import Watcher, exit_of, run, sh_task, step_spec, stream

from minislurm.stepids import INTERACTIVE_STEP
from nodeagent.spool import TaskJob, read_status
from nodeagent.stepio import EventKind, StepEvent, start_step

pytestmark = pytest.mark.timeout(60)


def pty_task(script: str) -> TaskJob:
    """Task 0 running ``sh -c script`` on a pty."""
    return sh_task(0, script)._replace(pty=True)


def test_the_terminal_is_the_tasks_streams_and_controlling_tty(tmp_path: Path) -> None:
    script = (
        "tty; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-three; stty size; "
        "read -r pid comm state ppid pgrp sid ttynr tpgid rest < /proc/$$/stat; "
        'echo "leader=$((sid == $$)) foreground=$((tpgid == $$)) tty=$((ttynr != 0))"; '
        'echo to-stderr >&2; read -r line; echo "got $line"; exit 3'
    )
    spec = step_spec([pty_task(script)], tmp_path, stdin_to="task0", window=(24, 80))

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: b"to-stderr" in stream(watcher.events, 0))
        await session.write_stdin(b"typed\n")
        return await watcher.done()

    events = run(body)
    out = stream(events, 0).decode()
    lines = out.split("\r\n")  # the pty's ONLCR: what the task writes ends in CR LF
    assert lines[0].startswith("/dev/pts/"), out
    assert lines[1:5] == ["all-three", "24 80", "leader=1 foreground=1 tty=1", "to-stderr"]
    assert "typed\r\n" in out and out.endswith("got typed\r\n")  # echoed, then read
    assert not stream(events, 0, EventKind.STDERR)
    assert exit_of(events, 0).exit_code == 3
    kinds = [e.kind for e in events if e.task_id == 0]
    assert kinds[-1] == EventKind.EXITED  # after every byte of its output


def test_a_window_change_reaches_the_task_as_sigwinch(tmp_path: Path) -> None:
    script = "trap 'stty size; exit 0' WINCH; echo ready; while :; do sleep 0.05; done"
    spec = step_spec([pty_task(script)], tmp_path, stdin_to="task0", window=(30, 100))

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: b"ready" in stream(watcher.events, 0))
        session.set_window(40, 120)
        return await watcher.done()

    events = run(body)
    assert stream(events, 0).endswith(b"40 120\r\n")
    assert exit_of(events, 0).exit_code == 0


def test_ctrl_c_typed_interrupts_the_foreground_group(tmp_path: Path) -> None:
    spec = step_spec([pty_task("echo ready; sleep 100")], tmp_path, stdin_to="task0")

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: b"ready" in stream(watcher.events, 0))
        await session.write_stdin(b"\x03")
        return await watcher.done(timeout=10)

    events = run(body)
    assert exit_of(events, 0).signal == signal.SIGINT
    assert b"^C" in stream(events, 0)  # the node's line discipline echoes it


def test_signals_reach_the_pty_session_and_the_other_tasks(tmp_path: Path) -> None:
    script = "trap 'echo got; exit 0' USR1; echo ready; while :; do sleep 0.05; done"
    tasks = [pty_task(script), sh_task(1, script), sh_task(2, script)]
    spec = step_spec(tasks, tmp_path, stdin_to="task0")

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: watcher.count(b"ready") == 3)
        session.signal(signal.SIGUSR1)
        return await watcher.done()

    events = run(body)
    for task in range(3):
        assert b"got" in stream(events, task) and exit_of(events, task).exit_code == 0
    started = {e.task_id: e.pid for e in events if e.kind == EventKind.STARTED}
    groups = [int(g) for g in (tmp_path / "step" / "task.pid").read_text().split()]
    assert sorted(groups) == sorted([started[1], started[0]])  # the tasks' group, the session


def test_a_lost_slurmd_hangs_the_terminal_up(tmp_path: Path) -> None:
    mark = tmp_path / "hup"
    script = f"trap 'echo hup > {mark}; exit 7' HUP; echo ready; while :; do sleep 0.05; done"
    spec = step_spec([pty_task(script)], tmp_path, stdin_to="task0")

    async def body() -> None:
        session = await start_step(str(tmp_path / "step"), spec)
        events = session.events()
        seen = b""
        while b"ready" not in seen:
            event = await anext(events)
            seen += event.data if event.kind == EventKind.STDOUT else b""
        session.close()  # as a slurmd restart does
        await until(lambda: read_status(session.step_dir) is not None, what="status.json")

    run(body)
    result = read_status(str(tmp_path / "step"))
    assert result is not None and [(t.exit_code, t.signal) for t in result.tasks] == [(7, 0)]
    assert mark.read_text() == "hup\n"
    assert not os.path.exists(f"/proc/{result.tasks[0].pid}")


def test_the_interactive_steps_cancel_line_names_it(tmp_path: Path) -> None:
    spec = step_spec(
        [pty_task("echo ready; exec sleep 100")],
        tmp_path,
        step_id=INTERACTIVE_STEP,
        stdin_to="task0",
        kill_wait=1,
    )

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: b"ready" in stream(watcher.events, 0))
        session.terminate(1, "CANCELLED", time.time())
        return await watcher.done()

    events = run(body)
    assert b"*** STEP 7.interactive ON n1 CANCELLED AT " in stream(events, 0, EventKind.STDERR)
    assert exit_of(events, 0).signal == signal.SIGTERM
