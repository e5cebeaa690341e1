"""stepd's supervisor: a step's tasks on this node, their I/O and signals, to their end.

An srun step's tasks, or a batch script run as the one task of its job's
batch step (:func:`run_batch`). What the batch script does differently is
Slurm's: its kill says ``*** JOB 12 ...`` and is recorded in the
``killed`` file, its leftovers get what remains of KillWait to say their
last (an srun inside), usage is sampled for the whole job rather than per
task, output or input files that cannot be opened end it as a launch
failure (``0:53``), and it is killed when slurmd has been gone for
SlurmdTimeout (the controller has requeued it elsewhere by then).

Imports the standard library, nodeagent.spool, nodeagent.ptyio,
nodeagent.stdfiles, nodeagent.usage, nodeagent.cgroups, minislurm.states
(OOM_SIGNAL) and the modules of nodeagent.stepd.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import struct
import time

from minislurm.states import OOM_SIGNAL
from nodeagent import ptyio, spool
from nodeagent.cgroups import oom_kills
from nodeagent.gpuusage import visible
from nodeagent.stdfiles import DIR_GRACE_SECONDS, STREAMS_FAILED
from nodeagent.stepd.common import (
    WAITED,
    cancel_line,
    chdir_failed,
    descendants,
    drop_privileges,
    error_line,
    exit_of,
    log,
    try_call,
)
from nodeagent.stepd.frames import ALL_TASKS, EXIT, PID, PROTOCOL_VERSION, SIGNUM, WINDOW, Kind
from nodeagent.stepd.link import (
    FLUSH_SECONDS,
    OUT_LIMIT,
    READ_SIZE,
    STDIN_LIMIT,
    AgentLink,
    connect_agent,
)
from nodeagent.stepd.tasks import (
    NOFILE,
    SHIM,
    TASK_DEFAULTS,
    SetupError,
    TaskRun,
    TaskStreams,
    find_program,
    pipe,
)
from nodeagent.stepd.taskscripts import task_epilog, task_prolog
from nodeagent.usage import UsageSampler

CLEANUP_SECONDS = 5.0  # for leftovers to die and pipes to close after the last task
OUT_OF_MEMORY = "OUT_OF_MEMORY"  # the outcome of a step killed for its memory


class StepSupervisor:
    """The tasks of one srun step on this node, their I/O and their end."""

    def __init__(
        self,
        stepdir: str,
        job: spool.StepJob,
        link: AgentLink,
        usage_fd: int = -1,
        batch: spool.BatchJob | None = None,
        killed_fd: int = -1,
    ) -> None:
        self.stepdir = stepdir
        self.job = job
        self.batch = batch  # the batch script's job.json, when the step is that script
        self.killed_fd = killed_fd  # KILLED_FILE, where a batch kill's SIGTERM is said sent
        self.launch_error: spool.StepResult | None = None  # a batch script that never started
        self.node = job.node
        self.link = link
        self.tasks = [TaskRun(d, job.cwd or "/tmp") for d in job.tasks]
        self.by_id = {t.task_id: t for t in self.tasks}
        self.by_pid: dict[int, TaskRun] = {}
        self.streams = TaskStreams(job.window)
        self.pgid = 0  # the group of the tasks (a pty task has a session of its own)
        self.killing: spool.Terminate | None = None
        self.cancel_said = False  # the CANCELLED line is written once
        self.kill_deadline = float("inf")
        self.cleanup_deadline = float("inf")
        self.next_scan = 0.0
        self.clean = False
        self.link_lost = False
        self.start_time = 0.0
        self.usage = UsageSampler(
            job.acct_freq,
            per_task=batch is None,
            record_fd=usage_fd,
            mem_limit=job.mem_limit,
            gpu_source=job.gpu_usage,
        )
        self.out_of_memory = False  # killed for holding more than its memory
        self.wake_r, wake_w = pipe(0)
        os.set_blocking(wake_w, False)
        # The signals stay blocked until the tasks are forked; then they wake poll().
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        for sig in WAITED:
            signal.signal(sig, lambda *_: None)

    # Start

    def launch(self) -> None:
        """Open every task's streams (output files once per path), then start them all."""
        self.start_time = time.time()
        self.streams.files_deadline = time.monotonic() + DIR_GRACE_SECONDS
        ready = []
        for task in self.tasks:
            try:
                ready.append((task, *self.streams.open(task)))
            except SetupError as error:
                self._launch_failed(STREAMS_FAILED, str(error))
                self._never_ran(task, str(error), error.code)
        cwd = self.job.cwd or "/tmp"
        try:
            os.chdir(cwd)
        except OSError as error:  # then each task says it again, as with Slurm's stepd
            self._say_error(chdir_failed(cwd, error))
        for task, fds, close in ready:
            try:
                self._spawn(task, fds)
            except OSError as error:
                self._launch_failed((1, 0), f"spawn: {error.strerror}")
                self._never_ran(task, f"spawn: {error.strerror}", error.errno or 1)
            for fd in close:
                os.close(fd)

    def _spawn(self, task: TaskRun, fds: tuple[int, int, int]) -> None:
        """Start one task in the step's process group (the first task leads it).

        A pty task starts a session of its own instead, whose controlling
        terminal is its pty (see :mod:`nodeagent.ptyio`).
        """
        try:
            program = find_program(task.argv[0], task.env.get("PATH", os.defpath))
        except OSError as error:
            message = f"execve(): {error.filename}: {error.strerror}"
            # On the task's own stderr, before its exit, and only there (srun says no more).
            self._write_stderr(task, error_line(self.node, message))
            self._never_ran(task, message, error.errno or 1, said=True)  # exit code: errno
            return
        try:
            os.chdir(task.cwd)
        except OSError as error:
            self._say_error(chdir_failed(task.cwd, error))
            os.chdir("/tmp")
        for script in filter(None, (self.job.task_prolog, self.job.user_task_prolog)):
            prolog = task_prolog(script, task.env, task.cwd)
            if prolog.error:
                self._never_ran(task, prolog.error, 1)
                return
            task.env = prolog.env
            if prolog.printed and task.terminal is None:
                try_call(os.write, fds[1], prolog.printed)
        env = {**task.env, "SLURM_STEPD_NOFILE": str(NOFILE[0])}
        argv = ["/bin/sh", "-c", SHIM, program, *task.argv[1:]]
        if task.terminal is None:
            pid = os.posix_spawn(
                "/bin/sh",
                argv,
                env,
                file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(fds)],
                setpgroup=self.pgid,
                setsigmask=(),
                setsigdef=TASK_DEFAULTS,
            )
            self.pgid = self.pgid or pid
        else:
            pid = os.posix_spawn(
                "/bin/sh",
                argv,
                env,
                file_actions=task.terminal.file_actions(),
                setsid=True,
                setsigmask=(),
                setsigdef=TASK_DEFAULTS,
            )
        task.pid = pid
        self.by_pid[pid] = task
        self.usage.track(pid, task.task_id, visible(task.env))
        self.link.send(Kind.STARTED, task.task_id, PID.pack(pid))

    def _launch_failed(self, status: tuple[int, int], message: str) -> None:
        """A batch script that could not be started ends as a launch failure (Slurm's)."""
        if self.batch is not None:
            now = time.time()
            self.launch_error = spool.StepResult(
                self.job.job_id, self.job.step_id, *status, now, now, "LAUNCH_FAILED", message
            )

    def _never_ran(self, task: TaskRun, message: str, code: int, said: bool = False) -> None:
        """A task that could not start ends with ``code``; srun says why unless stepd ``said``."""
        log(f"task {task.task_id}: {message}")
        task.error, task.code, task.ended = message, code, True
        self._report_exit(task, EXIT.pack(code, 0) + (b"" if said else message.encode()))

    def _report_exit(self, task: TaskRun, payload: bytes) -> None:
        """Send a task's EXITED; a pty task's once its terminal's output is all read.

        What a task wrote on a pty reaches the master a moment after it was
        written, possibly after the task was reaped; srun stops reading a
        task at its EXITED. So that frame waits until the master is closed
        (at EIO, when no process holds the terminal any more, or when the
        step's clean-up closes it).
        """
        if task.terminal is not None and task.out_r >= 0:
            task.deferred_exit = payload
        else:
            self.link.send(Kind.EXITED, task.task_id, payload)

    @property
    def groups(self) -> list[int]:
        """The step's process groups: the tasks' one and each pty task's session."""
        sessions = [t.pid for t in self.tasks if t.terminal is not None and t.pid]
        return [group for group in (self.pgid, *sessions) if group]

    # Run

    def run(self) -> spool.StepResult:
        """Relay I/O and signals until every task has ended and its output is out.

        Returns:
            The step's status (what status.json holds).
        """
        signal.pthread_sigmask(signal.SIG_UNBLOCK, WAITED)
        while not self._finished():
            self._poll(self._timeout())
            if self.link.sock is None and not self.link_lost:
                self._on_link_lost()
            self.reap()
            now = time.monotonic()
            if now >= self.kill_deadline:
                self.signal_step(signal.SIGKILL)
                self.kill_deadline = float("inf")
            if self.killing is None and self.batch is not None and _slurmd_gone(self.batch):
                self.begin_kill(spool.Terminate("NODE_FAIL", 0, time.time()))
            if all(t.ended for t in self.tasks):
                self._clean_up(now)
            else:
                self.usage.sample_if_due(now)
                if self.usage.over_limit and not self.out_of_memory:
                    self.out_of_memory = True
                    self._say_error(memory_exceeded(self.job, self.batch is not None, self.usage))
                    self.signal_step(signal.SIGKILL)
        for fd in self.streams.files.values():
            os.close(fd)
        self.reap()
        return self._outcome()

    def _on_link_lost(self) -> None:
        """Nobody feeds stdin any more: EOF once what was buffered is written.

        A terminal is hung up instead (its master closed): nobody can type
        into it any more, and a shell waiting there would wait forever.
        """
        self.link_lost = True
        for task in self.tasks:
            if task.terminal is not None and task.out_r >= 0:
                self._close_reader(task.out_r)
            task.stdin_eof = True
            if not task.stdin_buf:
                self._close_stdin(task)

    def _finished(self) -> bool:
        return self.clean and not self.streams.readers and all(t.ended for t in self.tasks)

    def _timeout(self) -> float:
        timeout = 1.0
        if self.kill_deadline < float("inf"):
            timeout = min(timeout, max(0.0, self.kill_deadline - time.monotonic()))
        if all(t.ended for t in self.tasks):
            if not self.clean and not self._lingering(time.monotonic()):
                timeout = min(timeout, 0.05)
        else:
            timeout = min(timeout, self.usage.seconds_left(time.monotonic()))
        return timeout

    def _poll(self, timeout: float) -> None:
        """Wait for one round of events (signals, slurmd, pipes) and handle them."""
        poller = select.poll()
        poller.register(self.wake_r, select.POLLIN)
        sock = self.link.fileno()
        if sock >= 0:
            stdin_full = sum(len(t.stdin_buf) for t in self.tasks) >= STDIN_LIMIT
            poller.register(
                sock, (0 if stdin_full else select.POLLIN) | select.POLLOUT * bool(self.link.queued)
            )
        if self.link.queued < OUT_LIMIT:
            for fd in self.streams.readers:
                poller.register(fd, select.POLLIN)
        writers = {t.in_w: t for t in self.tasks if t.in_w >= 0 and t.stdin_buf}
        for fd in writers:
            poller.register(fd, select.POLLOUT)
        for fd, events in poller.poll(timeout * 1000):
            if fd == self.wake_r:
                self._on_signals()
            elif fd == sock:
                if events & ~select.POLLOUT:
                    for frame in self.link.receive():
                        self._on_frame(*frame)
            elif fd in writers:
                self._write_stdin(writers[fd])
            else:
                self._read(fd)
        self.link.flush()

    def _on_signals(self) -> None:
        try:
            received = os.read(self.wake_r, 512)
        except BlockingIOError:
            return
        if signal.SIGTERM in received:
            self.begin_kill(spool.read_terminate(self.stepdir))

    def _read(self, fd: int) -> bool:
        """Relay one read of a task's pipe; close it at EOF. Returns whether data came."""
        entry = self.streams.readers.get(fd)
        if entry is None:
            return False
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self._close_reader(fd)
            return False
        self.link.send(entry[1], entry[0].task_id, data)
        return True

    def _close_reader(self, fd: int) -> None:
        """Stop reading a task's stream; a pty task's deferred EXITED goes out after it."""
        task, _ = self.streams.readers.pop(fd)
        os.close(fd)
        if fd == task.out_r:
            task.out_r = -1
        elif fd == task.err_r:
            task.err_r = -1
        if task.deferred_exit is not None and task.out_r < 0:
            self.link.send(Kind.EXITED, task.task_id, task.deferred_exit)
            task.deferred_exit = None

    def _write_stdin(self, task: TaskRun) -> None:
        if task.in_w < 0:
            return
        try:
            written = os.write(task.in_w, bytes(task.stdin_buf[:READ_SIZE]))
        except BlockingIOError:
            return
        except OSError:  # the task closed its stdin
            self._close_stdin(task)
            return
        del task.stdin_buf[:written]
        if task.stdin_eof and not task.stdin_buf:
            self._close_stdin(task)

    def _close_stdin(self, task: TaskRun) -> None:
        if task.in_w >= 0:
            os.close(task.in_w)
        task.in_w = -1
        task.stdin_buf.clear()
        task.stdin_eof = True

    def _on_frame(self, kind: int, task_id: int, payload: bytes) -> None:
        """Act on one frame from slurmd (bad ones are logged and ignored)."""
        targets = self.tasks if task_id == ALL_TASKS else [self.by_id.get(task_id)]
        tasks = [t for t in targets if t is not None]
        try:
            if kind == Kind.STDIN:
                for task in tasks:
                    if task.in_w >= 0 and not task.stdin_eof:
                        task.stdin_buf += payload
            elif kind == Kind.STDIN_EOF:
                for task in tasks:
                    task.stdin_eof = True
                    if not task.stdin_buf:
                        self._close_stdin(task)
            elif kind == Kind.SIGNAL:
                self._signal_frame(task_id, tasks, SIGNUM.unpack(payload)[0])
            elif kind == Kind.TERMINATE:
                self.begin_kill(spool.Terminate.from_json(payload))
            elif kind == Kind.WINSIZE:
                rows, cols = WINDOW.unpack(payload)
                for task in tasks:
                    if task.terminal is not None and task.out_r >= 0:
                        try_call(ptyio.set_window, task.out_r, rows, cols)
            else:
                log(f"ignoring a frame of unknown kind {kind}")
        except (ValueError, struct.error) as error:
            log(f"ignoring a bad frame of kind {kind}: {error}")

    def _signal_frame(self, task_id: int, tasks: list[TaskRun], sig: int) -> None:
        if not 0 < sig < signal.NSIG:
            raise ValueError(f"no signal {sig}")
        if task_id == ALL_TASKS:
            if sig in (signal.SIGTERM, signal.SIGKILL):  # scancel J.S, srun's abort: as Slurm
                self._say_cancelled(spool.Terminate("CANCELLED", 30, time.time()))
            self.signal_step(sig)
            return
        for task in tasks:  # one task: its own process only (its children share the group)
            if task.pid and not task.ended:
                try_call(os.kill, task.pid, sig)

    # End

    def reap(self) -> None:
        """Collect every exited child; report the tasks among them, in task order.

        Tasks reaped together are reported one after another, as Slurm's
        stepd reports them in one message: srun says those with one status
        in one line (``tasks 0-1: Killed``).
        """
        ended = []
        while True:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            task = self.by_pid.get(pid)
            if task is not None and not task.ended:
                ended.append((task, status, rusage))
        # The OOM killer of the step's cgroup: said before the ends it explains.
        kills = oom_kills(self.job.cgroup) if ended and self.job.cgroup is not None else 0
        if kills and not self.out_of_memory:
            self.out_of_memory = True
            self._say_error(oom_killed(self.job, kills))
        for task, status, rusage in sorted(ended, key=lambda e: e[0].task_id):
            self._task_exited(task, status, rusage)

    def _task_exited(self, task: TaskRun, status: int, rusage: resource.struct_rusage) -> None:
        """Relay what the task wrote before it ended, then its exit."""
        task.status, task.rusage, task.ended = status, rusage, True
        for fd in (task.out_r, task.err_r):
            drained = 0
            while drained < OUT_LIMIT and self._read(fd):
                drained += READ_SIZE
        self._close_stdin(task)
        for script in filter(None, (self.job.user_task_epilog, self.job.task_epilog)):
            task_epilog(script, task.env, task.cwd)
        code, sig = exit_of(status)
        if self.out_of_memory and self.job.cgroup is not None:
            code, sig = 0, OOM_SIGNAL  # Slurm's SIG_OOM: srun says "Out Of Memory"
        self._report_exit(task, EXIT.pack(code, sig) + task.error.encode())

    def signal_step(self, *sigs: int) -> None:
        """Send each signal to the step's process groups and every other descendant.

        Args:
            sigs: the signals, in order; the processes are found once, before the first.
        """
        procs = descendants(os.getpid())
        groups = set(self.groups)
        # Only while a member lives: an empty group's id could be someone else's.
        live = groups & {pgid for _, pgid in procs}
        others = [pid for pid, pgid in procs if pgid not in groups]
        for sig in sigs:
            for group in live:
                try_call(os.killpg, group, sig)
            for pid in others:
                try_call(os.kill, pid, sig)

    def begin_kill(self, request: spool.Terminate) -> None:
        """Kill the step: the CANCELLED line, SIGCONT+SIGTERM now, SIGKILL after KillWait.

        Args:
            request: why (CANCELLED, TIMEOUT...), when, and the KillWait.
        """
        if self.killing is not None or all(t.ended for t in self.tasks):
            return
        self.killing = request
        self._say_cancelled(request)
        self.signal_step(signal.SIGCONT, signal.SIGTERM)
        if self.killed_fd >= 0:
            try_call(spool.mark_killed, self.killed_fd)
        self.kill_deadline = time.monotonic() + request.kill_wait

    def _say_cancelled(self, request: spool.Terminate) -> None:
        """The ``*** STEP J.S ON node CANCELLED AT ... ***`` line, once, on task 0's stderr.

        As Slurm's, only the step's first node (the one running task 0) says it;
        a batch script's says ``JOB J``.

        Args:
            request: ``outcome`` and ``time`` of the kill.
        """
        first_node = any(t.task_id == 0 for t in self.tasks)
        if self.cancel_said or not first_node or all(t.ended for t in self.tasks):
            return
        self.cancel_said = True
        if self.batch is not None:
            what = f"JOB {self.job.job_id}"
        else:
            what = f"STEP {self.job.job_id}.{self.job.step_text}"
        line = cancel_line(what, self.node, request)
        self._write_stderr(next(t for t in self.tasks if t.task_id == 0), line)

    def _say_error(self, text: str) -> None:
        """An error of stepd's own, on the stderr of the node's first task (Slurm's stepd's)."""
        self._write_stderr(self.tasks[0], error_line(self.node, text))

    def _write_stderr(self, task: TaskRun, data: bytes) -> None:
        """Something of stepd's own on a task's stderr (a pipe's frame, or its file)."""
        if task.stderr is None:
            self.link.send(Kind.STDERR, task.task_id, data)
        elif task.stderr in self.streams.files:
            try_call(os.write, self.streams.files[task.stderr], data)

    def _lingering(self, now: float) -> bool:
        """Whether a killed batch script's leftovers still have KillWait to end by themselves.

        The script (a shell) ends at its SIGTERM; an srun it started says its
        last before its SIGKILL, as in Slurm.
        """
        return self.batch is not None and now < self.kill_deadline < float("inf")

    def _clean_up(self, now: float) -> None:
        """After the last task: kill what is left, give the pipes time to close."""
        if self._lingering(now) and _has_children():
            return
        if self.cleanup_deadline == float("inf"):
            self.cleanup_deadline = now + CLEANUP_SECONDS
            for task in self.tasks:
                self._close_stdin(task)
        if now >= self.cleanup_deadline:
            if self.streams.readers:
                log("output pipes still open after the last task; closing them")
            for fd in list(self.streams.readers):
                for _ in range(OUT_LIMIT // READ_SIZE):  # what is in the pipe still goes out
                    if not self._read(fd):
                        break
                if fd in self.streams.readers:
                    self._close_reader(fd)
            self.clean = True
        elif not _has_children():
            self.clean = True  # as a subreaper, no child means no descendant at all
        elif now >= self.next_scan or not self.streams.readers:
            self.next_scan = now + 0.05
            procs = descendants(os.getpid())
            for pid, _ in procs:
                try_call(os.kill, pid, signal.SIGKILL)
            self.clean = not procs

    def _outcome(self) -> spool.StepResult:
        if self.launch_error is not None:
            return self.launch_error
        results = tuple(t.result() for t in self.tasks)
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        code = max((r.exit_code for r in results), default=0)
        sig = max((r.signal for r in results), default=0)
        outcome = self.killing.outcome if self.killing else ""
        if self.out_of_memory and not self.killing:
            outcome = OUT_OF_MEMORY
        return spool.StepResult(
            job_id=self.job.job_id,
            step_id=self.job.step_id,
            exit_code=code,
            signal=sig,
            start_time=self.start_time,
            end_time=time.time(),
            outcome=outcome,
            max_rss=self.usage.max_rss_with(ru.ru_maxrss),
            total_cpu=ru.ru_utime + ru.ru_stime,
            tasks=results,
            lost_output=self.link.lost_bytes,
            dropped_output=self.link.dropped_bytes,
        )


def memory_exceeded(job: spool.StepJob, batch: bool, usage: UsageSampler) -> str:
    """Slurm's words for a step killed for its memory (KiB): the step ends OUT_OF_MEMORY."""
    what = f"Job {job.job_id}" if batch else f"Step {job.job_id}.{job.step_text}"
    return f"{what} exceeded memory limit ({usage.rss_now} > {usage.mem_limit}), being killed"


def oom_killed(job: spool.StepJob, kills: int) -> str:
    """Slurm's words for a step whose cgroup's limit had processes killed: it ends OUT_OF_MEMORY."""
    events = "event" if kills == 1 else "events"
    return (
        f"Detected {kills} oom_kill {events} in StepId={job.job_id}.{job.step_text}. "
        "Some of the step tasks have been OOM Killed."
    )


def _slurmd_gone(job: spool.BatchJob) -> bool:
    """Whether slurmd has not touched its alive file for SlurmdTimeout (``fence_after``)."""
    if not job.fence_after or not job.alive_file:
        return False
    try:
        touched = os.stat(job.alive_file).st_mtime
    except OSError:
        return False
    return time.time() - touched > job.fence_after


def _has_children() -> bool:
    """Whether this process has any child, alive or not yet reaped."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def run_step(stepdir: str, job: spool.StepJob, status_fd: int, usage_fd: int) -> int:
    """Run an srun step's tasks on this node (the ``"mode": "step"`` of job.json).

    Args:
        stepdir: the step's spool directory.
        job: its job.json.
        status_fd: status.json, opened as root.
        usage_fd: usage.json, opened as root.

    Returns:
        0 when the status was recorded after running the tasks, 1 when the
        step could not start (no connection to slurmd).
    """
    lost_fd = spool.open_private(os.path.join(stepdir, spool.LOST_OUTPUT_FILE), append=True)
    pgid_fd = spool.open_private(os.path.join(stepdir, spool.TASK_PID_FILE))
    try:
        sock = connect_agent(stepdir, job.socket)
    except OSError as error:
        log(f"cannot reach slurmd: {error}")
        now = time.time()
        never = spool.StepResult(
            job.job_id, job.step_id, 1, 0, now, now, "LAUNCH_FAILED", str(error)
        )
        spool.write_status(status_fd, never)
        return 1
    link = AgentLink(sock, lost_fd)
    link.send(
        Kind.HELLO,
        ALL_TASKS,
        json.dumps({"version": PROTOCOL_VERSION, "pid": os.getpid()}).encode(),
    )
    link.flush()
    result = _supervise(StepSupervisor(stepdir, job, link, usage_fd), pgid_fd)
    spool.write_status(status_fd, result)
    link.send(Kind.DONE, ALL_TASKS, result.to_json())
    link.finish(FLUSH_SECONDS)
    return 0


def run_batch(jobdir: str, job: spool.BatchJob, status_fd: int, usage_fd: int) -> int:
    """Run a batch script as the one task of its job's batch step (job.json's default mode).

    Its stepd has no connection to slurmd: slurmd follows it through its
    files (stepd's pid, ``task.pid``, ``killed``, ``status.json``).

    Args:
        jobdir: the job's spool directory.
        job: its job.json.
        status_fd: status.json, opened as root.
        usage_fd: usage.json, opened as root.

    Returns:
        0 once the status is recorded.
    """
    pgid_fd = spool.open_private(os.path.join(jobdir, spool.TASK_PID_FILE))
    killed_fd = spool.open_private(os.path.join(jobdir, spool.KILLED_FILE))
    link = AgentLink(None, -1)
    supervisor = StepSupervisor(jobdir, job.as_step(jobdir), link, usage_fd, job, killed_fd)
    spool.write_status(status_fd, _supervise(supervisor, pgid_fd))
    return 0


def _supervise(supervisor: StepSupervisor, pgid_fd: int) -> spool.StepResult:
    """Become the job's user, start the tasks, say their process groups, and run to the end."""
    job = supervisor.job
    # Tasks get the usual limit back; stepd needs six descriptors a task.
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE[1], NOFILE[1]))
    drop_privileges(job.uid, job.gid, job.user)
    os.umask(job.umask)
    supervisor.launch()
    # The groups slurmd may kill as a last resort.
    os.write(pgid_fd, "".join(f"{group}\n" for group in supervisor.groups).encode())
    return supervisor.run()
