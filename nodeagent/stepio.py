"""slurmd's side of an srun step's stepd: start it, stream its tasks' I/O, signal it.

For each step on this node slurmd calls :func:`start_step`, which writes
the step's spool directory, listens on a Unix socket there, starts
``python -m nodeagent.stepd STEP_DIR`` in a session of its own (so the
tasks outlive slurmd) and waits for stepd to connect. The returned
:class:`StepSession` yields the tasks' events (started, output, exit, then
the step's end) and carries stdin, signals and the kill request to stepd.

The step's directory (root-owned, mode 0711: the job's user runs there but
cannot touch ``job.json``, which stepd reads as root) holds the files of
:mod:`nodeagent.spool`; its ``task.pid`` lists the step's process groups,
one a line (the tasks' one and a pty task's session), and its
``lost-output`` is read back with :func:`lost_events`.

Frames, both ways, are a 9-byte header then the payload::

    kind     1 byte    what the frame is (below)
    task id  4 bytes   big-endian unsigned; 0xFFFFFFFF (ALL_TASKS) = the whole step
    length   4 bytes   big-endian unsigned payload size, at most 16 MiB
    payload  length bytes

    stepd -> slurmd
      1 HELLO      ALL   JSON {"version": 1, "pid": stepd's pid}; the first frame
      2 STARTED    task  !i pid; once the task's exec succeeded
      3 STDOUT     task  bytes, as read from the task's stdout pipe
      4 STDERR     task  bytes, as read from its stderr pipe (stepd's own errors too)
      5 EXITED     task  !ii exit code, signal; then UTF-8 error text (why it never ran)
      6 DONE       ALL   JSON, what status.json holds; the last frame
    slurmd -> stepd
     16 STDIN      task|ALL  bytes for the task(s) whose stdin is a pipe
     17 STDIN_EOF  task|ALL  empty; closes the pipe once its data is written
     18 SIGNAL     task|ALL  !i signal; ALL: the step's process group and every
                             other descendant; a task: that task's process only
     19 TERMINATE  ALL       JSON {"kill_wait": s, "outcome": "CANCELLED"|"TIMEOUT",
                             "time": epoch}: the CANCELLED line, SIGTERM, SIGKILL later
     20 WINSIZE    task|ALL  !HH rows, columns: the new window size of the task(s)'
                             pseudo-terminal (srun --pty); others ignore it

Every task gets exactly one EXITED; STARTED precedes it when the task ran.
Each task's frames keep its order (output written before it ended comes
before its EXITED; output of its leftover children may follow, except on a
pty, whose task's EXITED waits until no process holds the terminal).

Imports nodeagent.stepd.frames (the wire format), nodeagent.spool,
nodeagent.stepdpool (to start stepd) and the standard library; no gRPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import os
import signal
import socket
import struct
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from nodeagent import spool
from nodeagent.stepd import frames
from nodeagent.stepdpool import Stepd, start_stepd

log = logging.getLogger(__name__)

START_TIMEOUT = 10.0  # seconds for stepd to start and connect
LOST_WAIT = 5.0  # seconds for stepd to exit once its connection ended unannounced
STDIN_CHUNK = 1 << 20
READ_LIMIT = 1 << 20  # the stream reader's buffer


class StepdError(Exception):
    """stepd could not be started, or did not connect in time."""


class EventKind(enum.StrEnum):
    """What a :class:`StepEvent` reports."""

    STARTED = "started"
    STDOUT = "stdout"
    STDERR = "stderr"
    EXITED = "exited"
    DONE = "done"


@dataclass(frozen=True)
class StepEvent:
    """One thing that happened to a step's task (``task_id`` -1: the step, for DONE)."""

    kind: EventKind
    task_id: int
    data: bytes = b""
    pid: int = 0
    exit_code: int = 0
    signal: int = 0
    error: str = ""  # EXITED: why the task never ran; DONE: why stepd vanished


