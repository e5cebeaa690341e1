"""``scontrol update JobId=...``: change a job or an array task.

Keys: TimeLimit (``+N``/``-N`` change it relative to the current limit),
Name/JobName, Partition, Nice, Dependency, ArrayTaskThrottle; ``JobId=16_4``
names one array task. Keys are case-insensitive; errors use Slurm's words
and exit status 1.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys

from cli import common
from minislurm import units
from minislurm.h2grpc import RpcError

NICE_LIMIT = 2147483645  # NICE_OFFSET - 3


def _fail(text: str) -> int:
    sys.stderr.write(text + "\n")
    return 1


def parse_nice(text: str) -> int:
    """Read ``Nice=`` like C's ``strtol``: a leading signed integer, else 0.

    Args:
        text: the value.

    Returns:
        The number.

    Raises:
        CommandError: out of Slurm's range.
    """
    end = 1 if text[:1] in ("+", "-") else 0
    while end < len(text) and text[end].isdigit():
        end += 1
    number = int(text[:end]) if end and text[:end] not in ("+", "-") else 0
    if abs(number) > NICE_LIMIT:
        raise common.CommandError(
            f"error: Nice value out of range (+/- {NICE_LIMIT}). Value ignored"
        )
    return number


def _time_limit(text: str, job_id: int) -> int:
    """``TimeLimit=``: a limit, or ``+N``/``-N`` minutes relative to the current one."""
    sign = text[:1] if text[:1] in ("+", "-") else ""
    try:
        minutes = units.parse_time_limit(text[1:] if sign else text)
    except ValueError:
        raise common.CommandError("error: Invalid TimeLimit value") from None
    if not sign:
        return minutes
    current = _current_limit(job_id)
    if current == units.INFINITE or minutes == units.INFINITE:
        raise common.CommandError("error: Invalid TimeLimit value")
    if sign == "+":
        return current + minutes
    if minutes >= current:
        raise common.CommandError(
            f"error: TimeLimit decrement larger than current time limit ({minutes} > {current})"
        )
    return current - minutes


def _current_limit(job_id: int) -> int:
    try:
        reply = common.call("GetJobs", job_ids=[job_id], all_states=True)
    except RpcError as err:
        if err.code != "NOT_FOUND":
            raise
        message = common.rpc_message(err)
        raise common.CommandError(
            f"error: Could not load state information for job {job_id}: {message}"
        ) from None
    return int(reply.jobs[0].time_limit)


def update_job(job_text: str, pairs: list[tuple[str, str]]) -> int:
    """``update JobId=N key=value...``.

    Args:
        job_text: the JobId value.
        pairs: the other ``(key, value)`` pairs.

    Returns:
        The exit status.
    """
    job_id, _, task_text = job_text.partition("_")
    if not job_id.isdigit() or (task_text and not task_text.isdigit()):
        return _fail(f"Invalid job id specified for job {job_text}")
    task: dict[str, object] = {"array_task_id": int(task_text)} if task_text else {}
    try:
        changes = _job_changes(int(job_id), pairs)
        if changes is None:
            return 1
        if not changes:
            return _fail("No changes specified")
        common.call("UpdateJob", job_id=int(job_id), requester_uid=os.getuid(), **task, **changes)
    except RpcError as err:
        return _fail(f"{common.rpc_message(err)} for job {job_text}")
    return 0


def _job_changes(job_id: int, pairs: list[tuple[str, str]]) -> dict[str, object] | None:
    """The UpdateJob fields of the pairs; None after reporting an unsupported key."""
    changes: dict[str, object] = {}
    for key, value in pairs:
        lower = key.lower()
        if lower in ("name", "jobname"):
            changes["name"] = value
        elif lower == "partition":
            changes["partition"] = value
        elif lower == "nice":
            changes["nice"] = parse_nice(value)
        elif lower == "timelimit":
            changes["time_limit"] = _time_limit(value, job_id)
        elif lower == "dependency":
            changes["dependency"] = value
        elif lower == "arraytaskthrottle":
            changes["array_throttle"] = value
        else:
            _fail(f"Update of this parameter is not supported: {key}={value}\nRequest aborted")
            return None
    return changes
