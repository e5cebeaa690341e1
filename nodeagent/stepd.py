"""slurmstepd: the supervisor of one batch script, or of one srun step's tasks, on a node.

Started by slurmd as ``python -m nodeagent.stepd JOBDIR`` in a session of
its own, so it and its tasks outlive a restart of slurmd. It reads
``JOBDIR/job.json``, becomes a child subreaper (orphaned descendants come
back to it, so nothing escapes the kill), drops to the job's user and
starts the work. ``job.json``'s ``"mode"`` chooses what:

- batch (the default): opens the output files as the user (waiting a
  moment for a directory that a tool creates right after sbatch, see
  :mod:`nodeagent.stdfiles`), forks the
  script in its own process group, and waits. On SIGTERM it kills the job:
  SIGTERM to every process, SIGKILL after KillWait; the reason
  (``JOBDIR/terminate.json``) decides the line it writes to the job's
  stderr. When the script ends, leftover processes are killed, and
  ``JOBDIR/status.json`` records the outcome for slurmd. When slurmd has
  not touched its alive file for SlurmdTimeout (``fence_after``), the
  controller has declared the node DOWN and requeued the job: stepd kills
  it (outcome NODE_FAIL) so that it never runs beside its next run.
- ``"step"`` (an srun job step, written by :mod:`nodeagent.stepio`): first
  connects, still as root, to slurmd's Unix socket ``JOBDIR/stepio.sock``,
  then starts every task of the step on this node in ONE process group
  (led by the first task, as Slurm's ``job->pgid``), each with its own
  argv, environment, working directory and standard streams (files opened
  as the user, or pipes relayed to and from slurmd as frames). A ``pty``
  task (srun ``--pty``'s task 0) runs instead in a session of its own on a
  pseudo-terminal (:mod:`nodeagent.ptyio`) that is its stdin, stdout and
  stderr: its output is relayed as STDOUT, its input and window size
  (WINSIZE frames) go to the pty's master. Signals go to those groups
  with ``killpg`` and, individually, to any other descendant (a ``setsid``
  escapee, a shell's job), so they reach every task and its children. A
  TERMINATE frame (or SIGTERM with ``terminate.json``) kills the step as a
  batch job is killed, with ``*** STEP J.S ON node CANCELLED AT ... ***``
  on the first task's stderr. Each task's start and exit is reported as it
  happens; a task that ends does not stop the others. After the last task,
  leftovers are killed, the pipes drained, ``status.json`` written
  (per-task results too) and a DONE frame sent. If slurmd goes away the
  step runs on: the frames meant for it are appended to
  ``JOBDIR/lost-output`` (same format, at most LOST_OUTPUT_LIMIT bytes of
  output) and task stdin gets EOF; a terminal is hung up (SIGHUP to its
  session), as nobody can type into it any more.

The frame format (defined here, documented in :mod:`nodeagent.stepio`) is
a 9-byte header ``!BII`` (kind, task id, payload length) then the payload.

Usage (MaxRSS, TotalCPU) is sampled by :mod:`nodeagent.usage` while the
script or the tasks run, and completed with the children's ``getrusage``;
each sample's per-task peaks go to ``JOBDIR/usage.json`` for sstat. A
SIGTERM or SIGKILL sent to a whole step writes its CANCELLED line first, as
Slurm's stepd does.

Imports the standard library, all of it up front: stepd starts for every
job and step, and once it runs as the job's user the interpreter's own
files may be unreadable (a Python under /root); os.wait4 imports
``resource`` lazily. Of our modules, nodeagent.spool (the files it shares
with slurmd), nodeagent.hostsfile (the job's /etc/hosts), nodeagent.ptyio
(a task's terminal),
nodeagent.stdfiles (the standard streams' files) and nodeagent.usage (which
imports psutil only when it first samples).
"""

from __future__ import annotations

import enum
import itertools
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import warnings  # noqa: F401  (os.execvpe imports it lazily, after the drop to the user)
from collections import deque

from nodeagent import hostsfile, ptyio, spool
from nodeagent.stdfiles import (
    DIR_GRACE_SECONDS,
    STREAMS_FAILED,
    StreamsUnavailable,
    open_output,
    open_streams,
)
from nodeagent.usage import UsageSampler, preload_psutil

PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.5
IDLE_SECONDS = 0.25  # a spare waiting this long for work is idle: it loads psutil meanwhile

# --- The wire format between stepd and slurmd (see nodeagent.stepio) -------------------------

PROTOCOL_VERSION = 1
HEADER = struct.Struct("!BII")  # kind, task id, payload length
PID = struct.Struct("!i")  # STARTED payload
EXIT = struct.Struct("!ii")  # EXITED payload head: exit code, signal (then the error text)
SIGNUM = struct.Struct("!i")  # SIGNAL payload
WINDOW = struct.Struct("!HH")  # WINSIZE payload: rows, columns
ALL_TASKS = 0xFFFFFFFF  # the task id of frames about the whole step
MAX_PAYLOAD = 16 << 20
UNIX_PATH_MAX = 108