def check(job: spool.StepJob) -> None:
    """Whether stepd can run a step as described.

    Args:
        job: the step's ``job.json``.

    Raises:
        ValueError: no tasks, task ids repeated or out of range, a task
            without argv, or a negative KillWait.
    """
    ids = [t.task_id for t in job.tasks]
    if not ids or len(set(ids)) != len(ids) or not all(0 <= i < frames.ALL_TASKS for i in ids):
        raise ValueError(f"a step needs tasks with distinct ids, not {ids}")
    if any(not t.argv for t in job.tasks) or job.kill_wait < 0:
        raise ValueError("every task needs an argv, and kill_wait must be >= 0")


async def start_step(
    step_dir: str,
    job: spool.StepJob,
    timeout: float = START_TIMEOUT,
    spawn: Callable[[str], Stepd] | None = None,
) -> StepSession:
    """Create the step's directory, start its stepd and wait for it to connect.

    Args:
        step_dir: the step's spool directory, which must not exist yet.
        job: what stepd runs (its ``job.json``; a task's stdin None: a pipe
            fed by :meth:`StepSession.write_stdin`).
        timeout: seconds for stepd to connect.
        spawn: starts stepd on a directory (slurmd's StepdPool); default: a new process
            (:func:`nodeagent.stepdpool.start_stepd`).

    Returns:
        The session; its tasks are being started.

    Raises:
        ValueError: the step is inconsistent (see :func:`check`).
        FileExistsError: the directory exists (the step was launched already).
        OSError: the directory or the socket could not be made.
        StepdError: stepd did not start or connect in time (it is killed).
    """
    check(job)
    spool.create(step_dir, job)
    listener = _listen(step_dir)
    try:
        proc = (spawn or start_stepd)(step_dir)
        try:
            reader, writer = await _connection(listener, proc, step_dir, timeout)
        except BaseException:
            proc.kill()
            raise
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(step_dir, spool.SOCKET_NAME))
    log.info("job=%d step=%d stepd pid=%d started", job.job_id, job.step_id, proc.pid)
    return StepSession(step_dir, job, proc, reader, writer)


def _listen(step_dir: str) -> socket.socket:
    address, dir_fd = frames.unix_path(step_dir, spool.SOCKET_NAME)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(address)
        os.chmod(address, 0o600)  # root's (slurmd's) only: the user must not pose as stepd
        listener.listen(1)
        listener.setblocking(False)
    except OSError:
        listener.close()
        raise
    finally:
        if dir_fd >= 0:
            os.close(dir_fd)
    return listener


