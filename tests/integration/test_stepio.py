"""nodeagent.stepio and stepd's step mode, with real stepd processes (no gRPC, no cluster).

Each test starts a step through :func:`start_step` in a temporary spool
directory and drives it as slurmd would: reading its events, writing
stdin, signalling and terminating it.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers import pid_alive, until, wait_until

from minislurm.stepids import step_id_text
from nodeagent.spool import StepJob, TaskJob, read_status
from nodeagent.stepio import EventKind, StepEvent, StepSession, lost_events, start_step

pytestmark = pytest.mark.timeout(60)

T = TypeVar("T")
PATH = "/usr/local/bin:/usr/bin:/bin"


def task(task_id: int, argv: list[str], env: dict[str, str], **kwargs: Any) -> TaskJob:
    """Task ``task_id``, its node's rank ``task_id`` too (its stdin: see :func:`step_spec`)."""
    return TaskJob(task_id, task_id, tuple(argv), env, **kwargs)


def sh_task(task_id: int, script: str, **kwargs: Any) -> TaskJob:
    """A task running ``sh -c script`` with the step variables of rank ``task_id``."""
    env = {"PATH": PATH, "SLURM_PROCID": str(task_id), "SLURM_LOCALID": str(task_id)}
    return task(task_id, ["sh", "-c", script], env, **kwargs)


def step_spec(
    tasks: list[TaskJob], cwd: Path | str, stdin_to: str = "none", **kwargs: Any
) -> StepJob:
    """A step of job 7, step 0 on node n1, run as the current user.

    ``stdin_to`` says whose stdin (of the tasks without a file) is slurmd's pipe:
    ``"none"`` (all read /dev/null), ``"all"`` or ``"task0"``.
    """
    piped = {"none": set(), "all": {t.task_id for t in tasks}, "task0": {0}}[stdin_to]
    tasks = [
        t if t.stdin is not None or t.task_id in piped else t._replace(stdin=os.devnull)
        for t in tasks
    ]
    user = pwd.getpwuid(os.getuid()).pw_name
    step = StepJob(
        7, 0, os.getuid(), os.getgid(), user, 0o022, str(cwd), "n1", 5, tuple(tasks), "0"
    )
    step = step._replace(**kwargs)
    return step._replace(step_text=step_id_text(step.step_id))