class Kind(enum.IntEnum):
    """Frame kinds: 1-15 from stepd to slurmd, 16 and up from slurmd to stepd."""

    HELLO = 1
    STARTED = 2
    STDOUT = 3
    STDERR = 4
    EXITED = 5
    DONE = 6
    STDIN = 16
    STDIN_EOF = 17
    SIGNAL = 18
    TERMINATE = 19
    WINSIZE = 20


def encode_frame(kind: int, task_id: int, payload: bytes = b"") -> bytes:
    """One frame, header and payload.

    Args:
        kind: a :class:`Kind`.
        task_id: the task, or ALL_TASKS.
        payload: at most MAX_PAYLOAD bytes.

    Returns:
        The bytes to send.

    Raises:
        ValueError: the payload is too large.
    """
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"frame payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return HEADER.pack(kind, task_id, len(payload)) + payload


def unix_path(directory: str, name: str) -> tuple[str, int]:
    """An AF_UNIX address for ``directory/name``, short enough for sun_path.

    Spool paths can pass the 108-byte limit; then the address goes through
    ``/proc/self/fd/N`` of an O_PATH descriptor of the directory.

    Args:
        directory: the socket's directory.
        name: the socket's file name.

    Returns:
        The address and the descriptor to close once bound/connected (-1: none).
    """
    path = os.path.join(directory, name)
    if len(os.fsencode(path)) < UNIX_PATH_MAX:
        return path, -1
    fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{name}", fd


# --- Shared by both modes ---------------------------------------------------------------------


def _log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%Y-%m-%dT%H:%M:%S')}] stepd: {message}\n")
    sys.stderr.flush()


def become_subreaper() -> None:
    """Make orphaned descendants reparent to this process (Linux only)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        _log("prctl(PR_SET_CHILD_SUBREAPER) failed; orphans may escape")


def drop_privileges(uid: int, gid: int, user: str) -> None:
    """Become the job's user, with its supplementary groups (when running as root).

    Args:
        uid: the job's uid.
        gid: its primary gid.
        user: its name, for the group list.
    """
    if os.getuid() != 0:
        return
    try:
        groups = os.getgrouplist(user, gid)
    except KeyError:
        groups = [gid]
    os.setgroups(groups)
    os.setgid(gid)
    os.setuid(uid)


def descendants(root: int) -> list[tuple[int, int]]:
    """Every process below ``root`` (orphans included when it is their subreaper).

    Args:
        root: the ancestor's pid.

    Returns:
        ``(pid, process group)`` of each, zombies included.
    """
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append((int(entry), int(fields[2])))
    found, todo = [], list(children.get(root, []))
    while todo:
        proc = todo.pop()
        found.append(proc)
        todo.extend(children.get(proc[0], []))
    return found


_CANCEL_WHY = {
    "TIMEOUT": " DUE TO TIME LIMIT",
    "REQUEUE": " DUE TO JOB REQUEUE",
    "PREEMPTED": " DUE TO PREEMPTION",
    "PREEMPT_REQUEUE": " DUE TO PREEMPTION",
    "NODE_FAIL": " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS",
}


def error_line(node: str, text: str) -> bytes:
    """A line of stepd's own in a job's or a task's output: ``slurmstepd-n1: error: ...``.

    Args:
        node: the node's name.
        text: what went wrong.

    Returns:
        The line, encoded.
    """
    return f"slurmstepd-{node}: error: {text}\n".encode()


def _cancel_line(what: str, node: str, request: spool.Terminate) -> bytes:
    """Slurm's ``*** JOB 12 ON n1 CANCELLED AT ... ***`` line (``what`` = "JOB 12", "STEP 12.0")."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(request.time))
    why = _CANCEL_WHY.get(request.outcome, "")
    return error_line(node, f"*** {what} ON {node} CANCELLED AT {stamp}{why} ***")


def _chdir_failed(path: str, error: OSError) -> str:
    return f"couldn't chdir to `{path}': {error.strerror}: going to /tmp instead"


def _exit_of(status: int | None) -> tuple[int, int]:
    """(exit code, signal) of a wait status (None: never ran)."""
    status = status or 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    return code, os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


# --- Batch mode -------------------------------------------------------------------------------


