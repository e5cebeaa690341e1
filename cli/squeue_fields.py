"""squeue's fields: each ``-o`` code and ``-O`` name, its header and its value.

Values are computed from a ``JobInfo`` reply message exactly as Slurm 22.05's
squeue prints them (``src/squeue/print.c``); fields JobInfo cannot carry
(dependencies, reservations, licenses...) print Slurm's value for "not set".

Pure functions; imports minislurm's lean modules only, none of ctld or nodeagent.
"""

from __future__ import annotations

from cli import common, fmt
from minislurm import hostlist, units
from minislurm.arrays import array_label

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from minislurm.wire.protowire import Message

    Getter = Callable[[Message, int], str]

DEFAULT_SORT = "P,t,-p"  # partition, state, descending priority
PRIORITY_SCALE = 0xFFFFFFFF  # %p prints priority / 2^32-1
# States whose %R shows "(reason)" rather than nodes (print.c _print_job_reason_list).
_REASON_STATES = frozenset(("PENDING", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "FAILED"))


def node_count(job: Message) -> int:
    """``%D``: allocated nodes, or the minimum a pending job needs.

    Args:
        job: a JobInfo.

    Returns:
        The count.
    """
    if job.state != "PENDING" and job.nodes:
        return hostlist.count(job.nodes)
    return int(job.min_nodes) or 1


def reason_list(job: Message) -> str:
    """``%R``: ``(reason)`` for pending and failed jobs, else the node list.

    Args:
        job: a JobInfo.

    Returns:
        The text.
    """
    if job.state in _REASON_STATES:
        return f"({job.reason or 'None'})"
    return str(job.nodes)


def time_left(job: Message) -> str:
    """``%L``: the time limit minus the time used.

    Args:
        job: a JobInfo.

    Returns:
        ``UNLIMITED``, or a duration in squeue's short form.
    """
    if job.time_limit == units.INFINITE:
        return "UNLIMITED"
    return units.format_duration_short(job.time_limit * 60 - job.run_time)


def end_time(job: Message) -> str:
    """``%e``: when the job ended or will end; ``NONE`` for a running unlimited job.

    Args:
        job: a JobInfo.

    Returns:
        The timestamp, ``NONE`` or ``N/A``.
    """
    if job.state == "RUNNING" and job.time_limit == units.INFINITE:
        return "NONE"
    return fmt.timestamp_or(job.end_time)


def min_memory(job: Message) -> str:
    """``%m``: memory per node or per CPU requested (``2G``, ``100M``), ``0`` for none.

    Args:
        job: a JobInfo.

    Returns:
        The size.
    """
    mem = job.mem_per_node or job.mem_per_cpu
    return units.format_memory_mb(mem) if mem else "0"


def min_cpus(job: Message) -> int:
    """``%c``: CPUs per node requested (tasks per node times CPUs per task).

    Args:
        job: a JobInfo.

    Returns:
        The count.
    """
    return max(int(job.cpus_per_task), 1) * max(int(job.ntasks_per_node), 1)


def pending_time(job: Message, now: int) -> int:
    """``PendingTime``: seconds from submission to start (or to now when pending).

    Args:
        job: a JobInfo.
        now: the reply's time.

    Returns:
        Seconds.
    """
    if job.state == "PENDING":
        return max(now - int(job.submit_time), 0)
    if not job.start_time:
        return 0
    return max(int(job.start_time) - int(job.submit_time), 0)


def array_task_text(job: Message) -> str:
    """An array record's task id, its pending tasks (``2-9%2``), or ``N/A``.

    Args:
        job: a JobInfo.

    Returns:
        The text.
    """
    if job.has("array_task_id"):
        return str(job.array_task_id)
    if job.array_job_id:
        return array_label(job.array_tasks, job.array_throttle)
    return "N/A"


def job_id_text(job: Message) -> str:
    """A job as squeue names it: ``17``, an array task ``16_0``, pending tasks ``16_[2-9%2]``.

    Args:
        job: a JobInfo.

    Returns:
        The text.
    """
    if not job.array_job_id:
        return str(job.job_id)
    if job.has("array_task_id"):
        return f"{job.array_job_id}_{job.array_task_id}"
    return f"{job.array_job_id}_[{array_task_text(job)}]"


def _gres_or_na(count: int) -> str:
    return f"gres:gpu:{count}" if count else "N/A"


def _or(text: str, missing: str = "(null)") -> str:
    return text or missing


