"""stepd's entry point: a job's or a step's directory, or a spare that waits for one.

Imports the standard library, all of it up front: stepd starts for every
job and step, and once it runs as the job's user the interpreter's own
files may be unreadable (a Python under /root); os.wait4 imports
``resource`` lazily. Of our modules, nodeagent.spool (the files it shares
with slurmd), nodeagent.hostsfile (the job's /etc/hosts), nodeagent.ptyio
(a task's terminal), nodeagent.stdfiles (the standard streams' files),
nodeagent.usage (which imports psutil only when it first samples) and the
modules of nodeagent.stepd.
"""

from __future__ import annotations

import os
import select
import signal
import sys

from nodeagent import hostsfile, spool
from nodeagent.stepd.common import WAITED, become_subreaper, log
from nodeagent.stepd.supervisor import run_batch, run_step
from nodeagent.usage import preload_psutil

IDLE_SECONDS = 0.25  # a spare waiting this long for work is idle: it loads psutil meanwhile


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
    # SIGTERM (kill request) and SIGCHLD wait until the supervisor takes them.
    signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    job = spool.read_job(jobdir)
    spool.write_stepd_pid(jobdir)
    become_subreaper()
    if job.hosts_file:
        try:
            hostsfile.enter_namespace(job.hosts_file)
        except OSError as error:
            log(f"node names will not resolve in the job: {error}")
    # Files slurmd reads are opened while still root; the job's user only writes them.
    status_fd = spool.open_private(os.path.join(jobdir, spool.STATUS_FILE))
    usage_fd = spool.open_private(os.path.join(jobdir, spool.USAGE_FILE))
    if isinstance(job, spool.StepJob):
        return run_step(jobdir, job, status_fd, usage_fd)
    return run_batch(jobdir, job, status_fd, usage_fd)
