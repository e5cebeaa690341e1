"""stepd's entry point: a job's or a step's directory, or a fork server that starts stepds.

Imports the standard library, all of it up front: stepd starts for every
job and step, and once it runs as the job's user the interpreter's own
files may be unreadable (a Python under /root); os.wait4 imports
``resource`` lazily. Of our modules, nodeagent.spool (the files it shares
with slurmd), nodeagent.hostsfile (the job's /etc/hosts), nodeagent.ptyio
(a task's terminal), nodeagent.stdfiles (the standard streams' files),
nodeagent.usage (psutil, which the fork server imports up front), nodeagent.cgroups (the
step's cgroups) and the modules of nodeagent.stepd.

The fork server (``--fork-server``) is how slurmd starts stepds: a Python
start-up and stepd's imports cost 40-60 ms of CPU and ~20 MB each, a fork
of the server ~1 ms and the pages it writes. slurmd sends it a directory
on the socket that is its stdin; it forks a stepd for it, in a session of
its own, and sends back the child's pid and a pidfd. It reaps its children
(slurmd follows them by pidfd and reads how they ended from their
directory) and exits when slurmd closes the socket; the stepds it started
run on.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
import traceback

from nodeagent import cgroups, hostsfile, spool
from nodeagent.stepd.common import WAITED, become_subreaper, log
from nodeagent.stepd.supervisor import run_batch, run_step
from nodeagent.usage import preload_psutil

REAP_SECONDS = 0.5  # how often an idle fork server reaps its ended children
FORK_SERVER = "--fork-server"


def _redirect_stdio(jobdir: str) -> None:
    """A forked stepd's stdin becomes /dev/null, its stdout and stderr the directory's stepd.log."""
    null = os.open(os.devnull, os.O_RDONLY)
    log_fd = os.open(
        os.path.join(jobdir, spool.LOG_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
    )
    os.dup2(null, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(null)
    os.close(log_fd)


def _reap() -> None:
    """Reap every ended child (their ends are read from their directories)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve_forks() -> int:
    """Fork a stepd for each directory slurmd sends, until slurmd closes the socket.

    Returns:
        0.
    """
    preload_psutil()
    channel = socket.socket(fileno=0)
    while True:
        if not select.select([channel], [], [], REAP_SECONDS)[0]:
            _reap()
            continue
        message = channel.recv(4096)
        if not message:
            return 0  # slurmd went away; the stepds started run on
        jobdir = message.decode()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the stepd: its own session, its directory's log
            status = 1
            try:
                channel.close()
                os.setsid()
                _redirect_stdio(jobdir)
                status = run(jobdir)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(channel, [str(pid).encode()], [pidfd])
        finally:
            os.close(pidfd)
        _reap()


def main(argv: list[str]) -> int:
    """Run one batch script or srun step, or serve forks.

    Args:
        argv: ``[JOBDIR]``, or ``["--fork-server"]`` (see the module's text).

    Returns:
        0 when the status was recorded (the exit status is for slurmd's log only).
    """
    if argv == [FORK_SERVER]:
        return serve_forks()
    return run(argv[0])


def run(jobdir: str) -> int:
    """Run the batch script or step of a directory to its end.

    Args:
        jobdir: the directory holding its job.json.

    Returns:
        0 when the status was recorded.
    """
    # SIGTERM (kill request) and SIGCHLD wait until the supervisor takes them.
    signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    job = spool.read_job(jobdir)
    spool.write_stepd_pid(jobdir)
    if job.cgroup is not None:  # before any task: they start in stepd's cgroups
        try:
            cgroups.enter(job.cgroup, os.getpid())
        except OSError as error:
            log(f"task/cgroup: not confined: {error.strerror or error}")
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