# code: (header, value(job, now)); the codes of squeue -o.
SHORT: dict[str, tuple[str, Getter]] = {
    "a": ("ACCOUNT", lambda j, n: _or(j.account)),
    "A": ("JOBID", lambda j, n: str(j.job_id)),
    "b": ("TRES_PER_NODE", lambda j, n: _or(j.tres_per_node, "N/A")),
    "B": ("EXEC_HOST", lambda j, n: _or(j.batch_host, "n/a")),
    "c": ("MIN_CPUS", lambda j, n: str(min_cpus(j))),
    "C": ("CPUS", lambda j, n: str(j.num_cpus)),
    "d": ("MIN_TMP_DISK", lambda j, n: "0"),
    "D": ("NODES", lambda j, n: str(node_count(j))),
    "e": ("END_TIME", lambda j, n: end_time(j)),
    "E": ("DEPENDENCY", lambda j, n: _or(j.dependency)),
    "f": ("FEATURES", lambda j, n: "(null)"),
    "F": ("ARRAY_JOB_ID", lambda j, n: str(j.array_job_id or j.job_id)),
    "g": ("GROUP", lambda j, n: fmt.group_name(j.gid, j.group)),
    "G": ("GROUP", lambda j, n: str(j.gid)),
    "h": ("OVER_SUBSCRIBE", lambda j, n: fmt.over_subscribe(j)),
    "H": ("SOCKETS_PER_NODE", lambda j, n: "*"),
    "i": ("JOBID", lambda j, n: job_id_text(j)),
    "I": ("CORES_PER_SOCKET", lambda j, n: "*"),
    "j": ("NAME", lambda j, n: str(j.name)),
    "J": ("THREADS_PER_CORE", lambda j, n: "*"),
    "k": ("COMMENT", lambda j, n: str(j.comment) or "(null)"),
    "K": ("ARRAY_TASK_ID", lambda j, n: array_task_text(j)),
    "l": ("TIME_LIMIT", lambda j, n: units.format_limit_short(j.time_limit)),
    "L": ("TIME_LEFT", lambda j, n: time_left(j)),
    "m": ("MIN_MEMORY", lambda j, n: min_memory(j)),
    "M": ("TIME", lambda j, n: units.format_duration_short(j.run_time)),
    "n": ("REQ_NODES", lambda j, n: str(j.req_nodes)),
    "N": ("NODELIST", lambda j, n: str(j.nodes)),
    "o": ("COMMAND", lambda j, n: _or(j.command)),
    "O": ("CONTIGUOUS", lambda j, n: "0"),
    "p": ("PRIORITY", lambda j, n: f"{j.priority / PRIORITY_SCALE:.14f}"),
    "P": ("PARTITION", lambda j, n: str(j.partition)),
    "q": ("QOS", lambda j, n: _or(j.qos)),
    "Q": ("PRIORITY", lambda j, n: str(j.priority)),
    "r": ("REASON", lambda j, n: _or(j.reason, "None")),
    "R": ("NODELIST(REASON)", lambda j, n: reason_list(j)),
    "s": ("", lambda j, n: ""),
    "S": ("START_TIME", lambda j, n: fmt.timestamp_or(j.start_time)),
    "t": ("ST", lambda j, n: str(j.state_compact)),
    "T": ("STATE", lambda j, n: str(j.state)),
    "u": ("USER", lambda j, n: fmt.user_name(j.uid, j.user)),
    "U": ("UID", lambda j, n: str(j.uid)),
    "v": ("RESERVATION", lambda j, n: j.reservation or "(null)"),
    "V": ("SUBMIT_TIME", lambda j, n: fmt.timestamp_or(j.submit_time)),
    "w": ("WCKEY", lambda j, n: "(null)"),
    "W": ("LICENSES", lambda j, n: "(null)"),
    "x": ("EXC_NODES", lambda j, n: str(j.exc_nodes)),
    "X": ("CORE_SPEC", lambda j, n: "N/A"),
    "y": ("NICE", lambda j, n: str(j.nice)),
    "Y": ("SCHEDNODES", lambda j, n: "(null)"),
    "z": ("S:C:T", lambda j, n: "*:*:*"),
    "Z": ("WORK_DIR", lambda j, n: str(j.work_dir)),
}

