"""stepd's batch mode: run a job's batch script, kill it on request, record its end.

Imports the standard library, nodeagent.spool, nodeagent.stdfiles,
nodeagent.usage and nodeagent.stepd.common.
"""

from __future__ import annotations

import os
import resource
import signal
import time
import warnings  # noqa: F401  (os.execvpe imports it lazily, after the drop to the user)

from nodeagent import spool
from nodeagent.stdfiles import open_streams
from nodeagent.stepd.common import (
    WAITED,
    cancel_line,
    chdir_failed,
    descendants,
    error_line,
    exit_of,
    try_call,
)
from nodeagent.usage import UsageSampler

POLL_SECONDS = 0.5


class Step:
    """The running batch script and everything it starts."""

    def __init__(
        self, jobdir: str, job: spool.BatchJob, usage_fd: int = -1, killed_fd: int = -1
    ) -> None:
        self.jobdir = jobdir
        self.job = job
        self.killed_fd = killed_fd  # KILLED_FILE, where a kill's SIGTERM is said sent
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
            os.write(err, error_line(job.node, chdir_failed(workdir, error)) * 2)
            os.chdir("/tmp")
        env = dict(job.env)
        argv = [os.path.join(self.jobdir, spool.SCRIPT_FILE), *job.argv]
        self.start_time = time.time()
        pid = os.fork()
        if pid == 0:
            self._exec_child(argv, env, stdin, out, err, job.node)
        # The child makes its group too, but a kill may come before it has: then
        # killpg finds no group yet, and the child may have made it by the time
        # signal_all looks for the others; the signal reached neither.
        try_call(os.setpgid, pid, pid)
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

    def signal_all(self, *sigs: int) -> None:
        """Send each signal once to every process of the job: the script's group, then the others.

        The processes are found before the first signal, so that a second follows
        the first at once: SIGTERM comes while its SIGCONT is still being handled.
        """
        group = self.pid if self.status is None else 0  # an ended script's group may be gone
        others = [pid for pid, pgid in descendants(os.getpid()) if pgid != group]
        for sig in sigs:
            if group:
                try_call(os.killpg, group, sig)
            for pid in others:
                try_call(os.kill, pid, sig)

    def begin_kill(self, request: spool.Terminate) -> None:
        """Kill the job: SIGCONT+SIGTERM now, SIGKILL after KillWait."""
        if self.killing is not None:
            return
        self.killing = request
        line = cancel_line(f"JOB {self.job.job_id}", self.job.node, request)
        if self.err_fd >= 0:
            try_call(os.write, self.err_fd, line)
        self.signal_all(signal.SIGCONT, signal.SIGTERM)
        if self.killed_fd >= 0:
            try_call(spool.mark_killed, self.killed_fd)
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
            info = signal.sigtimedwait(WAITED, min(POLL_SECONDS, self.usage.seconds_left(now)))
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
        code, sig = exit_of(self.status)
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


def _slurmd_gone(job: spool.BatchJob) -> bool:
    """Whether slurmd has not touched its alive file for SlurmdTimeout (``fence_after``)."""
    if not job.fence_after or not job.alive_file:
        return False
    try:
        touched = os.stat(job.alive_file).st_mtime
    except OSError:
        return False
    return time.time() - touched > job.fence_after