class Step:
    """The running batch script and everything it starts."""

    def __init__(self, jobdir: str, job: spool.BatchJob, usage_fd: int = -1) -> None:
        self.jobdir = jobdir
        self.job = job
        self.pid = 0
        self.err_fd = -1
        self.status: int | None = None
        self.killing: spool.Terminate | None = None  # the terminate request, once made
        self.kill_deadline = float("inf")
        self.start_time = 0.0
        self.usage = UsageSampler(job.acct_freq, per_task=False, record_fd=usage_fd)

    def launch(self) -> None:
        """Fork and exec the script.

        Raises:
            StreamsUnavailable: the script's stdin, stdout or stderr cannot be opened.
            OSError: the fork failed.
        """
        job = self.job
        workdir = job.work_dir
        stdin, out, err = open_streams(job.stdin, job.stdout, job.stderr, job.open_mode == "append")
        self.err_fd = err
        try:
            os.chdir(workdir)
        except OSError as error:
            # Slurm's stepd says it twice: of its own chdir, then of the script's.
            os.write(err, error_line(job.node, _chdir_failed(workdir, error)) * 2)
            os.chdir("/tmp")
        env = dict(job.env)
        argv = list(job.argv)
        self.start_time = time.time()
        pid = os.fork()
        if pid == 0:
            self._exec_child(argv, env, stdin, out, err, job.node)
        self.pid = pid
        self.usage.track(pid, 0)
        for fd in {stdin, out}:
            if fd != err:
                os.close(fd)

    @staticmethod
    def _exec_child(
        argv: list[str], env: dict[str, str], stdin: int, out: int, err: int, node: str
    ) -> None:
        try:
            os.setpgid(0, 0)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.dup2(stdin, 0)
            os.dup2(out, 1)
            os.dup2(err, 2)
            env["SLURM_TASK_PID"] = str(os.getpid())
            os.execve(argv[0], argv, env)
        except OSError as error:
            os.write(2, error_line(node, f"execve(): {argv[0]}: {error.strerror}"))
        os._exit(127)

    def descendants(self) -> list[int]:
        """Every process below this one (orphans included, as we are their subreaper)."""
        return [pid for pid, _ in descendants(os.getpid())]

    def signal_all(self, sig: int) -> None:
        """Send ``sig`` once to every process of the job: the script's group, then the others."""
        group = self.pid if self.status is None else 0  # an ended script's group may be gone
        if group:
            _try(os.killpg, group, sig)
        for pid, pgid in descendants(os.getpid()):
            if pgid != group:
                _try(os.kill, pid, sig)

    def begin_kill(self, request: spool.Terminate) -> None:
        """Kill the job: SIGCONT+SIGTERM now, SIGKILL after KillWait."""
        if self.killing is not None:
            return
        self.killing = request
        line = _cancel_line(f"JOB {self.job.job_id}", self.job.node, request)
        if self.err_fd >= 0:
            _try(os.write, self.err_fd, line)
        self.signal_all(signal.SIGCONT)
        self.signal_all(signal.SIGTERM)
        self.kill_deadline = time.monotonic() + request.kill_wait

    def reap(self) -> None:
        """Collect every exited child; remember the script's own status."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.status = status

    def run(self) -> spool.StepResult:
        """Wait for the script (killing on request), clean up, and say how it ended."""
        while self.status is None:
            self.reap()
            if self.status is not None:
                break
            now = time.monotonic()
            if now >= self.kill_deadline:
                self.signal_all(signal.SIGKILL)
                self.kill_deadline = float("inf")
            if self.killing is None and _slurmd_gone(self.job):
                self.begin_kill(spool.Terminate("NODE_FAIL", 0, time.time()))
            self.usage.sample_if_due(now)
            info = signal.sigtimedwait(_WAITED, min(POLL_SECONDS, self.usage.seconds_left(now)))
            if info is not None and info.si_signo == signal.SIGTERM:
                self.begin_kill(spool.read_terminate(self.jobdir))
        # The script is done: nothing it started may outlive it. Killed, its
        # processes get what is left of KillWait first (an srun says its last);
        # kill_deadline is finite only while that SIGKILL is still to come.
        while time.monotonic() < self.kill_deadline < float("inf") and self.descendants():
            signal.sigtimedwait([signal.SIGCHLD], POLL_SECONDS)
            self.reap()
        deadline = time.monotonic() + 5.0
        while self.descendants() and time.monotonic() < deadline:
            self.signal_all(signal.SIGKILL)
            signal.sigtimedwait([signal.SIGCHLD], 0.1)
            self.reap()
        return self._outcome()

    def _outcome(self) -> spool.StepResult:
        code, sig = _exit_of(self.status)
        # Every process of the job was our child or, orphaned, came back to us: all reaped now.
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return spool.StepResult(
            job_id=self.job.job_id,
            step_id=0,
            exit_code=code,
            signal=sig,
            start_time=self.start_time,
            end_time=time.time(),
            outcome=self.killing.outcome if self.killing else "",
            max_rss=self.usage.max_rss_with(ru.ru_maxrss),
            total_cpu=ru.ru_utime + ru.ru_stime,
        )


_WAITED = (signal.SIGCHLD, signal.SIGTERM)


def _slurmd_gone(job: spool.BatchJob) -> bool:
    """Whether slurmd has not touched its alive file for SlurmdTimeout (``fence_after``)."""
    if not job.fence_after or not job.alive_file:
        return False
    try:
        touched = os.stat(job.alive_file).st_mtime
    except OSError:
        return False
    return time.time() - touched > job.fence_after


def _try(fn: object, *args: object) -> None:
    try:
        fn(*args)  # type: ignore[operator]
    except OSError:
        pass


# --- Step mode: the link to slurmd ------------------------------------------------------------

READ_SIZE = 64 << 10  # one read of a task's pipe (a pipe's default capacity)
OUT_LIMIT = 1 << 20  # frames queued for slurmd before task pipes are left unread
STDIN_LIMIT = 1 << 20  # stdin buffered for tasks before slurmd's frames are left unread
LOST_OUTPUT_LIMIT = 64 << 20  # output kept in lost-output once slurmd is gone
CONNECT_SECONDS = 10.0
FLUSH_SECONDS = 10.0  # for the last frames, once the step is done
CLEANUP_SECONDS = 5.0  # for leftovers to die and pipes to close after the last task


class AgentLink:
    """stepd's end of the connection to slurmd: frames queued out, frames parsed in.

    Without a connection (lost, or closed by slurmd) frames are appended to
    ``lost-output`` instead, in the same format; output (STDOUT/STDERR)
    beyond LOST_OUTPUT_LIMIT bytes is dropped and counted.
    """

    def __init__(self, sock: socket.socket | None, lost_fd: int) -> None:
        self.sock = sock
        self.lost_fd = lost_fd
        self.lost_bytes = 0
        self.dropped_bytes = 0
        self.queued = 0
        self._out: deque[bytes] = deque()
        self._sent = 0  # bytes of _out[0] already sent
        self._in = bytearray()

    def fileno(self) -> int:
        """The socket's descriptor, -1 once lost."""
        return self.sock.fileno() if self.sock is not None else -1

    def send(self, kind: int, task_id: int, payload: bytes = b"") -> None:
        """Queue a frame for slurmd (or keep it in lost-output).

        Args:
            kind: a Kind.
            task_id: the task, or ALL_TASKS.
            payload: the frame's payload.
        """
        frame = encode_frame(kind, task_id, payload)
        if self.sock is None:
            self._keep(frame)
            return
        self._out.append(frame)
        self.queued += len(frame)

    def flush(self) -> None:
        """Send what the socket takes now, without blocking."""
        while self._out and self.sock is not None:
            head = memoryview(self._out[0])[self._sent :]
            buffers: list[bytes | memoryview] = [head, *itertools.islice(self._out, 1, 256)]
            try:
                sent = self.sock.sendmsg(buffers, [], socket.MSG_NOSIGNAL)
            except BlockingIOError:
                return
            except OSError as error:
                self.lose(f"send failed: {error}")
                return
            finally:
                head.release()
            self.queued -= sent
            sent += self._sent
            while self._out and sent >= len(self._out[0]):
                sent -= len(self._out.popleft())
            self._sent = sent

    def receive(self) -> list[tuple[int, int, bytes]]:
        """Read what slurmd sent, without blocking.

        Returns:
            The complete frames received: (kind, task id, payload).
        """
        if self.sock is None:
            return []
        try:
            data = self.sock.recv(READ_SIZE)
        except BlockingIOError:
            return []
        except OSError as error:
            self.lose(f"receive failed: {error}")
            return []
        if not data:
            self.lose("slurmd closed the connection")
            return []
        self._in += data
        frames = []
        while len(self._in) >= HEADER.size:
            kind, task_id, size = HEADER.unpack_from(self._in)
            if size > MAX_PAYLOAD:
                self.lose(f"protocol error: frame of {size} bytes")
                break
            if len(self._in) < HEADER.size + size:
                break
            frames.append((kind, task_id, bytes(self._in[HEADER.size : HEADER.size + size])))
            del self._in[: HEADER.size + size]
        return frames

    def lose(self, reason: str) -> None:
        """Give up the connection; what was queued goes to lost-output.

        Args:
            reason: for stepd's log.
        """
        if self.sock is None:
            return
        _log(f"connection to slurmd lost ({reason}); the step runs on")
        self.sock.close()
        self.sock = None
        # The first frame may be partly delivered; it is kept whole (at most a duplicate).
        for frame in self._out:
            self._keep(frame)
        self._out.clear()
        self._sent = self.queued = 0

    def finish(self, timeout: float) -> None:
        """Send the last frames (waiting up to ``timeout``) and close.

        Args:
            timeout: seconds slurmd has to take them.
        """
        deadline = time.monotonic() + timeout
        while self._out and self.sock is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.lose("slurmd does not read")
                break
            poller = select.poll()
            poller.register(self.sock.fileno(), select.POLLOUT)
            poller.poll(left * 1000)
            self.flush()
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _keep(self, frame: bytes) -> None:
        if frame[0] in (Kind.STDOUT, Kind.STDERR):
            if self.lost_bytes + len(frame) > LOST_OUTPUT_LIMIT:
                self.dropped_bytes += len(frame) - HEADER.size
                return
        try:
            view = memoryview(frame)
            while view:
                view = view[os.write(self.lost_fd, view) :]
            self.lost_bytes += len(frame)
        except OSError as error:
            self.dropped_bytes += len(frame) - HEADER.size
            _log(f"lost-output: {error}")