# -O names (lower case): a code of SHORT, or (header, value).
_LONG_ALIASES = {
    "account": "a",
    "arrayjobid": "F",
    "arraytaskid": "K",
    "batchhost": "B",
    "command": "o",
    "comment": "k",
    "contiguous": "O",
    "cores": "I",
    "dependency": "E",
    "endtime": "e",
    "feature": "f",
    "groupid": "G",
    "groupname": "g",
    "jobarrayid": "i",
    "jobid": "i",
    "licenses": "W",
    "mincpus": "c",
    "minmemory": "m",
    "mintmpdisk": "d",
    "name": "j",
    "nice": "y",
    "nodelist": "N",
    "numcpus": "C",
    "numnodes": "D",
    "oversubscribe": "h",
    "partition": "P",
    "priority": "p",
    "prioritylong": "Q",
    "qos": "q",
    "reason": "r",
    "reasonlist": "R",
    "reqnodes": "n",
    "reservation": "v",
    "schednodes": "Y",
    "sct": "z",
    "sockets": "H",
    "starttime": "S",
    "state": "T",
    "statecompact": "t",
    "submittime": "V",
    "threads": "J",
    "timeleft": "L",
    "timelimit": "l",
    "timeused": "M",
    "tres-per-node": "b",
    "userid": "U",
    "username": "u",
    "wckey": "w",
    "workdir": "Z",
    "corespec": "X",
}
_LONG_ONLY: dict[str, tuple[str, Getter]] = {
    "accruetime": ("ACCRUE_TIME", lambda j, n: fmt.timestamp_or(j.accrue_time)),
    "allocnodes": ("ALLOC_NODES", lambda j, n: str(j.submit_host)),
    "batchflag": ("BATCH_FLAG", lambda j, n: str(int(j.batch))),
    "cpus-per-task": ("CPUS_PER_TASK", lambda j, n: str(j.cpus_per_task or 1)),
    "deadline": ("DEADLINE", lambda j, n: "N/A"),
    "delayboot": ("DELAY_BOOT", lambda j, n: "0:00"),
    "derivedec": ("DERIVED_EC", lambda j, n: "0"),
    "eligibletime": ("ELIGIBLE_TIME", lambda j, n: fmt.timestamp_or(j.eligible_time)),
    "exit_code": ("EXIT_CODE", lambda j, n: str(j.exit_code)),
    "lastschedeval": ("LAST_SCHED_EVAL", lambda j, n: fmt.timestamp_or(j.last_sched_eval)),
    "maxcpus": ("MAX_CPUS", lambda j, n: str(j.num_cpus)),
    "maxnodes": ("MAX_NODES", lambda j, n: str(j.max_nodes or j.min_nodes or 1)),
    "mcslabel": ("MCSLABEL", lambda j, n: "(null)"),
    "mintime": ("TIME_MIN", lambda j, n: "0:00"),
    "network": ("NETWORK", lambda j, n: "(null)"),
    "ntpernode": ("NTASKS_PER_NODE", lambda j, n: str(j.ntasks_per_node)),
    "numtasks": ("TASKS", lambda j, n: str(j.num_tasks or 1)),
    "pendingtime": ("PENDING_TIME", lambda j, n: str(pending_time(j, n))),
    "preempttime": ("PREEMPT_TIME", lambda j, n: "N/A"),
    "reboot": ("REBOOT", lambda j, n: "0"),
    "reqswitch": ("REQ_SWITCH", lambda j, n: str(j.req_switch)),
    "requeue": ("REQUEUE", lambda j, n: str(int(j.requeue))),
    "restartcnt": ("RESTART_COUNT", lambda j, n: str(j.restarts)),
    "segmentsize": ("SEGMENT_SIZE", lambda j, n: dict(j.options or {}).get("segment", "N/A")),
    "stderr": ("STDERR", lambda j, n: str(j.stderr)),
    "stdin": ("STDIN", lambda j, n: str(j.stdin)),
    "stdout": ("STDOUT", lambda j, n: str(j.stdout)),
    "tres-alloc": ("TRES_ALLOC", lambda j, n: str(j.tres)),
    "tres-per-job": ("TRES_PER_JOB", lambda j, n: _gres_or_na(j.gpus)),
    "tres-per-task": ("TRES_PER_TASK", lambda j, n: _gres_or_na(j.gpus_per_task)),
    "wait4switch": ("WAIT4SWITCH", lambda j, n: units.format_duration_short(j.wait4switch)),
}
LONG: dict[str, tuple[str, Getter]] = {
    **{name: SHORT[code] for name, code in _LONG_ALIASES.items()},
    **_LONG_ONLY,
}
# Fields whose value squeue -o prints whole even past the width (print.c _print_nodes).
UNCUT_SHORT = frozenset("N")


