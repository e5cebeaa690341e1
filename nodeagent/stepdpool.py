"""A spare stepd, started ahead of need, so that launches do not wait for Python.

Starting ``python -m nodeagent.stepd`` costs 40-60 ms on the reference
machine (the interpreter and stepd's imports). slurmd keeps one spare stepd
that has done all that and waits on its stdin; a launch hands it the job's
or step's directory and starts the next spare at once. Spares run in
sessions of their own, like every stepd. :func:`start_stepd` starts one
for a directory at once, without a spare.

Every stepd starts with the signals it waits for (SIGTERM: a kill request;
SIGCHLD) blocked, as it keeps them: slurmd may ask for a kill as soon as it
has handed stepd its directory, while the interpreter still starts or a spare
has not yet read its stdin. Left to their default, such a SIGTERM killed
stepd unheard (no status, an empty log: "slurmstepd died"); blocked, it waits
until stepd takes it, and the job is killed as asked.

Imports nodeagent.spool, nodeagent.stepd.common (those signals) and the
standard library.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import IO

from nodeagent import spool
from nodeagent.stepd.common import WAITED


def start_stepd(directory: str) -> subprocess.Popen[bytes]:
    """A new stepd for the job or step whose spool directory is ``directory``.

    Args:
        directory: the directory holding its job.json.

    Returns:
        The stepd process (the caller reaps it); its output goes to the directory's log.
    """
    with open(os.path.join(directory, spool.LOG_FILE), "wb") as log_file:
        return _popen([directory], subprocess.DEVNULL, log_file)


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
    """Hands out stepd processes: the waiting spare, or a fresh one."""

    def __init__(self, spare: bool = True) -> None:
        self._keep_spare = spare
        self._spare: subprocess.Popen[bytes] | None = None
        if spare:
            self._spare = self._start()

    @staticmethod
    def _start() -> subprocess.Popen[bytes]:
        return _popen(["--spare"], subprocess.PIPE, subprocess.DEVNULL)

    def spawn(self, directory: str) -> subprocess.Popen[bytes]:
        """A stepd for the job or step whose spool directory is ``directory``.

        Args:
            directory: the directory holding its job.json.

        Returns:
            The stepd process (the caller reaps it).
        """
        proc, self._spare = self._spare, None
        if proc is None or proc.poll() is not None:
            proc = start_stepd(directory)
        else:
            assert proc.stdin is not None
            proc.stdin.write(f"{directory}\n".encode())
            proc.stdin.close()
        if self._keep_spare:
            self._spare = self._start()
        return proc

    def close(self) -> None:
        """Let the spare go (it exits when its stdin closes)."""
        spare, self._spare = self._spare, None
        if spare is not None and spare.stdin is not None:
            spare.stdin.close()
            spare.wait()