# --- Step mode: the tasks ---------------------------------------------------------------------

# Python handles these (or ignores SIGPIPE/SIGXFSZ); a task starts with Slurm's defaults.
_TASK_DEFAULTS = (signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ)


class SetupError(Exception):
    """A task could not be set up (a file, a pipe, fork); ``code`` is its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class TaskRun:
    """One task of a step: what to run, stepd's ends of its pipes, how it ended."""

    def __init__(self, desc: spool.TaskJob, cwd: str) -> None:
        self.task_id = desc.task_id
        self.local_id = desc.local_id
        self.argv = list(desc.argv)
        self.env = dict(desc.env)
        self.cwd = desc.cwd or cwd
        self.stdout = desc.stdout  # None: a pipe to slurmd
        self.stderr = desc.stderr
        self.stdin = desc.stdin  # None: a pipe from slurmd
        self.append = desc.append
        self.pty = desc.pty  # srun --pty: task 0's streams are a terminal
        self.terminal: ptyio.Terminal | None = None
        self.deferred_exit: bytes | None = None  # a pty task's EXITED, sent after its output
        self.pid = 0
        self.out_r = self.err_r = self.in_w = -1
        self.stdin_buf = bytearray()
        self.stdin_eof = False
        self.status: int | None = None
        self.rusage: resource.struct_rusage | None = None
        self.code = 0  # exit code when it never ran
        self.error = ""
        self.ended = False

    def result(self) -> spool.TaskResult:
        """The task's entry in status.json."""
        code, sig = _exit_of(self.status) if self.status is not None else (self.code, 0)
        ru = self.rusage
        return spool.TaskResult(
            task_id=self.task_id,
            local_id=self.local_id,
            pid=self.pid,
            exit_code=code,
            signal=sig,
            error=self.error,
            max_rss=ru.ru_maxrss if ru else 0,
            total_cpu=ru.ru_utime + ru.ru_stime if ru else 0.0,
        )


