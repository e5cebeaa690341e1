"""A spare stepd, started ahead of need, so that launches do not wait for Python.

Starting ``python -m nodeagent.stepd`` costs 40-60 ms on the reference
machine (the interpreter and stepd's imports). slurmd keeps one spare stepd
that has done all that and waits on its stdin; a launch hands it the job's
or step's directory and starts the next spare at once. Spares run in
sessions of their own, like every stepd. :func:`start_stepd` starts one
for a directory at once, without a spare.

Imports nodeagent.spool and the standard library.
"""

from __future__ import annotations

import os
import subprocess
import sys

from nodeagent import spool


def start_stepd(directory: str) -> subprocess.Popen[bytes]:
    """A new stepd for the job or step whose spool directory is ``directory``.

    Args:
        directory: the directory holding its job.json.

    Returns:
        The stepd process (the caller reaps it); its output goes to the directory's log.
    """
    with open(os.path.join(directory, spool.LOG_FILE), "wb") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "nodeagent.stepd", directory],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            start_new_session=True,
            cwd="/",
        )


class StepdPool:
    """Hands out stepd processes: the waiting spare, or a fresh one."""

    def __init__(self, spare: bool = True) -> None:
        self._keep_spare = spare
        self._spare: subprocess.Popen[bytes] | None = None
        if spare:
            self._spare = self._start()

    @staticmethod
    def _start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "nodeagent.stepd", "--spare"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd="/",
        )

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
