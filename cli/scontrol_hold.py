"""``scontrol hold|uhold|release|requeue|requeuehold``, with Slurm's arguments and messages.

Each argument is a list of jobs (``12,13 14_[1-3]``, commas or spaces,
optionally after ``JobId=``/``Job=``) or, for ``hold``, ``uhold`` and
``release``, ``Name=``/``JobName=`` and a job name. Each job of the list
gets its own HoldJobs call, as Slurm's scontrol makes one update per job:
a plain job that fails is reported as ``<error> for job <id>``, an array
(named by its id or by tasks) as ``<array>_<tasks>: <error>`` per group of
tasks that shared an outcome (``No error`` beside others that failed). A
failed ``hold``, ``uhold`` or ``release`` of a plain job, a bad job id or
a job name ends with ``slurm_suspend error: <error>``.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys

from cli import common
from minislurm.arrays import TaskSet, parse_job_ref
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

HOLD, USER_HOLD, RELEASE, REQUEUE, REQUEUE_HOLD = 0, 1, 2, 3, 4  # HoldJobsRequest.Action
INVALID_ID = "Invalid job id specified"
_HOLDS = (HOLD, USER_HOLD, RELEASE)


def hold_keyword(word: str) -> int | None:
    """The action a keyword names, by Slurm's matching rules.

    ``hold`` is any word that starts with it (``holdu`` a user hold), ``uhold``
    one that starts with ``uhold``, ``requeuehold`` one that starts with it;
    ``release`` and ``requeue`` are prefixes of at least three letters.

    Args:
        word: the command word as typed.

    Returns:
        A HoldJobsRequest action, or None when the word names none of them.
    """
    lower = word.lower()
    if lower.startswith(("holdu", "uhold")):
        return USER_HOLD
    if lower.startswith("hold"):
        return HOLD
    if len(lower) >= 3 and "release".startswith(lower):
        return RELEASE
    if len(lower) >= 3 and "requeue".startswith(lower):
        return REQUEUE
    if lower.startswith("requeuehold"):
        return REQUEUE_HOLD
    return None


def job_items(text: str) -> list[str] | None:
    """The jobs of one argument, split as Slurm's scontrol splits them.

    Args:
        text: e.g. ``"12,13_[1-3] 14"``.

    Returns:
        The job references; None when the text is not a list of job ids.
    """
    items, depth, start = [], 0, 0
    under = False
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "_":
            if under:
                return None
            under = True
        elif char in ", ":
            if depth == 0:
                items.append(text[start:i])
                start, under = i + 1, False
        elif char == "-":
            if depth == 0 and not under:
                return None
        elif not char.isdigit():
            return None
    if depth != 0:
        return None
    items.append(text[start:])
    return [item for item in items if item]


def _strip_job_prefix(text: str) -> str:
    for prefix in ("jobid=", "job="):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
    return text


def _job_name(text: str) -> str | None:
    for prefix in ("name=", "jobname="):
        if text.lower().startswith(prefix):
            return text[len(prefix) :]
    return None


def hold_command(word: str, args: list[str], action: int) -> int:
    """``hold|uhold|release|requeue|requeuehold ARG...``.

    Args:
        word: the command word as typed (for the usage error).
        args: the arguments: job lists or job names.
        action: HOLD, USER_HOLD, RELEASE, REQUEUE or REQUEUE_HOLD.

    Returns:
        The exit status: 1 when anything failed.
    """
    if not args:
        sys.stderr.write(f"too few arguments for keyword:{word}\n")
        return 1
    status = 0
    for arg in args:
        status |= _one_argument(arg, action)
    return status


def _one_argument(arg: str, action: int) -> int:
    if action not in _HOLDS and not arg:
        return 1  # Slurm's requeue of "" fails without a word
    text = _strip_job_prefix(arg)
    items = job_items(text)
    if items is None:
        name = _job_name(text) if action in _HOLDS else None
        if name is not None:
            return _by_name(name, action)
        sys.stderr.write(f"{INVALID_ID} for job {text}\n")
        if action in _HOLDS:
            sys.stderr.write(f"slurm_suspend error: {INVALID_ID}\n")
        return 1
    status, last_error = 0, ""
    for item in items:
        lines, error = _act(item, action)
        sys.stderr.write("".join(line + "\n" for line in lines))
        status |= bool(lines)
        last_error = error or last_error
    if last_error and action in _HOLDS:
        sys.stderr.write(f"slurm_suspend error: {last_error}\n")
    return status


def _act(item: str, action: int) -> tuple[list[str], str]:
    """One HoldJobs call for one job or array reference.

    Returns:
        The lines to print, and the error of a plain job ("" when it had none).
    """
    try:
        job_id, tasks, _ = parse_job_ref(item)
    except ValueError:
        return [f"{INVALID_ID} for job {item}"], INVALID_ID
    fields: dict[str, object] = {"array_tasks": [item]} if tasks is not None else {}
    if tasks is None:
        fields["job_ids"] = [job_id]
    try:
        reply = common.call("HoldJobs", action=action, requester_uid=os.getuid(), **fields)
    except RpcError as err:
        message = common.rpc_message(err)
        return [f"{message} for job {item}"], message
    results = list(reply.results)
    if tasks is None and not any(r.array_ref for r in results):
        errors = [r.error for r in results if r.error]
        return ([f"{errors[0]} for job {item}"], errors[0]) if errors else ([], "")
    return array_lines(job_id, tasks, results), ""


def array_lines(job_id: int, tasks: TaskSet | None, results: list[Message]) -> list[str]:
    """What Slurm prints of an array's outcome: one line per group of tasks that share one.

    Args:
        job_id: the array (or the job) the reference named.
        tasks: the tasks it named (None: the whole array).
        results: the controller's results, one per record.

    Returns:
        No line when every task succeeded; else ``<array>_<tasks>: <error>``
        lines, ``No error`` for the group that succeeded.
    """
    groups: dict[str, set[int]] = {}
    array_id = job_id
    for result in results:
        if not result.array_ref:
            continue
        head, _, task_text = result.array_ref.partition("_")
        array_id = int(head)
        groups.setdefault(result.error, set()).update(TaskSet.parse(task_text))
    named = set(tasks) if tasks is not None else set()
    missing = named - set().union(*groups.values())
    if missing:
        groups.setdefault(INVALID_ID, set()).update(missing)
    return group_lines(array_id, groups)


def group_lines(array_id: int, groups: dict[str, set[int]]) -> list[str]:
    """Slurm's lines for an array's tasks grouped by outcome ("" for success).

    Args:
        array_id: the array.
        groups: task ids by error.

    Returns:
        Nothing when all succeeded, else one ``<array>_<tasks>: <error>``
        line per group, in task order, ``No error`` for the successes.
    """
    if set(groups) <= {""}:
        return []
    ordered = sorted(groups.items(), key=lambda group: min(group[1]))
    return [f"{array_id}_{compress(ids)}: {error or 'No error'}" for error, ids in ordered]


def compress(ids: set[int]) -> str:
    """Task ids as Slurm prints a bitmap of them: ``1-3,7``.

    Args:
        ids: the ids (not empty).

    Returns:
        The ranges.
    """
    ordered = sorted(ids)
    ranges: list[str] = []
    first = last = ordered[0]
    for task in [*ordered[1:], None]:
        if task is not None and task == last + 1:
            last = task
            continue
        ranges.append(str(first) if first == last else f"{first}-{last}")
        if task is not None:
            first = last = task
    return ",".join(ranges)


def _by_name(name: str, action: int) -> int:
    """``hold Name=NAME``: every job of that name still remembered, oldest first."""
    try:
        reply = common.call("GetJobs", names=[name], all_states=True)
    except RpcError as err:
        sys.stderr.write(f"slurm_load_job error: {common.rpc_message(err)}\n")
        return 1
    failed, last_error = False, ""
    for job in sorted(reply.jobs, key=lambda j: j.job_id):
        if job.has("array_task_id") and job.state != "PENDING":
            continue
        lines, last_error = _act(_reference(job), action)
        sys.stderr.write("".join(line + "\n" for line in lines))
        failed = failed or bool(lines)
    if failed:
        sys.stderr.write(f"slurm_suspend error: {last_error or 'No error'}\n")
    return int(failed)


def _reference(job: Message) -> str:
    if job.has("array_task_id"):
        return f"{job.array_job_id}_{job.array_task_id}"
    if job.array_job_id:
        return f"{job.array_job_id}_[{job.array_tasks}]"
    return str(job.job_id)