def run(test: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run an async test body."""
    return asyncio.run(test())


async def collect(session: StepSession, timeout: float = 30.0) -> list[StepEvent]:
    """Every event of the session, up to and including DONE."""
    async with asyncio.timeout(timeout):
        return [event async for event in session.events()]


def stream(events: list[StepEvent], task_id: int, kind: EventKind = EventKind.STDOUT) -> bytes:
    """All the data of one task's stream."""
    return b"".join(e.data for e in events if e.task_id == task_id and e.kind == kind)


def exit_of(events: list[StepEvent], task_id: int) -> StepEvent:
    """The task's EXITED event (there must be exactly one)."""
    (exited,) = [e for e in events if e.task_id == task_id and e.kind == EventKind.EXITED]
    return exited


class Watcher:
    """Reads a session's events in the background so a test can wait on what they said."""

    def __init__(self, session: StepSession) -> None:
        self.events: list[StepEvent] = []
        self.task = asyncio.create_task(self._read(session))

    async def _read(self, session: StepSession) -> list[StepEvent]:
        async for event in session.events():
            self.events.append(event)
        return self.events

    def count(self, text: bytes) -> int:
        """How many tasks' stdout has shown ``text`` so far."""
        tasks = {e.task_id for e in self.events}
        return sum(text in stream(self.events, t) for t in tasks)

    async def done(self, timeout: float = 30.0) -> list[StepEvent]:
        """All events, once DONE came."""
        async with asyncio.timeout(timeout):
            return await self.task


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user can write (pytest's tmp dirs are the owner's only)."""
    path = Path(tempfile.mkdtemp(prefix="minislurm-stepio-", dir="/tmp"))
    os.chmod(path, 0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_tasks_report_start_output_and_exit_in_order(tmp_path: Path) -> None:
    script = (
        'echo "rank=$SLURM_PROCID pid=$SLURM_TASK_PID"; echo "err$SLURM_PROCID" >&2; '
        "exit $((SLURM_PROCID + 3))"
    )
    spec = step_spec([sh_task(i, script) for i in range(4)], tmp_path)

    async def body() -> None:
        session = await start_step(str(tmp_path / "step"), spec)
        assert pid_alive(session.pid)
        events = await collect(session)
        assert events[-1].kind == EventKind.DONE and not events[-1].error
        assert events[-1].exit_code == 6
        for i in range(4):
            kinds = [e.kind for e in events if e.task_id == i]
            assert kinds[0] == EventKind.STARTED and kinds[-1] == EventKind.EXITED, kinds
            assert set(kinds[1:-1]) == {EventKind.STDOUT, EventKind.STDERR}
            pid = next(e.pid for e in events if e.task_id == i)
            assert stream(events, i) == f"rank={i} pid={pid}\n".encode()
            assert stream(events, i, EventKind.STDERR) == f"err{i}\n".encode()
            assert (exit_of(events, i).exit_code, exit_of(events, i).signal) == (i + 3, 0)
        result = session.outcome()
        assert [(t.task_id, t.exit_code, t.signal) for t in result.tasks] == [
            (i, i + 3, 0) for i in range(4)
        ]
        assert result.exit_code == 6 and result.outcome == ""
        assert result.end_time >= result.start_time > 0
        assert read_status(session.step_dir) == result
        assert not pid_alive(session.pid)

    run(body)
    assert oct((tmp_path / "step").stat().st_mode & 0o777) == oct(0o711)


@pytest.mark.parametrize(
    ("stdin_to", "readers"), [("task0", {0}), ("all", {0, 1, 2, 3}), ("none", set())]
)
def test_stdin_reaches_the_chosen_tasks_and_eof_closes_it(
    tmp_path: Path, stdin_to: str, readers: set[int]
) -> None:
    spec = step_spec([sh_task(i, "cat; echo end") for i in range(4)], tmp_path, stdin_to=stdin_to)

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await session.write_stdin(b"hel")
        await session.write_stdin(b"lo\n", eof=True)
        return await watcher.done()

    events = run(body)
    for i in range(4):
        assert stream(events, i) == (b"hello\nend\n" if i in readers else b"end\n")
        assert exit_of(events, i).exit_code == 0


def test_large_output_arrives_complete(tmp_path: Path) -> None:
    expected = subprocess.run(["seq", "1", "1500000"], capture_output=True, check=True).stdout
    assert len(expected) > 10_000_000
    tasks = [sh_task(0, "seq 1 1500000"), sh_task(1, "echo small")]
    spec = step_spec(tasks, tmp_path)

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        return await collect(session)

    events = run(body)
    assert stream(events, 0) == expected
    assert stream(events, 1) == b"small\n"
    assert all(len(e.data) <= 1 << 20 for e in events)


def test_signal_reaches_every_task_and_its_children(tmp_path: Path) -> None:
    script = (
        'sh -c \'trap "echo child; exit 0" USR1; echo childready; '
        "while :; do sleep 0.05; done' &\n"
        "trap 'wait; echo got; exit 0' USR1\n"
        "echo ready\n"
        "while :; do sleep 0.05; done\n"
    )
    spec = step_spec([sh_task(i, script) for i in range(4)], tmp_path)

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: watcher.count(b"childready") == 4 and watcher.count(b"ready\n") == 4)
        session.signal(signal.SIGUSR1)
        return await watcher.done()

    events = run(body)
    for i in range(4):
        assert b"child\n" in stream(events, i) and stream(events, i).endswith(b"got\n")
        assert (exit_of(events, i).exit_code, exit_of(events, i).signal) == (0, 0)


def test_terminate_kills_the_whole_tree_after_kill_wait(tmp_path: Path) -> None:
    tasks = [
        sh_task(0, "setsid sh -c 'echo esc $$; exec sleep 300' & sleep 300 & echo bg $!; wait"),
        sh_task(1, "trap '' TERM; echo ready $$; while :; do sleep 0.05; done"),
        sh_task(2, "echo plain $$; exec sleep 300"),
    ]
    spec = step_spec(tasks, tmp_path, kill_wait=1)

    async def body() -> tuple[list[StepEvent], float]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: len(b"".join(e.data for e in watcher.events).split(b"\n")) > 4)
        began = time.monotonic()
        session.terminate(1, "CANCELLED", time.time())
        events = await watcher.done()
        assert session.outcome().outcome == "CANCELLED"
        return events, time.monotonic() - began

    events, took = run(body)
    assert 1.0 <= took < 10, took
    assert exit_of(events, 0).signal == signal.SIGTERM
    assert exit_of(events, 1).signal == signal.SIGKILL  # it ignored SIGTERM
    assert exit_of(events, 2).signal == signal.SIGTERM
    assert b"*** STEP 7.0 ON n1 CANCELLED AT " in stream(events, 0, EventKind.STDERR)
    words = b" ".join(e.data for e in events if e.kind == EventKind.STDOUT).split()
    pids = [int(w) for w in words if w.isdigit()]
    started = {e.task_id: e.pid for e in events if e.kind == EventKind.STARTED}
    pids += started.values()
    assert len(pids) == 7, words
    for pid in pids:
        assert not pid_alive(pid), pid
    pgid = int((tmp_path / "step" / "task.pid").read_text())
    assert pgid == started[0] and not group_members(pgid)  # task 0 led the step's group


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in a process group."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_output_goes_to_files_opened_as_asked(tmp_path: Path) -> None:
    (tmp_path / "out-0").write_text("old\n")
    (tmp_path / "out-1").write_text("old\n")
    tasks = [
        sh_task(0, "echo out0; echo err0 >&2", stdout=str(tmp_path / "out-0"),
                stderr=str(tmp_path / "err-0"), append=True),
        sh_task(1, "echo out1; echo err1 >&2", stdout=str(tmp_path / "out-1"),
                stderr=str(tmp_path / "out-1")),
        sh_task(2, "echo two", stdout=str(tmp_path / "shared")),
        sh_task(3, "echo three", stdout=str(tmp_path / "shared")),
    ]  # fmt: skip
    spec = step_spec(tasks, tmp_path)

    async def body() -> list[StepEvent]:
        return await collect(await start_step(str(tmp_path / "step"), spec))

    events = run(body)
    assert not [e for e in events if e.kind in (EventKind.STDOUT, EventKind.STDERR)]
    assert (tmp_path / "out-0").read_text() == "old\nout0\n"
    assert (tmp_path / "err-0").read_text() == "err0\n"
    assert (tmp_path / "out-1").read_text() == "out1\nerr1\n"
    assert sorted((tmp_path / "shared").read_text().split()) == ["three", "two"]


def test_a_script_whose_interpreter_is_missing_says_so_as_slurms_stepd(tmp_path: Path) -> None:
    # Slurm 22.05: "execve(): bad interpreter(/no/such/interp -x): No such file or
    # directory" on the task's stderr, exit code 2 (ENOENT).
    script = tmp_path / "s.sh"
    script.write_text("#!/no/such/interp -x\necho never\n")
    script.chmod(0o755)
    spec = step_spec([task(0, [str(script)], {"PATH": PATH})], tmp_path)

    async def body() -> list[StepEvent]:
        return await collect(await start_step(str(tmp_path / "step"), spec))

    events = run(body)
    line = "slurmstepd-n1: error: execve(): bad interpreter(/no/such/interp -x): "
    assert stream(events, 0, EventKind.STDERR) == f"{line}No such file or directory\n".encode()
    assert exit_of(events, 0).exit_code == 2


def test_a_task_that_cannot_exec_says_why_on_its_stderr_and_the_others_run(
    tmp_path: Path,
) -> None:
    env = {"PATH": PATH}
    tasks = [
        sh_task(0, "echo fine"),
        task(1, ["/nonexistent/prog", "x"], env),
        task(2, ["no-such-command-here"], env),
        task(3, ["echo", "found", "in", "PATH"], env),
    ]
    spec = step_spec(tasks, tmp_path)

    async def body() -> list[StepEvent]:
        return await collect(await start_step(str(tmp_path / "step"), spec))

    events = run(body)
    assert stream(events, 0) == b"fine\n" and stream(events, 3) == b"found in PATH\n"
    for task_id, name in ((1, "/nonexistent/prog"), (2, "no-such-command-here")):
        assert EventKind.STARTED not in [e.kind for e in events if e.task_id == task_id]
        # Slurm's stepd's line, once, on the task's own stderr and before its exit;
        # the exit (code: errno, ENOENT) carries no text for srun to repeat.
        error = stream(events, task_id, EventKind.STDERR)
        assert (
            error == f"slurmstepd-n1: error: execve(): {name}: No such file or directory\n".encode()
        )
        exited = exit_of(events, task_id)
        assert (exited.exit_code, exited.error) == (2, "")
        said = next(e for e in events if e.task_id == task_id and e.kind == EventKind.STDERR)
        assert events.index(said) < events.index(exited)
    assert events[-1].kind == EventKind.DONE and events[-1].exit_code == 2


def test_a_step_that_cannot_chdir_says_so_once_and_once_per_task_then_runs_in_tmp(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing"
    tasks = [sh_task(0, "pwd"), sh_task(1, "pwd")]
    spec = step_spec(tasks, missing)

    async def body() -> list[StepEvent]:
        return await collect(await start_step(str(tmp_path / "step"), spec))

    events = run(body)
    line = f"slurmstepd-n1: error: couldn't chdir to `{missing}': No such file or directory"
    # As Slurm's stepd: its own chdir, then each task's, all on the first task's stderr.
    assert stream(events, 0, EventKind.STDERR) == f"{line}: going to /tmp instead\n".encode() * 3
    assert stream(events, 1, EventKind.STDERR) == b""
    assert stream(events, 0) == stream(events, 1) == b"/tmp\n"


def test_a_task_ending_early_leaves_the_others_running(tmp_path: Path) -> None:
    go = tmp_path / "GO"
    tasks = [sh_task(0, "exit 3"), sh_task(1, f"until [ -e {go} ]; do sleep 0.02; done; echo here")]
    spec = step_spec(tasks, tmp_path)

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: any(e.kind == EventKind.EXITED for e in watcher.events))
        go.touch()
        return await watcher.done()

    events = run(body)
    assert exit_of(events, 0).exit_code == 3
    assert stream(events, 1) == b"here\n" and exit_of(events, 1).exit_code == 0


def test_stepd_killed_ends_the_session_with_an_error_and_its_tasks(tmp_path: Path) -> None:
    spec = step_spec([sh_task(i, "echo pid $$; exec sleep 300") for i in range(2)], tmp_path)

    async def body() -> list[StepEvent]:
        session = await start_step(str(tmp_path / "step"), spec)
        watcher = Watcher(session)
        await until(lambda: watcher.count(b"pid") == 2)
        os.kill(session.pid, signal.SIGKILL)
        events = await watcher.done(timeout=15)
        assert session.outcome().signal == signal.SIGKILL
        return events

    events = run(body)
    assert events[-1].kind == EventKind.DONE and "slurmstepd died" in events[-1].error
    pids = [e.pid for e in events if e.kind == EventKind.STARTED]
    assert len(pids) == 2
    wait_until(lambda: not any(pid_alive(pid) for pid in pids), 10, "the orphaned tasks' end")


def test_tasks_outlive_a_closed_connection_and_finish(tmp_path: Path) -> None:
    go = tmp_path / "GO"
    wait_go = f"while [ ! -e {go} ]; do sleep 0.02; done"
    tasks = [sh_task(0, f"cat; echo eof; {wait_go}; seq 1 20000; exit 0")]
    tasks += [sh_task(i, f"{wait_go}; seq 1 20000; exit {i}") for i in (1, 2)]
    spec = step_spec(tasks, tmp_path, stdin_to="task0")

    async def body() -> None:
        session = await start_step(str(tmp_path / "step"), spec)
        events = session.events()
        started = [await anext(events) for _ in range(3)]
        assert {e.kind for e in started} == {EventKind.STARTED}
        session.close()
        go.touch()
        await until(lambda: read_status(session.step_dir) is not None, what="status.json")
        await until(lambda: not pid_alive(session.pid), what="stepd's exit")

    run(body)
    result = read_status(str(tmp_path / "step"))
    assert result is not None
    assert [(t.exit_code, t.signal) for t in result.tasks] == [(0, 0), (1, 0), (2, 0)]
    kept = lost_events(str(tmp_path / "step"))
    seq = subprocess.run(["seq", "1", "20000"], capture_output=True, check=True).stdout
    assert stream(kept, 0) == b"eof\n" + seq  # stdin got EOF once slurmd was gone
    assert stream(kept, 1) == seq and stream(kept, 2) == seq
    assert [e.kind for e in kept if e.task_id == 2][-1] == EventKind.EXITED
    assert kept[-1].kind == EventKind.DONE and result.lost_output > 3 * len(seq)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run tasks as another user")
def test_tasks_run_as_the_jobs_user(tmp_path: Path, shared_dir: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    script = "id -u; id -g; touch made-by-$SLURM_PROCID"
    tasks = [sh_task(0, script, stdout=str(shared_dir / "out-0")), sh_task(1, script)]
    spec = step_spec(tasks, shared_dir, uid=nobody.pw_uid, gid=nobody.pw_gid, user="nobody")

    async def body() -> list[StepEvent]:
        return await collect(await start_step(str(tmp_path / "step"), spec))

    events = run(body)
    ids = f"{nobody.pw_uid}\n{nobody.pw_gid}\n"
    assert stream(events, 1) == ids.encode()
    assert (shared_dir / "out-0").read_text() == ids
    for name in ("out-0", "made-by-0", "made-by-1"):
        assert (shared_dir / name).stat().st_uid == nobody.pw_uid, name
    assert (tmp_path / "step" / "job.json").stat().st_uid == 0


def test_a_step_directory_is_never_reused(tmp_path: Path) -> None:
    (tmp_path / "step").mkdir()
    spec = step_spec([sh_task(0, "true")], tmp_path)
    with pytest.raises(FileExistsError):
        run(lambda: start_step(str(tmp_path / "step"), spec))
    with pytest.raises(ValueError):
        run(lambda: start_step(str(tmp_path / "other"), step_spec([], tmp_path)))