async def _connection(
    listener: socket.socket,
    proc: Stepd,
    step_dir: str,
    timeout: float,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Accept stepd's connection (checked by its pid) and read its HELLO."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    exited = asyncio.ensure_future(wait_readable(proc.pidfd, None))
    accept: asyncio.Future[tuple[socket.socket, object]] | None = None
    try:
        while True:
            accept = asyncio.ensure_future(loop.sock_accept(listener))
            left = deadline - loop.time()
            await asyncio.wait([accept, exited], timeout=left, return_when="FIRST_COMPLETED")
            if not accept.done():
                why = "exited" if exited.done() else f"did not connect within {timeout:g}s"
                raise StepdError(f"slurmstepd {why}; its log: {spool.log_tail(step_dir, 2000)}")
            conn, _ = accept.result()
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[0] == proc.pid:
                break
            conn.close()  # not our stepd
        reader, writer = await asyncio.open_unix_connection(sock=conn, limit=READ_LIMIT)
        kind, _, payload = await asyncio.wait_for(_read_frame(reader), deadline - loop.time())
        hello = json.loads(payload) if kind == frames.Kind.HELLO else {}
    except (OSError, EOFError, TimeoutError, ValueError) as error:
        raise StepdError(f"slurmstepd did not say hello: {error!r}") from error
    finally:
        # Both readers must be gone before the caller closes the listener and the
        # pidfd, also when this launch is cancelled (srun went away): a reader left
        # on a closed descriptor stays in the selector, and a later launch's
        # listener that reuses the number is then never watched (never accepted).
        exited.cancel()
        if accept is not None:
            accept.cancel()
            await asyncio.gather(accept, return_exceptions=True)
        await asyncio.gather(exited, return_exceptions=True)
    if not isinstance(hello, dict) or hello.get("version") != frames.PROTOCOL_VERSION:
        writer.close()
        raise StepdError(f"slurmstepd speaks another protocol: {payload[:100]!r}")
    return reader, writer


async def wait_readable(fd: int, timeout: float | None) -> bool:
    """Wait until ``fd`` (a pidfd: the process exited) is readable.

    Args:
        fd: the descriptor.
        timeout: seconds; None: no limit.

    Returns:
        True when it is readable, False on timeout.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not future.done():
            future.set_result(None)

    loop.add_reader(fd, ready)
    try:
        await asyncio.wait_for(future, timeout)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, int, bytes]:
    header = await reader.readexactly(frames.HEADER.size)
    kind, task_id, size = frames.HEADER.unpack(header)
    if size > frames.MAX_PAYLOAD:
        raise ValueError(f"protocol error: a frame of {size} bytes")
    return kind, task_id, await reader.readexactly(size) if size else b""


def frame_event(kind: int, task_id: int, payload: bytes) -> StepEvent | None:
    """The event a frame from stepd reports (None for HELLO and unknown kinds).

    Args:
        kind: the frame's kind.
        task_id: its task id.
        payload: its payload.

    Returns:
        The event.

    Raises:
        struct.error: a malformed payload.
    """
    task = -1 if task_id == frames.ALL_TASKS else task_id
    if kind == frames.Kind.STARTED:
        return StepEvent(EventKind.STARTED, task, pid=frames.PID.unpack(payload)[0])
    if kind in (frames.Kind.STDOUT, frames.Kind.STDERR):
        stream = EventKind.STDOUT if kind == frames.Kind.STDOUT else EventKind.STDERR
        return StepEvent(stream, task, data=payload)
    if kind == frames.Kind.EXITED:
        code, sig = frames.EXIT.unpack_from(payload)
        error = payload[frames.EXIT.size :].decode(errors="replace")
        return StepEvent(EventKind.EXITED, task, exit_code=code, signal=sig, error=error)
    if kind == frames.Kind.DONE:
        result = json.loads(payload)
        return StepEvent(EventKind.DONE, -1, exit_code=result["exit_code"], signal=result["signal"])
    return None


def lost_events(step_dir: str) -> list[StepEvent]:
    """The events stepd kept in ``lost-output`` while slurmd was away.

    Args:
        step_dir: the step's spool directory.

    Returns:
        The events, in order.
    """
    try:
        with open(os.path.join(step_dir, spool.LOST_OUTPUT_FILE), "rb") as f:
            data = f.read()
    except OSError:
        return []
    events = (frame_event(*frame) for frame in frames.parse_frames(data))
    return [e for e in events if e is not None]


class StepSession:
    """slurmd's connection to one running step's stepd.

    One consumer iterates :meth:`events` (until DONE); others may meanwhile
    write stdin, signal or terminate. Reading events is what makes room for
    more output: an unread session stalls the tasks' writes, not memory.
    """

    def __init__(
        self,
        step_dir: str,
        job: spool.StepJob,
        proc: Stepd,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.step_dir = step_dir
        self.job = job
        self._proc = proc
        self._reader = reader
        self._writer = writer
        self._result: spool.StepResult | None = None

    @property
    def pid(self) -> int:
        """stepd's pid."""
        return self._proc.pid

    @property
    def done(self) -> bool:
        """Whether the step's end was reported."""
        return self._result is not None

    async def events(self) -> AsyncIterator[StepEvent]:
        """The step's events as they happen; the last is DONE (with ``error`` if stepd vanished).

        Yields:
            Each event.
        """
        while self._result is None:
            try:
                kind, task_id, payload = await _read_frame(self._reader)
                event = frame_event(kind, task_id, payload)
                if kind == frames.Kind.DONE:
                    self._result = spool.result_from_json(json.loads(payload))
            except (OSError, EOFError, ValueError, KeyError, TypeError, struct.error) as error:
                yield await self._lost(repr(error))
                return
            if self._result is not None:
                await self._finish(wait=LOST_WAIT)
            if event is not None:
                yield event

    async def write_stdin(self, data: bytes, eof: bool = False, task_id: int | None = None) -> None:
        """Send stdin to the tasks reading slurmd's pipe (dropped once the step is gone).

        Args:
            data: the bytes (may be empty).
            eof: close their stdin after it.
            task_id: one task; None: every task that reads the pipe.
        """
        target = frames.ALL_TASKS if task_id is None else task_id
        for at in range(0, len(data), STDIN_CHUNK):
            self._send(frames.Kind.STDIN, target, data[at : at + STDIN_CHUNK])
        if eof:
            self._send(frames.Kind.STDIN_EOF, target)
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    def signal(self, signum: int, task_id: int | None = None) -> None:
        """Signal the step's tasks and their children (ignored once the step is gone).

        Args:
            signum: the signal.
            task_id: one task's own process; None: every process of the step.
        """
        self._send(
            frames.Kind.SIGNAL,
            frames.ALL_TASKS if task_id is None else task_id,
            frames.SIGNUM.pack(signum),
        )

    def set_window(self, rows: int, cols: int) -> None:
        """Resize the step's pseudo-terminal (ignored by a step without one, or gone).

        Args:
            rows: rows.
            cols: columns.
        """
        self._send(frames.Kind.WINSIZE, frames.ALL_TASKS, frames.WINDOW.pack(rows, cols))

    def terminate(self, kill_wait: int, outcome: str, when: float) -> None:
        """Kill the step: the CANCELLED line, SIGTERM to all, SIGKILL after ``kill_wait``.

        Besides the frame, stepd gets SIGTERM (it then reads ``terminate.json``),
        so the kill does not wait behind stdin stepd has not taken yet.

        Args:
            kill_wait: seconds between SIGTERM and SIGKILL.
            outcome: CANCELLED or TIMEOUT (the line's wording, status.json's outcome).
            when: the decision's time, for the line.
        """
        request = spool.Terminate(outcome, kill_wait, when)
        spool.write_terminate(self.step_dir, request)
        self._send(frames.Kind.TERMINATE, frames.ALL_TASKS, request.to_json())
        self._proc.signal(signal.SIGTERM)

    def outcome(self) -> spool.StepResult:
        """How the step ended (per task too).

        Returns:
            The result.

        Raises:
            RuntimeError: the step has not ended (no DONE yet, no status.json).
        """
        result = self._result or spool.read_status(self.step_dir)
        if result is None:
            raise RuntimeError(f"step {self.job.job_id}.{self.job.step_id} has not ended")
        return result

    def close(self) -> None:
        """Drop the connection (as a slurmd restart does); the step keeps running."""
        self._writer.close()
        self._proc.release()

    def _send(self, kind: frames.Kind, task_id: int, payload: bytes = b"") -> None:
        if not self._writer.is_closing():
            self._writer.write(frames.encode_frame(kind, task_id, payload))

    async def _finish(self, wait: float) -> bool:
        """Close the connection and reap stepd (waiting up to ``wait``); whether it exited."""
        self._writer.close()
        exited = self._proc.exited()
        if not exited and self._proc.pidfd >= 0:
            exited = await wait_readable(self._proc.pidfd, wait)
        self._proc.release()
        return exited

    async def _lost(self, reason: str) -> StepEvent:
        """The DONE that ends events when stepd's connection ended without one."""
        log.error("job=%d step=%d connection to stepd lost: %s", *self._ids(), reason)
        exited = await self._finish(wait=LOST_WAIT)
        result = spool.read_status(self.step_dir)
        if result is None:
            if exited:  # no supervisor is left: its tasks must not run on unwatched
                spool.signal_task_groups(self.step_dir, signal.SIGKILL)
            now = time.time()
            message = spool.STEPD_DIED if exited else f"lost slurmstepd: {reason}"
            result = spool.StepResult(*self._ids(), 0, signal.SIGKILL, now, now, message=message)
        self._result = result
        error = f"connection to slurmstepd lost ({reason}); {result.message or 'it had finished'}"
        return StepEvent(
            EventKind.DONE, -1, exit_code=result.exit_code, signal=result.signal, error=error
        )

    def _ids(self) -> tuple[int, int]:
        return self.job.job_id, self.job.step_id
