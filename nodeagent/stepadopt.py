"""Steps slurmd follows through stepd's files: srun steps after a restart, batch scripts always.

A step's stepd outlives slurmd (it runs in a session of its own); once its
connection to slurmd is gone it appends the frames meant for slurmd to
``lost-output`` and, at the end, writes ``status.json`` (see
:mod:`nodeagent.stepd`). A new slurmd cannot reconnect to it, so it follows
the step through those files instead: it tails ``lost-output`` while stepd
lives and takes the outcome from ``status.json`` when stepd exits. Every
event is kept, so an srun that lost the old slurmd and attaches again
(``AttachStep``) gets all the tasks did since, however late it comes.

A batch script's stepd never connects to slurmd (its streams are files):
slurmd follows it this way from its launch (:mod:`nodeagent.launcher`),
waiting on stepd's exit alone, as it keeps no ``lost-output``.

Signals and kills go to the processes directly (stepd reads
``terminate.json`` on SIGTERM); stdin cannot reach the tasks any more
(stepd closed their pipes, and hung up a terminal, when slurmd went).

Imports nodeagent.spool, nodeagent.stepio, nodeagent.stepd.frames, minislurm.stepids
and the standard library; no gRPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import struct
import time
from collections.abc import AsyncIterator

from minislurm.stepids import BATCH_STEP, step_id_text
from nodeagent import spool, stepio
from nodeagent.stepd import frames

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # how often lost-output is read while stepd lives


class AdoptedStep:
    """A step of this node followed through its stepd's files (stepd alive or not).

    Args:
        step_dir: the step's spool directory.
        job_id: the job.
        step_id: the step (BATCH_STEP: a batch script, whose directory is its job's).
        pid: stepd's pid, when slurmd just started it; else its ``stepd.pid``'s.
    """

    def __init__(self, step_dir: str, job_id: int, step_id: int, pid: int | None = None) -> None:
        self.step_dir = step_dir
        self.job_id = job_id
        self.step_id = step_id
        self.pid = (spool.stepd_pid(step_dir) or 0) if pid is None else pid
        # Opened now, not when the follower first runs: by then a stepd that ended may
        # have been reaped and its pid given to another process, which a pid-based kill
        # would hit. A pidfd stays with the process it was opened on.
        self._pidfd = -1
        if self.pid:
            with contextlib.suppress(OSError):
                self._pidfd = os.pidfd_open(self.pid)
        self._log: list[stepio.StepEvent] = []
        self._changed = asyncio.Event()
        self._result: spool.StepResult | None = None

    @property
    def done(self) -> bool:
        """Whether the step has ended."""
        return self._result is not None

    async def events(self) -> AsyncIterator[stepio.StepEvent]:
        """Follow the step to its end (one consumer: the node's report); the last is DONE.

        Yields:
            Each event since the old slurmd went.
        """
        tail = _Tail(os.path.join(self.step_dir, spool.LOST_OUTPUT_FILE))
        poll = None if self.step_id == BATCH_STEP else POLL_SECONDS  # nothing to tail
        try:
            exited = self._pidfd < 0
            while True:
                for event in tail.read():
                    self._keep(event)
                    yield event
                if exited:
                    break
                exited = await stepio.wait_readable(self._pidfd, poll)
        finally:
            if self._pidfd >= 0:
                os.close(self._pidfd)
                self._pidfd = -1
        for event in self._end():
            self._keep(event)
            yield event

    def ended(self) -> spool.StepResult:
        """The outcome of a step whose stepd is gone (its tasks killed if it left none).

        Returns:
            The result.
        """
        if self._result is None:
            for event in self._end():
                self._keep(event)
        assert self._result is not None
        return self._result

    async def replay(self) -> AsyncIterator[stepio.StepEvent]:
        """Every event since the old slurmd went, then each as it happens, to DONE.

        Yields:
            The events, in order.
        """
        at = 0
        while True:
            while at < len(self._log):
                at += 1
                yield self._log[at - 1]
            if self.done:
                return
            await self._changed.wait()

    async def write_stdin(self, data: bytes, eof: bool = False, task_id: int | None = None) -> None:
        """Dropped: the tasks' stdin was closed when the old slurmd went.

        Args:
            data: the bytes.
            eof: close their stdin after it.
            task_id: one task, or None.
        """

    def set_window(self, rows: int, cols: int) -> None:
        """Dropped: stepd hung the step's terminal up when the old slurmd went.

        Args:
            rows: rows.
            cols: columns.
        """

    def signal(self, signum: int, task_id: int | None = None) -> None:
        """Signal the step's tasks (their process groups).

        Args:
            signum: the signal.
            task_id: ignored: every task of the step gets it.
        """
        if not self.done:
            spool.signal_task_groups(self.step_dir, signum)

    def terminate(self, kill_wait: int, outcome: str, when: float) -> None:
        """Kill the step as stepd kills it: ``terminate.json``, then SIGTERM to stepd.

        Args:
            kill_wait: seconds between SIGTERM and SIGKILL.
            outcome: CANCELLED or TIMEOUT.
            when: the decision's time, for the line.
        """
        if self.done or not self.pid:
            return
        spool.write_terminate(self.step_dir, spool.Terminate(outcome, kill_wait, when))
        self.signal_stepd(signal.SIGTERM)

    def signal_stepd(self, signum: int) -> None:
        """Send stepd itself a signal, through its pidfd (never a pid another process took).

        Args:
            signum: the signal.
        """
        if self._pidfd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signum)

    def outcome(self) -> spool.StepResult:
        """How the step ended.

        Returns:
            The result.

        Raises:
            RuntimeError: the step has not ended.
        """
        if self._result is None:
            raise RuntimeError(f"step {self.job_id}.{self.step_id} has not ended")
        return self._result

    def _keep(self, event: stepio.StepEvent) -> None:
        self._log.append(event)
        self._changed.set()
        self._changed = asyncio.Event()

    def _end(self) -> list[stepio.StepEvent]:
        """The step's last events: each task's exit not seen yet, then DONE.

        They come from status.json; when stepd left none it died, and so do
        the tasks it left (SIGKILL).
        """
        result = spool.read_status(self.step_dir)
        error = ""
        if result is None:
            # No supervisor is left: its tasks must not run on unwatched.
            spool.signal_task_groups(self.step_dir, signal.SIGKILL)
            log.error(
                "job=%d step=%s stepd left no status; its log:\n%s",
                self.job_id,
                step_id_text(self.step_id),
                spool.log_tail(self.step_dir, 4000),
            )
            now = time.time()
            died = [
                spool.TaskResult(t, 0, 0, 0, signal.SIGKILL, spool.STEPD_DIED)
                for t in self._tasks()
            ]
            result = spool.StepResult(
                self.job_id,
                self.step_id,
                0,
                signal.SIGKILL,
                now,
                now,
                message=spool.STEPD_DIED,
                tasks=tuple(died),
            )
            error = spool.STEPD_DIED
        self._result = result
        seen = {e.task_id for e in self._log if e.kind is stepio.EventKind.EXITED}
        exits = [
            stepio.StepEvent(
                stepio.EventKind.EXITED,
                t.task_id,
                exit_code=t.exit_code,
                signal=t.signal,
                error=t.error,
            )
            for t in result.tasks
            if t.task_id not in seen
        ]
        done = stepio.StepEvent(
            stepio.EventKind.DONE, -1, exit_code=result.exit_code, signal=result.signal, error=error
        )
        return [*exits, done]

    def _tasks(self) -> list[int]:
        """The ids of the step's tasks on this node (from job.json)."""
        try:
            job = spool.read_job(self.step_dir)
        except (OSError, ValueError):
            return []
        return [t.task_id for t in job.tasks] if isinstance(job, spool.StepJob) else []


class _Tail:
    """The frames appended to a file since the last read (a torn last frame waits)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.rest = b""

    def read(self) -> list[stepio.StepEvent]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        self.offset += len(data)
        data = self.rest + data
        parsed = frames.parse_frames(data)
        self.rest = data[sum(frames.HEADER.size + len(p) for _, _, p in parsed) :]
        events = []
        for kind, task_id, payload in parsed:
            if kind == frames.Kind.DONE:  # the adopted step's DONE comes from status.json
                continue
            try:
                event = stepio.frame_event(kind, task_id, payload)
            except (struct.error, ValueError) as error:
                log.warning("%s: a malformed frame: %s", self.path, error)
                continue
            if event is not None:
                events.append(event)
        return events
