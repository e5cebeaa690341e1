"""What a step's GPUs are doing: utilisation and memory in use, for accounting.

stepd samples the GPUs of each task (its ``CUDA_VISIBLE_DEVICES``) beside
its processes (nodeagent.usage). Real NVIDIA GPUs answer through
``nvidia-smi --query-gpu=index,utilization.gpu,memory.used``. Fake GPUs
have a directory (``fake-gpus`` in the node's spool, writable by every
job, as /tmp is) where a file named after a GPU's index holds what it
pretends to do, ``<utilization percent> <memory used MiB>``: a demo or a
test writes ``echo 80 4096 > $SPOOL/fake-gpus/0`` and sees it in sstat
and sacct. A GPU without such a file, or one nvidia-smi does not list,
counts as idle.

Imports only the standard library.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable

NVIDIA_SMI = "nvidia-smi"
QUERY_SECONDS = 10.0  # a hung nvidia-smi costs one sample, not the step


def parse_query(text: str) -> dict[int, tuple[int, int]]:
    """Parse nvidia-smi's answer to ``--query-gpu=index,utilization.gpu,memory.used``.

    Args:
        text: one GPU a line, ``0, 87, 36266``; ``[N/A]`` counts as 0.

    Returns:
        ``(utilization %, memory used MiB)`` per device index.
    """
    found = {}
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 3 and fields[0].isdigit():
            util, mem = (int(f) if f.isdigit() else 0 for f in fields[1:])
            found[int(fields[0])] = (util, mem)
    return found


def sample(source: str, indices: Iterable[int]) -> dict[int, tuple[int, int]]:
    """What some GPUs do now.

    Args:
        source: NVIDIA_SMI, or a fake GPUs' directory.
        indices: the device indices asked about.

    Returns:
        ``(utilization %, memory used MiB)`` per index asked (0, 0 when unknown).
    """
    wanted = sorted(set(indices))
    if not wanted or not source:
        return {}
    if source == NVIDIA_SMI:
        try:
            done = subprocess.run(
                [NVIDIA_SMI, "--query-gpu=index,utilization.gpu,memory.used",
                 "--format=csv,noheader,nounits"],
                capture_output=True, text=True, timeout=QUERY_SECONDS, check=False,
            )  # fmt: skip
            found = parse_query(done.stdout) if done.returncode == 0 else {}
        except (OSError, subprocess.TimeoutExpired):
            found = {}
    else:
        found = {i: _fake(os.path.join(source, str(i))) for i in wanted}
    return {i: found.get(i, (0, 0)) for i in wanted}


def _fake(path: str) -> tuple[int, int]:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            util, mem = (int(word) for word in f.read().split()[:2])
    except (OSError, ValueError):
        return 0, 0
    return max(util, 0), max(mem, 0)


def visible(env: dict[str, str]) -> tuple[int, ...]:
    """The device indices a task's environment binds it to.

    Args:
        env: the task's environment.

    Returns:
        ``CUDA_VISIBLE_DEVICES`` as indices (none when unset or not indices).
    """
    words = env.get("CUDA_VISIBLE_DEVICES", "").split(",")
    return tuple(int(w) for w in words if w.strip().isdigit())
