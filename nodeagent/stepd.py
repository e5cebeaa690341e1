"""slurmstepd: the supervisor of one job's batch script on a node.

Started by slurmd as ``python -m nodeagent.stepd JOBDIR`` in a session of
its own, so it and its tasks outlive a restart of slurmd. It reads
``JOBDIR/job.json``, becomes a child subreaper (orphaned descendants come
back to it, so nothing escapes the kill), drops to the job's user, opens
the output files as that user, forks the script in its own process group,
and waits. On SIGTERM it kills the job: SIGTERM to every process, SIGKILL
after KillWait; the reason (``JOBDIR/terminate.json``) decides the line it
writes to the job's stderr. When the script ends, leftover processes are
killed, and ``JOBDIR/status.json`` records the outcome for slurmd.

Imports only the standard library: it starts for every job.
"""

from __future__ import annotations

import json
import os
import resource  # noqa: F401  (see below)
import signal
import sys
import time

# Everything is imported up front: once stepd runs as the job's user, the
# interpreter's own files may be unreadable (a Python under /root), and
# os.wait4 imports ``resource`` lazily.

PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.5


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


def _open_output(path: str, mode: int) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
    if mode == 0:
        flags |= os.O_TRUNC
    return os.open(path, flags, 0o666)


def open_streams(job: dict[str, object]) -> tuple[int, int, int]:
    """Open the script's stdin, stdout and stderr as the job's user.

    Args:
        job: the job description.

    Returns:
        Three file descriptors (stderr may be the stdout one).

    Raises:
        OSError: a file cannot be opened.
    """
    stdout, stderr = str(job["stdout"]), str(job["stderr"])
    append = 1 if job.get("open_mode") == "append" else 0
    out = _open_output(stdout, append)
    err = out if stderr == stdout else _open_output(stderr, append)
    stdin = os.open(str(job["stdin"]), os.O_RDONLY | os.O_CLOEXEC)
    return stdin, out, err


class Step:
    """The running batch script and everything it starts."""

    def __init__(self, jobdir: str, job: dict[str, object]) -> None:
        self.jobdir = jobdir
        self.job = job
        self.pid = 0
        self.err_fd = -1
        self.status: int | None = None
        self.rusage: object | None = None
        self.killing: dict[str, object] | None = None  # the terminate request, once made
        self.kill_deadline = float("inf")
        self.start_time = 0.0

    def launch(self) -> None:
        """Fork and exec the script.

        Raises:
            OSError: the output files cannot be opened.
        """
        workdir = str(self.job["work_dir"])
        stdin, out, err = open_streams(self.job)
        self.err_fd = err
        try:
            os.chdir(workdir)
        except OSError as error:
            os.write(
                err,
                f"slurmstepd: error: couldn't chdir to `{workdir}': "
                f"{error.strerror}: going to /tmp instead\n".encode(),
            )
            os.chdir("/tmp")
        env = {str(k): str(v) for k, v in dict(self.job["env"]).items()}  # type: ignore[call-overload]
        argv = [str(a) for a in list(self.job["argv"])]  # type: ignore[call-overload]
        self.start_time = time.time()
        pid = os.fork()
        if pid == 0:
            self._exec_child(argv, env, stdin, out, err)
        self.pid = pid
        for fd in {stdin, out}:
            if fd != err:
                os.close(fd)

    @staticmethod
    def _exec_child(argv: list[str], env: dict[str, str], stdin: int, out: int, err: int) -> None:
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
            os.write(2, f"slurmstepd: error: execve(): {argv[0]}: {error.strerror}\n".encode())
        os._exit(127)

    def descendants(self) -> list[int]:
        """Every process below this one (orphans included, as we are their subreaper)."""
        me = os.getpid()
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
        found, todo = [], list(children.get(me, []))
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def signal_all(self, sig: int) -> None:
        """Send ``sig`` to the script's process group and every other descendant."""
        if self.status is None:
            _try(os.killpg, self.pid, sig)
        for pid in self.descendants():
            _try(os.kill, pid, sig)

    def begin_kill(self, request: dict[str, object]) -> None:
        """Kill the job: SIGCONT+SIGTERM now, SIGKILL after KillWait."""
        if self.killing is not None:
            return
        self.killing = request
        node = str(self.job["node"])
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(float(request["time"])))  # type: ignore[arg-type]
        why = " DUE TO TIME LIMIT" if request.get("outcome") == "TIMEOUT" else ""
        line = (
            f"slurmstepd-{node}: error: *** JOB {self.job['job_id']} ON {node} "
            f"CANCELLED AT {stamp}{why} ***\n"
        )
        if self.err_fd >= 0:
            _try(os.write, self.err_fd, line.encode())
        self.signal_all(signal.SIGCONT)
        self.signal_all(signal.SIGTERM)
        self.kill_deadline = time.monotonic() + float(request.get("kill_wait", 30))  # type: ignore[arg-type]

    def reap(self) -> None:
        """Collect every exited child; remember the script's own status."""
        while True:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.status, self.rusage = status, rusage

    def run(self) -> dict[str, object]:
        """Wait for the script (killing on request), clean up, and say how it ended."""
        while self.status is None:
            self.reap()
            if self.status is not None:
                break
            if time.monotonic() >= self.kill_deadline:
                self.signal_all(signal.SIGKILL)
                self.kill_deadline = float("inf")
            info = signal.sigtimedwait(_WAITED, POLL_SECONDS)
            if info is not None and info.si_signo == signal.SIGTERM:
                self.begin_kill(_terminate_request(self.jobdir))
        # The script is done: nothing it started may outlive it.
        deadline = time.monotonic() + 5.0
        while self.descendants() and time.monotonic() < deadline:
            self.signal_all(signal.SIGKILL)
            signal.sigtimedwait([signal.SIGCHLD], 0.1)
            self.reap()
        return self._outcome()

    def _outcome(self) -> dict[str, object]:
        status = self.status or 0
        ru = self.rusage
        return {
            "job_id": self.job["job_id"],
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0,
            "start_time": self.start_time,
            "end_time": time.time(),
            "outcome": str(self.killing.get("outcome", "")) if self.killing else "",
            "max_rss": getattr(ru, "ru_maxrss", 0),
            "total_cpu": getattr(ru, "ru_utime", 0.0) + getattr(ru, "ru_stime", 0.0),
        }