def header_text(column: fmt.Column, long_names: bool) -> tuple[str, bool]:
    """A column's header, and whether it is cut to the width.

    Args:
        column: a parsed column.
        long_names: it came from ``-O``.

    Returns:
        ``(text, cut)``.
    """
    table = LONG if long_names else SHORT
    return table[column.code][0], long_names or column.code not in UNCUT_SHORT


def value_text(column: fmt.Column, job: Message, now: int, long_names: bool) -> tuple[str, bool]:
    """A column's value for one job, and whether it is cut to the width.

    Args:
        column: a parsed column.
        job: a JobInfo.
        now: the reply's time.
        long_names: it came from ``-O``.

    Returns:
        ``(text, cut)``.
    """
    table = LONG if long_names else SHORT
    return table[column.code][1](job, now), long_names or column.code not in UNCUT_SHORT


# --------------------------------------------------------------------------- sorting


def _start_key(job: Message, now: int) -> int:
    if not job.start_time:
        return now + 100
    if job.state == "PENDING" and job.start_time < now:
        return now
    return int(job.start_time)


def _time_left_key(job: Message, now: int) -> int:
    if job.time_limit == units.INFINITE:
        return units.INFINITE
    return int(job.time_limit * 60 - job.run_time)


def _first_node(job: Message, now: int) -> str:
    return hostlist.expand(job.nodes)[0] if job.nodes else ""


SORT_KEYS: dict[str, object] = {
    "B": lambda j, n: j.batch_host,
    "C": lambda j, n: j.num_cpus,
    "D": lambda j, n: node_count(j),
    "e": lambda j, n: j.end_time,
    "g": lambda j, n: fmt.group_name(j.gid, j.group),
    "G": lambda j, n: j.gid,
    "i": lambda j, n: j.job_id,
    "j": lambda j, n: j.name,
    "l": lambda j, n: j.time_limit,
    "L": _time_left_key,
    "m": lambda j, n: j.mem_per_node or j.mem_per_cpu,
    "M": lambda j, n: j.run_time,
    "N": _first_node,
    "p": lambda j, n: j.priority,
    "P": lambda j, n: j.partition,
    "Q": lambda j, n: j.priority,
    "S": _start_key,
    "t": lambda j, n: j.state_compact,
    "T": lambda j, n: j.state,
    "u": lambda j, n: fmt.user_name(j.uid, j.user),
    "U": lambda j, n: j.uid,
    "V": lambda j, n: j.submit_time,
}
# Keys Slurm accepts but that sort nothing here (no such data, or all equal).
_NO_OP_KEYS = frozenset("bcdfhHIJnOvz")


def sort_jobs(jobs: list[Message], spec: str, now: int) -> list[Message]:
    """Order jobs as squeue's ``-S`` does: stable sorts from the last key to the first.

    Ties keep the order Slurm's squeue sorts them into first, by start time:
    jobs with one (running, or pending with an expected start or a begin
    time) latest first, then those without in descending id order (its
    comparator puts a job without a start time after any other, even
    another without one, which its merge sort turns into the reverse of
    the controller's order, ascending ids).

    Args:
        jobs: the jobs.
        spec: e.g. ``"P,t,-p"``; ``-`` before a key sorts it descending.
        now: the reply's time (for start-time and time-left keys).

    Returns:
        A new, sorted list.

    Raises:
        CommandError: an unknown sort key.
    """
    by_id = sorted(jobs, key=lambda j: j.job_id)
    timed = sorted((j for j in by_id if j.start_time), key=lambda j: -j.start_time)
    ordered = timed + [j for j in reversed(by_id) if not j.start_time]
    i = len(spec) - 1
    while i >= 0:
        char = spec[i]
        if char in ",+-":
            i -= 1
            continue
        if spec[: i + 1].lower().endswith("cluster"):
            i -= len("cluster")  # one cluster: nothing to order
            continue
        key = SORT_KEYS.get(char)
        if key is None and char not in _NO_OP_KEYS:
            raise common.CommandError(f"error: Invalid sort specification: {char}")
        if key is not None:
            reverse = i > 0 and spec[i - 1] == "-"
            ordered.sort(key=lambda j: key(j, now), reverse=reverse)  # type: ignore[operator]
        i -= 1
    return ordered