def _could_not_open(what: str, path: str, error: OSError) -> SetupError:
    return SetupError(f"Could not open {what} file {path}: {error.strerror}", error.errno or 1)


def _pipe(nonblocking_end: int) -> tuple[int, int]:
    r, w = os.pipe()
    os.set_blocking((r, w)[nonblocking_end], False)
    return r, w


# Tasks start through posix_spawn (vfork: 7 tasks in ~4 ms where fork took ~16 ms
# on the reference machine) and a /bin/sh that sets what only the task can know
# (SLURM_TASK_PID, its own pid) and gives the descriptor limit back, then execs.
_SHIM = (
    'ulimit -S -n "$SLURM_STEPD_NOFILE"; unset SLURM_STEPD_NOFILE; '
    'SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec "$0" "$@"'
)


def find_program(name: str, path: str) -> str:
    """Where the program of a task is, as execvp would find it.

    Args:
        name: argv[0] as given.
        path: the task's PATH.

    Returns:
        The file to run.

    Raises:
        OSError: not found (ENOENT) or not executable (EACCES).
    """
    candidates = [name] if "/" in name else [os.path.join(d or ".", name) for d in path.split(":")]
    denied = False
    for candidate in candidates:
        if os.path.isfile(candidate):
            if os.access(candidate, os.X_OK):
                return candidate
            denied = True
    code = 13 if denied else 2  # EACCES, ENOENT
    raise OSError(code, os.strerror(code), name)


_NOFILE = resource.getrlimit(resource.RLIMIT_NOFILE)  # the limit tasks get back


