"""A step's tasks in stepd: what each runs, its streams, and how it is started.

Imports the standard library, nodeagent.ptyio, nodeagent.spool,
nodeagent.stdfiles, nodeagent.stepd.common and nodeagent.stepd.frames.
"""

from __future__ import annotations

import os
import resource
import signal

from nodeagent import ptyio, spool
from nodeagent.stdfiles import open_output
from nodeagent.stepd.common import exit_of
from nodeagent.stepd.frames import Kind

# Python handles these (or ignores SIGPIPE/SIGXFSZ); a task starts with Slurm's defaults.
TASK_DEFAULTS = (signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ)


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
        code, sig = exit_of(self.status) if self.status is not None else (self.code, 0)
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


def could_not_open(what: str, path: str, error: OSError) -> SetupError:
    return SetupError(f"Could not open {what} file {path}: {error.strerror}", error.errno or 1)


def pipe(nonblocking_end: int) -> tuple[int, int]:
    r, w = os.pipe()
    os.set_blocking((r, w)[nonblocking_end], False)
    return r, w


# Tasks start through posix_spawn (vfork: 7 tasks in ~4 ms where fork took ~16 ms
# on the reference machine) and a /bin/sh that sets what only the task can know
# (SLURM_TASK_PID, its own pid) and gives the descriptor limit back, then execs.
SHIM = (
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
        OSError: not found (ENOENT) or not executable (EACCES); ENOENT too
            for a script whose ``#!`` interpreter does not exist (its
            ``filename`` is then Slurm's ``bad interpreter(LINE)``).
    """
    candidates = [name] if "/" in name else [os.path.join(d or ".", name) for d in path.split(":")]
    denied = False
    for candidate in candidates:
        if os.path.isfile(candidate):
            if os.access(candidate, os.X_OK):
                missing = _missing_interpreter(candidate)
                if missing:
                    raise OSError(2, os.strerror(2), f"bad interpreter({missing})")
                return candidate
            denied = True
    code = 13 if denied else 2  # EACCES, ENOENT
    raise OSError(code, os.strerror(code), name)


def _missing_interpreter(program: str) -> str:
    """A script's ``#!`` line when the interpreter it names does not exist, else "".

    execve fails with ENOENT then, and Slurm's stepd names the line, not the script.
    """
    try:
        with open(program, "rb") as f:
            head = f.readline(4096)
    except OSError:
        return ""
    line = head[2:].strip() if head.startswith(b"#!") else b""
    if not line or os.path.exists(line.split()[0]):
        return ""
    return line.decode(errors="replace")


NOFILE = resource.getrlimit(resource.RLIMIT_NOFILE)  # the limit tasks get back


class TaskStreams:
    """The standard streams of a step's tasks: output files shared by path, pipes stepd reads."""

    def __init__(self, window: tuple[int, int]) -> None:
        self.window = window  # a pty's rows and columns at launch
        self.readers: dict[int, tuple[TaskRun, Kind]] = {}  # task pipe -> its task and stream
        self.files: dict[str, int] = {}  # output path -> descriptor, shared by the tasks
        self.files_deadline = 0.0  # until when a missing output directory may still appear

    def open(self, task: TaskRun) -> tuple[tuple[int, int, int], list[int]]:
        """A task's stdin/stdout/stderr, and which of them to close once it is started.

        Args:
            task: the task.

        Returns:
            The three descriptors the task gets, and those stepd closes after the start.

        Raises:
            SetupError: a file, a pipe or the terminal could not be opened.
        """
        if task.pty:
            return self._terminal(task)
        close: list[int] = []
        try:
            if task.stdin is None:
                stdin, task.in_w = pipe(1)
            else:
                try:
                    stdin = os.open(task.stdin, os.O_RDONLY | os.O_CLOEXEC)
                except OSError as error:
                    raise could_not_open("stdin", task.stdin, error) from error
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
            r, w = pipe(0)
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
                raise could_not_open(kind.name.lower(), path, error) from error
        return self.files[path]
