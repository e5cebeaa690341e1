"""Starting stepds: forked by a fork server, so that launches do not wait for Python.

Starting ``python -m nodeagent.stepd`` costs 40-60 ms of CPU on the
reference machine (the interpreter and stepd's imports) and ~20 MB; a
thousand jobs starting at once on an emulated cluster would start a
thousand interpreters. slurmd keeps one stepd fork server (see
:mod:`nodeagent.stepd.main`) that has done all that once: a launch sends it
the job's or step's directory and gets back the new stepd's pid and a pidfd,
in about a millisecond. A stepd so started is not slurmd's child (the
server reaps it): slurmd follows it through the pidfd, as it follows the
stepds it adopts after a restart. Should the server be gone, a launch starts
a stepd of its own (:func:`start_stepd`) and a new server is started.

Every stepd starts with the signals it waits for (SIGTERM: a kill request;
SIGCHLD) blocked, as it keeps them: slurmd may ask for a kill as soon as it
has handed stepd its directory, while the interpreter still starts. Left to
their default, such a SIGTERM killed stepd unheard (no status, an empty
log: "slurmstepd died"); blocked, it waits until stepd takes it, and the job
is killed as asked. The fork server's children inherit its mask.

Imports nodeagent.spool, nodeagent.stepd.common (those signals) and the
standard library.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
from typing import IO

from nodeagent import spool
from nodeagent.stepd.common import WAITED

FORK_SERVER = "--fork-server"  # nodeagent.stepd.main's flag
REPLY_TIMEOUT = 30.0  # seconds the fork server has to answer a launch


class Stepd:
    """A started stepd: its pid, and a pidfd that follows it whoever its parent is.

    Args:
        pid: its pid.
        pidfd: a pidfd of it (this object closes it).
        child: the process, when slurmd started it itself (then reaped here).
    """

    def __init__(self, pid: int, pidfd: int, child: subprocess.Popen[bytes] | None = None) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self._child = child

    def exited(self) -> bool:
        """Whether it has exited."""
        if self.pidfd < 0:
            return True
        return bool(select.select([self.pidfd], [], [], 0)[0])

    def signal(self, signum: int) -> None:
        """Send it a signal (none once it is released or gone).

        Args:
            signum: the signal.
        """
        if self.pidfd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.pidfd, signum)

    def kill(self) -> None:
        """SIGKILL it, wait until it is gone, and release it."""
        self.signal(signal.SIGKILL)
        if self.pidfd >= 0:
            select.select([self.pidfd], [], [], REPLY_TIMEOUT)
        self.release()

    def release(self) -> None:
        """Close the pidfd (reaping it if it is slurmd's child and has exited); it may run on."""
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        if self._child is not None:
            self._child.poll()


def start_stepd(directory: str) -> Stepd:
    """A new stepd for the job or step whose spool directory is ``directory``.

    Args:
        directory: the directory holding its job.json.

    Returns:
        The stepd; its output goes to the directory's log.
    """
    with open(os.path.join(directory, spool.LOG_FILE), "wb") as log_file:
        proc = _popen([directory], subprocess.DEVNULL, log_file)
    return Stepd(proc.pid, os.pidfd_open(proc.pid), proc)


def _popen(args: list[str], stdin: int, output: int | IO[bytes]) -> subprocess.Popen[bytes]:
    """``python -m nodeagent.stepd ARGS`` in a session of its own, WAITED blocked from the start.

    The child inherits the mask of the thread that starts it, through exec.
    """
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "nodeagent.stepd", *args],
            stdin=stdin,
            stdout=output,
            stderr=output,
            start_new_session=True,
            cwd="/",
        )
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


class StepdPool:
    """Hands out stepds: forked by the fork server, or started afresh.

    Args:
        fork: keep a fork server (False: every stepd is a new interpreter).
    """

    def __init__(self, fork: bool = True) -> None:
        self._fork = fork
        self._server: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        if fork:
            self._start_server()

    def _start_server(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._server = _popen([FORK_SERVER], theirs.fileno(), subprocess.DEVNULL)
        ours.settimeout(REPLY_TIMEOUT)
        self._channel = ours

    def spawn(self, directory: str) -> Stepd:
        """A stepd for the job or step whose spool directory is ``directory``.

        Args:
            directory: the directory holding its job.json.

        Returns:
            The stepd.

        Raises:
            OSError: the fork server took the directory but did not answer (a
                stepd may have started: none is started again here).
        """
        if self._channel is None:
            return start_stepd(directory)
        try:
            self._channel.send(directory.encode())
        except OSError:  # the server is gone: nothing was started
            self._restart_server()
            return start_stepd(directory)
        try:
            message, fds, _, _ = socket.recv_fds(self._channel, 64, 1)
            if not message or not fds:
                raise OSError("the stepd fork server went away")
            return Stepd(int(message), fds[0])
        except (OSError, ValueError) as err:
            self._restart_server()
            raise OSError(f"stepd fork server: {err}") from None

    def _restart_server(self) -> None:
        self._stop_server()
        self._start_server()

    def _stop_server(self) -> None:
        channel, self._channel = self._channel, None
        server, self._server = self._server, None
        if channel is not None:
            channel.close()
        if server is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(REPLY_TIMEOUT)

    def close(self) -> None:
        """Let the fork server go (it exits when its socket closes; its stepds run on)."""
        self._stop_server()