class StepSupervisor:
    """The tasks of one srun step on this node, their I/O and their end."""

    def __init__(
        self, stepdir: str, job: spool.StepJob, link: AgentLink, usage_fd: int = -1
    ) -> None:
        self.stepdir = stepdir
        self.job = job
        self.node = job.node
        self.link = link
        self.tasks = [TaskRun(d, job.cwd or "/tmp") for d in job.tasks]
        self.by_id = {t.task_id: t for t in self.tasks}
        self.by_pid: dict[int, TaskRun] = {}
        self.readers: dict[int, tuple[TaskRun, Kind]] = {}  # task pipe -> its task and stream
        self.files: dict[str, int] = {}  # output path -> descriptor, shared by the tasks
        self.files_deadline = 0.0  # until when a missing output directory may still appear
        self.pgid = 0  # the group of the tasks (a pty task has a session of its own)
        self.window = job.window
        self.killing: spool.Terminate | None = None
        self.cancel_said = False  # the CANCELLED line is written once
        self.kill_deadline = float("inf")
        self.cleanup_deadline = float("inf")
        self.next_scan = 0.0
        self.clean = False
        self.link_lost = False
        self.start_time = 0.0
        self.usage = UsageSampler(job.acct_freq, per_task=True, record_fd=usage_fd)
        self.wake_r, wake_w = _pipe(0)
        os.set_blocking(wake_w, False)
        # The signals stay blocked until the tasks are forked; then they wake poll().
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        for sig in _WAITED:
            signal.signal(sig, lambda *_: None)

    # Start

    def launch(self) -> None:
        """Open every task's streams (output files once per path), then start them all."""
        self.start_time = time.time()
        self.files_deadline = time.monotonic() + DIR_GRACE_SECONDS
        ready = []
        for task in self.tasks:
            try:
                ready.append((task, *self._streams(task)))
            except SetupError as error:
                self._never_ran(task, str(error), error.code)
        cwd = self.job.cwd or "/tmp"
        try:
            os.chdir(cwd)
        except OSError as error:  # then each task says it again, as with Slurm's stepd
            self._say_error(_chdir_failed(cwd, error))
        for task, fds, close in ready:
            try:
                self._spawn(task, fds)
            except OSError as error:
                self._never_ran(task, f"spawn: {error.strerror}", error.errno or 1)
            for fd in close:
                os.close(fd)

    def _streams(self, task: TaskRun) -> tuple[tuple[int, int, int], list[int]]:
        """The child's stdin/stdout/stderr, and which of them to close after the fork."""
        if task.pty:
            return self._terminal(task)
        close: list[int] = []
        try:
            if task.stdin is None:
                stdin, task.in_w = _pipe(1)
            else:
                try:
                    stdin = os.open(task.stdin, os.O_RDONLY | os.O_CLOEXEC)
                except OSError as error:
                    raise _could_not_open("stdin", task.stdin, error) from error
            close.append(stdin)
            out = self._output(task, task.stdout, Kind.STDOUT, close)
            err = self._output(task, task.stderr, Kind.STDERR, close)
        except (SetupError, OSError) as error:
            for fd in [*close, task.in_w, task.out_r, task.err_r]:
                if fd >= 0:
                    os.close(fd)
            self.readers = {fd: v for fd, v in self.readers.items() if v[0] is not task}
            task.in_w = task.out_r = task.err_r = -1
            if isinstance(error, SetupError):
                raise
            raise SetupError(f"pipe: {error.strerror}", error.errno or 1) from error
        return (stdin, out, err), close

    def _terminal(self, task: TaskRun) -> tuple[tuple[int, int, int], list[int]]:
        """A pty task's terminal: the master is read and written here, the slave is its stdio."""
        try:
            terminal = ptyio.Terminal(*self.window)
        except OSError as error:
            raise SetupError(f"pty: {error.strerror}", error.errno or 1) from error
        task.terminal = terminal
        task.out_r = terminal.master
        task.in_w = os.dup(terminal.master)  # closing the task's stdin must not hang it up
        self.readers[terminal.master] = (task, Kind.STDOUT)
        return (terminal.slave,) * 3, [terminal.slave]

    def _output(self, task: TaskRun, path: str | None, kind: Kind, close: list[int]) -> int:
        if path is None:
            r, w = _pipe(0)
            self.readers[r] = (task, kind)
            if kind == Kind.STDOUT:
                task.out_r = r
            else:
                task.err_r = r
            close.append(w)
            return w
        if path not in self.files:
            try:
                self.files[path] = open_output(path, task.append, self.files_deadline)
            except OSError as error:
                raise _could_not_open(kind.name.lower(), path, error) from error
        return self.files[path]

    def _spawn(self, task: TaskRun, fds: tuple[int, int, int]) -> None:
        """Start one task in the step's process group (the first task leads it).

        A pty task starts a session of its own instead, whose controlling
        terminal is its pty (see :mod:`nodeagent.ptyio`).
        """
        try:
            program = find_program(task.argv[0], task.env.get("PATH", os.defpath))
        except OSError as error:
            message = f"execve(): {task.argv[0]}: {error.strerror}"
            # On the task's own stderr, before its exit, and only there (srun says no more).
            self._write_stderr(task, error_line(self.node, message))
            self._never_ran(task, message, error.errno or 1, said=True)  # exit code: errno
            return
        try:
            os.chdir(task.cwd)
        except OSError as error:
            self._say_error(_chdir_failed(task.cwd, error))
            os.chdir("/tmp")
        env = {**task.env, "SLURM_STEPD_NOFILE": str(_NOFILE[0])}
        argv = ["/bin/sh", "-c", _SHIM, program, *task.argv[1:]]
        if task.terminal is None:
            pid = os.posix_spawn(
                "/bin/sh",
                argv,
                env,
                file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(fds)],
                setpgroup=self.pgid,
                setsigmask=(),
                setsigdef=_TASK_DEFAULTS,
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
                setsigdef=_TASK_DEFAULTS,
            )
        task.pid = pid
        self.by_pid[pid] = task
        self.usage.track(pid, task.task_id)
        self.link.send(Kind.STARTED, task.task_id, PID.pack(pid))

    def _never_ran(self, task: TaskRun, message: str, code: int, said: bool = False) -> None:
        """A task that could not start ends with ``code``; srun says why unless stepd ``said``."""
        _log(f"task {task.task_id}: {message}")
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
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WAITED)
        while not self._finished():
            self._poll(self._timeout())
            if self.link.sock is None and not self.link_lost:
                self._on_link_lost()
            self.reap()
            now = time.monotonic()
            if now >= self.kill_deadline:
                self.signal_step(signal.SIGKILL)
                self.kill_deadline = float("inf")
            if all(t.ended for t in self.tasks):
                self._clean_up(now)
            else:
                self.usage.sample_if_due(now)
        for fd in self.files.values():
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
        return self.clean and not self.readers and all(t.ended for t in self.tasks)

    def _timeout(self) -> float:
        timeout = 1.0
        if self.kill_deadline < float("inf"):
            timeout = min(timeout, max(0.0, self.kill_deadline - time.monotonic()))
        if all(t.ended for t in self.tasks):
            if not self.clean:
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
            for fd in self.readers:
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
        entry = self.readers.get(fd)
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
        task, _ = self.readers.pop(fd)
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
                        _try(ptyio.set_window, task.out_r, rows, cols)
            else:
                _log(f"ignoring a frame of unknown kind {kind}")
        except (ValueError, struct.error) as error:
            _log(f"ignoring a bad frame of kind {kind}: {error}")

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
                _try(os.kill, task.pid, sig)

    # End

    def reap(self) -> None:
        """Collect every exited child; report the tasks among them."""
        while True:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            task = self.by_pid.get(pid)
            if task is not None and not task.ended:
                self._task_exited(task, status, rusage)

    def _task_exited(self, task: TaskRun, status: int, rusage: resource.struct_rusage) -> None:
        """Relay what the task wrote before it ended, then its exit."""
        task.status, task.rusage, task.ended = status, rusage, True
        for fd in (task.out_r, task.err_r):
            drained = 0
            while drained < OUT_LIMIT and self._read(fd):
                drained += READ_SIZE
        self._close_stdin(task)
        code, sig = _exit_of(status)
        self._report_exit(task, EXIT.pack(code, sig) + task.error.encode())

    def signal_step(self, sig: int) -> None:
        """Send ``sig`` to the step's process groups and every other descendant.

        Args:
            sig: the signal.
        """
        procs = descendants(os.getpid())
        groups = set(self.groups)
        # Only while a member lives: an empty group's id could be someone else's.
        for group in groups & {pgid for _, pgid in procs}:
            _try(os.killpg, group, sig)
        for pid, pgid in procs:
            if pgid not in groups:
                _try(os.kill, pid, sig)

    def begin_kill(self, request: spool.Terminate) -> None:
        """Kill the step: the CANCELLED line, SIGCONT+SIGTERM now, SIGKILL after KillWait.

        Args:
            request: why (CANCELLED, TIMEOUT...), when, and the KillWait.
        """
        if self.killing is not None or all(t.ended for t in self.tasks):
            return
        self.killing = request
        self._say_cancelled(request)
        self.signal_step(signal.SIGCONT)
        self.signal_step(signal.SIGTERM)
        self.kill_deadline = time.monotonic() + request.kill_wait

    def _say_cancelled(self, request: spool.Terminate) -> None:
        """The ``*** STEP J.S ON node CANCELLED AT ... ***`` line, once, on task 0's stderr.

        As Slurm's, only the step's first node (the one running task 0) says it.

        Args:
            request: ``outcome`` and ``time`` of the kill.
        """
        first_node = any(t.task_id == 0 for t in self.tasks)
        if self.cancel_said or not first_node or all(t.ended for t in self.tasks):
            return
        self.cancel_said = True
        step = f"STEP {self.job.job_id}.{self.job.step_text}"
        line = _cancel_line(step, self.node, request)
        self._write_stderr(next(t for t in self.tasks if t.task_id == 0), line)

    def _say_error(self, text: str) -> None:
        """An error of stepd's own, on the stderr of the node's first task (Slurm's stepd's)."""
        self._write_stderr(self.tasks[0], error_line(self.node, text))

    def _write_stderr(self, task: TaskRun, data: bytes) -> None:
        """Something of stepd's own on a task's stderr (a pipe's frame, or its file)."""
        if task.stderr is None:
            self.link.send(Kind.STDERR, task.task_id, data)
        elif task.stderr in self.files:
            _try(os.write, self.files[task.stderr], data)

    def _clean_up(self, now: float) -> None:
        """After the last task: kill what is left, give the pipes time to close."""
        if self.cleanup_deadline == float("inf"):
            self.cleanup_deadline = now + CLEANUP_SECONDS
            for task in self.tasks:
                self._close_stdin(task)
        if now >= self.cleanup_deadline:
            if self.readers:
                _log("output pipes still open after the last task; closing them")
            for fd in list(self.readers):
                for _ in range(OUT_LIMIT // READ_SIZE):  # what is in the pipe still goes out
                    if not self._read(fd):
                        break
                if fd in self.readers:
                    self._close_reader(fd)
            self.clean = True
        elif not _has_children():
            self.clean = True  # as a subreaper, no child means no descendant at all
        elif now >= self.next_scan or not self.readers:
            self.next_scan = now + 0.05
            procs = descendants(os.getpid())
            for pid, _ in procs:
                _try(os.kill, pid, signal.SIGKILL)
            self.clean = not procs

    def _outcome(self) -> spool.StepResult:
        results = tuple(t.result() for t in self.tasks)
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return spool.StepResult(
            job_id=self.job.job_id,
            step_id=self.job.step_id,
            exit_code=max((r.exit_code for r in results), default=0),
            signal=max((r.signal for r in results), default=0),
            start_time=self.start_time,
            end_time=time.time(),
            outcome=self.killing.outcome if self.killing else "",
            max_rss=self.usage.max_rss_with(ru.ru_maxrss),
            total_cpu=ru.ru_utime + ru.ru_stime,
            tasks=results,
            lost_output=self.link.lost_bytes,
            dropped_output=self.link.dropped_bytes,
        )


def _has_children() -> bool:
    """Whether this process has any child, alive or not yet reaped."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def connect_agent(stepdir: str, name: str) -> socket.socket:
    """Connect to slurmd's socket in the step's directory.

    Args:
        stepdir: the step's spool directory.
        name: the socket's file name there.

    Returns:
        The connected, non-blocking socket.

    Raises:
        OSError: nobody listens there.
    """
    address, dir_fd = unix_path(stepdir, name)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(address)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    finally:
        if dir_fd >= 0:
            os.close(dir_fd)
    return sock


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
        _log(f"cannot reach slurmd: {error}")
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
    # Tasks get the usual limit back; stepd needs six descriptors a task.
    resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE[1], _NOFILE[1]))
    drop_privileges(job.uid, job.gid, job.user)
    os.umask(job.umask)
    supervisor = StepSupervisor(stepdir, job, link, usage_fd)
    supervisor.launch()
    # The groups slurmd may kill as a last resort.
    os.write(pgid_fd, "".join(f"{group}\n" for group in supervisor.groups).encode())
    result = supervisor.run()
    spool.write_status(status_fd, result)
    link.send(Kind.DONE, ALL_TASKS, result.to_json())
    link.finish(FLUSH_SECONDS)
    return 0


def _spare_directory() -> str:
    """The directory slurmd hands this spare ("" when slurmd went away).

    Launches that come back to back find the spare waiting; one idle for a
    moment imports psutil for usage sampling (as root, before any drop), so
    that neither a launch nor a running step waits for that import.
    """
    if not select.select([sys.stdin], [], [], IDLE_SECONDS)[0]:
        preload_psutil()
    return sys.stdin.readline().strip()


def _redirect_stdio(jobdir: str) -> None:
    """A spare's stdin becomes /dev/null, its stdout and stderr the job's stepd.log."""
    null = os.open(os.devnull, os.O_RDONLY)
    log_fd = os.open(
        os.path.join(jobdir, spool.LOG_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
    )
    os.dup2(null, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(null)
    os.close(log_fd)


def main(argv: list[str]) -> int:
    """Run one batch script or srun step; the exit status is for slurmd's log only.

    Args:
        argv: ``[JOBDIR]``, or ``["--spare"]``: start now, imports done, and
            wait for slurmd to write the directory's path on stdin (this
            takes a Python start-up off every launch).

    Returns:
        0 when the status was recorded (or a spare was never used).
    """
    if argv == ["--spare"]:
        jobdir = _spare_directory()
        if not jobdir:
            return 0  # slurmd went away without using this spare
        _redirect_stdio(jobdir)
    else:
        jobdir = argv[0]
    # SIGTERM (kill request) and SIGCHLD are taken synchronously in Step.run.
    signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    job = spool.read_job(jobdir)
    spool.write_stepd_pid(jobdir)
    become_subreaper()
    if job.hosts_file:
        try:
            hostsfile.enter_namespace(job.hosts_file)
        except OSError as error:
            _log(f"node names will not resolve in the job: {error}")
    # Files slurmd reads are opened while still root; the job's user only writes them.
    status_fd = spool.open_private(os.path.join(jobdir, spool.STATUS_FILE))
    usage_fd = spool.open_private(os.path.join(jobdir, spool.USAGE_FILE))
    if isinstance(job, spool.StepJob):
        return run_step(jobdir, job, status_fd, usage_fd)
    task_fd = spool.open_private(os.path.join(jobdir, spool.TASK_PID_FILE))
    drop_privileges(job.uid, job.gid, job.user)
    os.umask(job.umask)
    step = Step(jobdir, job, usage_fd)
    try:
        step.launch()
        os.write(task_fd, f"{step.pid}\n".encode())
        result = step.run()
    except OSError as error:
        _log(f"launch failed: {error}")
        now = time.time()
        code, sig = STREAMS_FAILED if isinstance(error, StreamsUnavailable) else (1, 0)
        result = spool.StepResult(job.job_id, 0, code, sig, now, now, "LAUNCH_FAILED", str(error))
    spool.write_status(status_fd, result)
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    # No interpreter teardown: slurmd reports a step done when its stepd has exited,
    # and tearing down (psutil's modules included) took ~10 ms of every step.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
