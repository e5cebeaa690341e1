"""The files of a job's standard streams, as stepd opens them (as the job's user).

Tools name the output directory after the job id (submitit's
``AutoExecutor(folder="logs/%j")`` gives ``--output=logs/%j/%j_0_log.out``)
and can create that directory only once sbatch has printed the id. Real
Slurm starts a job about a second after its submission, so such a tool always
wins that race there; here a job starts within milliseconds, often before the
directory exists. So an output file (a batch script's or an srun task's)
whose directory is missing is retried until a short grace after the launch
began (DIR_GRACE_SECONDS), polling every DIR_POLL_SECONDS; only then does
the launch fail. Every other failure (no permission, a missing input file,
…) fails the launch at once.

A batch job whose streams cannot be opened ends as Slurm 22.05 ends it:
``FAILED``, ``Reason=JobLaunchFailure``, ``ExitCode=0:53`` (STREAMS_FAILED),
its batch step ``CANCELLED 0:53`` (measured for a missing directory, a
directory without permission and a missing ``--input`` file alike).

Imports the standard library only: stepd runs this as the job's user.
"""

from __future__ import annotations

import os
import time

DIR_GRACE_SECONDS = 2.0  # how long after the launch began a missing directory may still appear
DIR_POLL_SECONDS = 0.005  # between two tries (stat-cheap; bounds the delay once it appears)
STREAMS_FAILED = (0, 53)  # Slurm's (exit code, signal) of a batch job whose streams failed


def open_output(path: str, append: bool, deadline: float) -> int:
    """Open (create) an output file, waiting for its directory until ``deadline``.

    Args:
        path: the file.
        append: keep its content (``--open-mode=append``) instead of truncating it.
        deadline: ``time.monotonic()`` after which a missing directory is final.

    Returns:
        The descriptor.

    Raises:
        OSError: the file cannot be opened (ENOENT: its directory still does
            not exist at ``deadline``).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | (0 if append else os.O_TRUNC)
    while True:
        try:
            return os.open(path, flags, 0o666)
        except FileNotFoundError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise
            time.sleep(min(DIR_POLL_SECONDS, left))