_WAITED = (signal.SIGCHLD, signal.SIGTERM)


def _terminate_request(jobdir: str) -> dict[str, object]:
    """Why slurmd asked for the kill (``terminate.json``), CANCELLED when unsaid."""
    try:
        with open(os.path.join(jobdir, "terminate.json")) as f:
            request: dict[str, object] = json.load(f)
    except (OSError, ValueError):
        request = {"outcome": "CANCELLED", "time": time.time(), "kill_wait": 30}
    return request


def _try(fn: object, *args: object) -> None:
    try:
        fn(*args)  # type: ignore[operator]
    except OSError:
        pass


def main(argv: list[str]) -> int:
    """Run one batch step; the exit status is for slurmd's log only.

    Args:
        argv: ``[JOBDIR]``.

    Returns:
        0 when the status was recorded.
    """
    jobdir = argv[0]
    # SIGTERM (kill request) and SIGCHLD are taken synchronously in Step.run.
    signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    with open(os.path.join(jobdir, "job.json")) as f:
        job = json.load(f)
    with open(os.path.join(jobdir, "stepd.pid"), "w") as f:
        f.write(f"{os.getpid()}\n")
    become_subreaper()
    # Files slurmd reads are opened while still root; the job's user only writes them.
    status_fd = os.open(
        os.path.join(jobdir, "status.json"),
        os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
        0o644,
    )
    task_fd = os.open(
        os.path.join(jobdir, "task.pid"),
        os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
        0o644,
    )
    drop_privileges(int(job["uid"]), int(job["gid"]), str(job["user"]))
    os.umask(int(job.get("umask", 0o022)))
    step = Step(jobdir, job)
    try:
        step.launch()
        os.write(task_fd, f"{step.pid}\n".encode())
        result = step.run()
    except OSError as error:
        _log(f"launch failed: {error}")
        now = time.time()
        result = {
            "job_id": job["job_id"],
            "exit_code": 1,
            "signal": 0,
            "outcome": "LAUNCH_FAILED",
            "message": str(error),
            "start_time": now,
            "end_time": now,
        }
    os.write(status_fd, json.dumps(result).encode())
    os.fsync(status_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
