"""squeue's fields for steps: each ``-o`` code and ``-O`` name valid with ``-s``, and the sort.

Values are computed from a ``StepInfo`` of Slurm's step list as Slurm
22.05's squeue prints them (``src/squeue/print.c``, ``_print_step_*``);
what a step here cannot have (reserved ports, a network, CPU frequency or
TRES binding requests) prints Slurm's value for "not set". The keys of
``-S`` that apply to steps sort as ``sort_step_list`` does.

Pure functions; imports minislurm's lean modules only, none of ctld or nodeagent.
"""

from __future__ import annotations

import string

from cli import fmt
from minislurm import hostlist, units
from minislurm.stepids import BATCH_STEP

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from minislurm.wire.protowire import Message

    Getter = Callable[[Message, "View"], str]

DEFAULT_SORT = "P,i"
NULL = "(null)"
NO_FREQ = "Unknown-Unknown:Unknown"  # CPU_FREQ of a step that asked none (--cpu-freq)
BATCH_FREQ = "0-0:0"  # and of the batch step


class View:
    """What every value may need besides its step: the reply's time and cluster."""

    __slots__ = ("cluster", "now")

    def __init__(self, now: int, cluster: str) -> None:
        self.now = now
        self.cluster = cluster


def _run_time(step: Message, view: View) -> str:
    return units.format_duration_short(max(view.now - int(step.start_time), 0))


def _array_task(step: Message, view: View) -> str:
    return str(step.array_task_id) if step.array_job_id else "N/A"


def _per_task(step: Message, view: View) -> str:
    return f"gres:gpu:{step.gpus_per_task}" if step.gpus_per_task else NULL


def _cpu_freq(step: Message, view: View) -> str:
    return BATCH_FREQ if step.step_id == BATCH_STEP else NO_FREQ


def _null(step: Message, view: View) -> str:
    return NULL


# code: (header, value); the codes squeue -o takes for steps.
SHORT: dict[str, tuple[str, Getter]] = {
    "A": ("TASKS", lambda s, v: str(s.ntasks)),
    "b": ("TRES_PER_JOB", lambda s, v: s.tres_per_node or NULL),
    "i": ("STEPID", lambda s, v: fmt.step_ref(s)),
    "j": ("NAME", lambda s, v: str(s.name)),
    "l": ("TIME_LIMIT", lambda s, v: units.format_limit_short(s.time_limit)),
    "M": ("TIME", _run_time),
    "N": ("NODELIST", lambda s, v: str(s.nodelist)),
    "P": ("PARTITION", lambda s, v: str(s.partition)),
    "S": ("START_TIME", lambda s, v: fmt.timestamp_or(s.start_time)),
    "U": ("UID", lambda s, v: str(s.uid)),
    "u": ("USER", lambda s, v: fmt.user_name(s.uid)),
}
# -O names (lower case): a code of SHORT, or (header, value).
_LONG_ALIASES = {
    "numtasks": "A",
    "gres": "b",
    "stepid": "i",
    "stepname": "j",
    "timelimit": "l",
    "timeused": "M",
    "nodes": "N",
    "partition": "P",
    "starttime": "S",
    "userid": "U",
    "username": "u",
}
LONG: dict[str, tuple[str, Getter]] = {
    **{name: SHORT[code] for name, code in _LONG_ALIASES.items()},
    "cluster": ("CLUSTER", lambda s, v: v.cluster),
    "container": ("CONTAINER", _null),
    "arrayjobid": ("ARRAY_JOB_ID", lambda s, v: str(s.array_job_id)),
    "arraytaskid": ("ARRAY_TASK_ID", _array_task),
    "jobid": ("JOB_ID", lambda s, v: str(s.job_id)),
    "network": ("NETWORK", _null),
    "numcpus": ("NUM_CPUS", lambda s, v: str(s.num_cpus)),
    "cpufreq": ("CPU_FREQ", _cpu_freq),
    "resvports": ("RESERVED_PORTS", _null),
    "stepstate": ("STATE", lambda s, v: str(s.state)),
    "cpus-per-tres": ("CPUS_PER_TRES", _null),
    "mem-per-tres": ("MEM_PER_TRES", _null),
    "tres-bind": ("TRES_BIND", _null),
    "tres-freq": ("TRES_FREQ", _null),
    "tres-per-job": ("TRES_PER_STEP", _null),
    "tres-per-step": ("TRES_PER_STEP", _null),
    "tres-per-node": ("TRES_PER_JOB", SHORT["b"][1]),  # Slurm's header, sic
    "tres-per-socket": ("TRES_PER_SOCKET", _null),
    "tres-per-task": ("TRES_PER_TASK", _per_task),
}
# -O names Slurm matches by their start (print.c compares this many characters).
_PREFIX_NAMES = (("container", "container"), ("numtask", "numtasks"))
UNCUT = frozenset(("N", "nodes"))  # NODELIST is printed whole, past its width
# "%all": every code valid for steps, each followed by "|" (the others are dropped).
ALL_FIELDS = "".join(f"%{c}|" for c in string.ascii_letters if c in SHORT)


def canonical(token: str) -> str:
    """An ``-O`` item with the name Slurm matches by its start written in full (``numtask``).

    Args:
        token: one item of ``-O``.

    Returns:
        The item with its name in full.
    """
    name, colon, rest = token.partition(":")
    for start, full in _PREFIX_NAMES:
        if name.lower().startswith(start):
            return full + colon + rest
    return token


# --------------------------------------------------------------------------- sorting


def _first_node(step: Message, now: int) -> tuple[str, int]:
    first = hostlist.expand(step.nodelist)[0] if step.nodelist else ""
    digits = len(first) - len(first.rstrip("0123456789"))
    return (first[: len(first) - digits], int(first[len(first) - digits :] or 0))


SORT_KEYS: dict[str, Callable[[Message, int], object]] = {
    "i": lambda s, n: (s.job_id, s.step_id),
    "N": _first_node,
    "P": lambda s, n: s.partition,
    "l": lambda s, n: s.time_limit,
    "S": lambda s, n: s.start_time,
    "M": lambda s, n: n - s.start_time,
    "u": lambda s, n: fmt.user_name(s.uid),
    "U": lambda s, n: s.uid,
}


def sort_steps(steps: list[Message], spec: str, now: int) -> list[Message]:
    """Order steps as squeue's ``sort_step_list``: stable sorts from the last key to the first.

    Keys that do not apply to steps are ignored, as in Slurm.

    Args:
        steps: the steps, in the controller's order.
        spec: e.g. ``"P,i"``; ``-`` before a key sorts it descending.
        now: the reply's time.

    Returns:
        A new, sorted list.
    """
    ordered = list(steps)
    i = len(spec) - 1
    while i >= 0:
        if spec[: i + 1].lower().endswith("cluster"):
            i -= len("cluster")  # one cluster: nothing to order
            continue
        key = SORT_KEYS.get(spec[i])
        if key is not None:
            reverse = i > 0 and spec[i - 1] == "-"
            ordered.sort(key=lambda s: key(s, now), reverse=reverse)  # type: ignore[arg-type,return-value]
        i -= 1
    return ordered
