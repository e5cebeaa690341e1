"""``scontrol update JobId=... KEY=VALUE...``: change jobs as Slurm 22.05's scontrol does.

Keys are matched as Slurm matches them (case-insensitive abbreviations of
a minimum length, in Slurm's order) and a key without ``=`` takes the next
word as its value (``update job 42 TimeLimit=1:30:00``). Supported: JobId,
ArrayTaskThrottle, Comment, TimeLimit (``+N``/``-N``/``+=N``), Priority,
Nice, NumTasks, Requeue, NumNodes (``N``, ``N-M``, ``ALL``), Partition,
QOS, ReservationName, Name/JobName, ExcNodeList, NodeList/ReqNodeList,
Account, Dependency, StartTime/EligibleTime, UserID, Deadline, WorkDir,
MailType, MailUser, Gres. Without a JobId, ``JobName=`` names the jobs to change.
Other keys Slurm knows get ``Update of this parameter is not supported``.
Each job of the list gets its own call; a failure is ``<error> for job <id>``.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import pwd
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cli import common
from cli.scontrol_hold import INVALID_ID, group_lines, job_items
from cli.scontrol_jobkeys import key_meaning, named
from cli.timespec import parse_time
from minislurm import jobopts, units
from minislurm.arrays import parse_job_ref
from minislurm.wire.h2grpc import RpcError

ALL_NODES = 0xFFFFFFFF  # NumNodes=ALL
UINT32_MAX = 0xFFFFFFFF


class Abort(Exception):
    """Ends the update: ``message`` goes to stderr, ``status`` is the exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _error(text: str, status: int = 1) -> Abort:
    return Abort(f"scontrol: error: {text}", status)


@dataclass
class Update:
    """What the arguments asked for so far."""

    job_ids: str = ""
    name: str = ""  # JobName=, which names the jobs when no JobId is given
    uid: int | None = None  # UserID=: only that user's jobs of that name
    changes: dict[str, object] = field(default_factory=dict)
    count: int = 0
    resize: bool = False  # NumNodes or ReqNodeList: one job only


def parse_nice(text: str) -> int:
    """Read ``Nice=`` like C's ``strtol``: a leading signed integer, else 0.

    Args:
        text: the value.

    Returns:
        The number.

    Raises:
        Abort: out of Slurm's range.
    """
    number = _strtol(text)
    if abs(number) > jobopts.NICE_LIMIT:
        raise _error(f"Nice value out of range (+/- {jobopts.NICE_LIMIT}). Value ignored")
    return number


def _strtol(text: str) -> int:
    end = 1 if text[:1] in ("+", "-") else 0
    while end < len(text) and text[end].isdigit():
        end += 1
    return int(text[:end]) if end and text[:end] not in ("+", "-") else 0


def _unsigned(text: str, key: str, limit: int = UINT32_MAX) -> int:
    """Slurm's parse_uint32/parse_uint16: digits only, in range."""
    if not text.isdigit() or int(text) > limit:
        raise _error(f"Invalid {key} value: {text}")
    return int(text)


def _time_limit(value: str, sign: str, upd: Update) -> int:
    """``TimeLimit=``: a limit, or ``+N``/``-N`` minutes relative to the current one."""
    if value[:1] in ("+", "-"):
        if sign:
            raise _error("Invalid syntax, variations of +=- are not accepted.")
        sign, value = value[0], value[1:]
    try:
        minutes = units.parse_time_limit(value)
    except ValueError:
        raise _error("Invalid TimeLimit value") from None
    if not sign:
        return minutes
    if not upd.job_ids:
        raise _error("JobId must precede TimeLimit increment or decrement")
    current = _current_limit(upd.job_ids)
    if units.INFINITE in (current, minutes):
        raise _error("Invalid TimeLimit value")
    if sign == "+":
        return minutes + current
    if minutes >= current:
        raise _error(f"TimeLimit decrement larger than current time limit ({minutes} > {current})")
    return current - minutes


def _current_limit(job_text: str) -> int:
    try:
        job_id, tasks, _ = parse_job_ref(job_text)
        which = {"array_tasks": [job_text]} if tasks is not None else {"job_ids": [job_id]}
        reply = common.call("GetJobs", all_states=True, **which)
    except (ValueError, RpcError) as err:
        message = common.rpc_message(err) if isinstance(err, RpcError) else "Invalid job id"
        raise _error(f"Could not load state information for job {job_text}: {message}") from None
    return int(reply.jobs[0].time_limit)


def _node_count(value: str, upd: Update) -> None:
    """``NumNodes=N``, ``N-M`` or ``ALL``; Slurm reports a bad count yet exits 0."""
    low_text, dash, high_text = value.partition("-")
    if value.upper() == "ALL":
        upd.changes["min_nodes"] = ALL_NODES
    elif low_text.isdigit() and (not dash or high_text.isdigit()):
        upd.changes["min_nodes"] = int(low_text)
        if dash:
            upd.changes["max_nodes"] = int(high_text)
    else:
        raise _error(f'Invalid numeric value "{value}" for requested node count.', status=0)
    upd.resize = True


def _time_of(value: str) -> int | None:
    """A StartTime/Deadline, or None after Slurm's message (the key then counts for nothing)."""
    try:
        return parse_time(value, time.time())
    except ValueError as err:
        sys.stderr.write(f"{err}\n")
        return None


def _set(name: str, convert: Callable[[str], object] = str) -> Callable[[str, Update], None]:
    def apply(value: str, upd: Update) -> None:
        upd.changes[name] = convert(value)
        upd.count += 1

    return apply


def _begin(value: str, upd: Update) -> None:
    when = _time_of(value)
    if when is not None:
        upd.changes["begin_time"] = max(when, int(time.time()))
        upd.count += 1


def _deadline(value: str, upd: Update) -> None:
    when = _time_of(value)
    if when is not None:
        upd.changes["deadline"] = when
        upd.count += 1


def _mail_type(value: str) -> str:
    try:
        return jobopts.parse_mail_type(value) if value.upper() != "NONE" else ""
    except ValueError:
        raise Abort(f"Invalid MailType: {value}") from None


def _user(value: str, upd: Update) -> None:
    try:
        upd.uid = int(value) if value.isdigit() else pwd.getpwnam(value).pw_uid
    except KeyError:
        raise Abort(f"Invalid UserID: {value}\nRequest aborted") from None


def _job_id(value: str, upd: Update) -> None:
    upd.job_ids = value


def _name(value: str, upd: Update) -> None:
    upd.name = value
    _set("name")(value, upd)


def _nodes(value: str, upd: Update) -> None:
    _node_count(value, upd)
    upd.count += 1


def _req_nodes(value: str, upd: Update) -> None:
    upd.resize = True
    _set("req_nodes")(value, upd)


Handler = Callable[[str, Update], None]
_SUPPORTED: dict[str, Handler] = {
    "JobId": _job_id,
    "ArrayTaskThrottle": _set("array_throttle", lambda v: str(max(_strtol(v), 0))),
    "Comment": _set("comment"),
    "Priority": _set("priority", lambda v: _unsigned(v, "Priority")),
    "Nice": _set("nice", parse_nice),
    "NumTasks": _set("num_tasks", lambda v: _unsigned(v, "NumTasks")),
    "Requeue": _set("requeue", lambda v: bool(_unsigned(v, "Requeue", 0xFFFF))),
    "NumNodes": _nodes,
    "Partition": _set("partition"),
    "QOS": _set("qos"),
    "ReservationName": _set("reservation"),
    "Name": _name,
    "ExcNodeList": _set("exc_nodes"),
    "ReqNodeList": _req_nodes,
    "Account": _set("account"),
    "Dependency": _set("dependency"),
    "StartTime": _begin,
    "UserID": _user,
    "Deadline": _deadline,
    "WorkDir": _set("work_dir"),
    "MailType": _set("mail_type", _mail_type),
    "MailUser": _set("mail_user"),
    "Gres": _set("gres"),
}


def update_job(args: list[str]) -> int:
    """``update KEY=VALUE...`` of jobs: parse as Slurm does, then one call per job.

    Args:
        args: the arguments after ``update``.

    Returns:
        The exit status.
    """
    try:
        upd = parse_arguments(args)
        ids = _job_list(upd)
    except Abort as stop:
        sys.stderr.write(stop.message + "\n")
        return stop.status
    status = 0
    for item in ids:
        lines = _update_one(item, upd.changes)
        sys.stderr.write("".join(line + "\n" for line in lines))
        status |= bool(lines)
    return status


def parse_arguments(args: list[str]) -> Update:
    """The update the arguments ask for.

    Args:
        args: the arguments after ``update``.

    Returns:
        The job ids or name and the changes.

    Raises:
        Abort: Slurm's message for a bad argument, or for no change at all.
    """
    upd, i = Update(), 0
    while i < len(args):
        arg = args[i]
        tag, eq, value = arg.partition("=")
        sign = ""
        if eq and tag[-1:] in ("+", "-"):
            tag, sign = tag[:-1], tag[-1]
        if not eq:
            if named(arg, "Nice", 2):
                upd.changes["nice"] = 100
                upd.count += 1
                i += 1
                continue
            if i + 1 >= len(args):
                raise Abort(f"Invalid input: {arg}\nRequest aborted")
            i += 1
            value = args[i]
        _apply(tag, value, sign, args[i], upd)
        i += 1
    if upd.count == 0:
        raise Abort("No changes specified")
    return upd


def _apply(tag: str, value: str, sign: str, word: str, upd: Update) -> None:
    meaning = key_meaning(tag)
    if not meaning:
        raise Abort(f"Update of this parameter is not supported: {word}\nRequest aborted")
    if meaning == "TimeLimit":
        upd.changes["time_limit"] = _time_limit(value, sign, upd)
        upd.count += 1
        return
    if sign:
        raise _error(f"Option {tag} does not accept [+|-]= syntax")
    _SUPPORTED[meaning](value, upd)


def _job_list(upd: Update) -> list[str]:
    """The jobs to change: the JobId list, or those of the JobName."""
    text = upd.job_ids or (_ids_of_name(upd.name, upd.uid) if upd.name else "")
    if not text:
        raise _error("No job ID specified")
    if upd.resize and not _single(text):
        raise _error(f"Invalid job ID {text}")
    items = job_items(text)
    if items is None:
        raise Abort(f"Invalid job id specified for job {text}")
    return items


def _single(text: str) -> bool:
    job, under, task = text.partition("_")
    return job.isdigit() and (not under or task.isdigit())


def _ids_of_name(name: str, uid: int | None) -> str:
    try:
        jobs = common.call("GetJobs", all_states=True).jobs
    except RpcError as err:
        raise _error(f"Could not load state information: {common.rpc_message(err)}") from None
    if not jobs:
        raise _error(f"JobName {name} not found")
    ids = [
        f"{j.array_job_id}_{j.array_task_id}" if j.has("array_task_id") else str(j.job_id)
        for j in sorted(jobs, key=lambda j: j.job_id)
        if j.name == name and (uid is None or j.uid == uid)
    ]
    if not ids:
        if uid is None:
            raise _error(f"No jobs with name '{name}'")
        raise _error(f"No jobs with user ID {uid} and name '{name}'")
    return ",".join(ids)


def _update_one(item: str, changes: dict[str, object]) -> list[str]:
    """One UpdateJob call per job, or per task of an array's: Slurm's lines for what failed."""
    try:
        job_id, tasks, _ = parse_job_ref(item)
    except ValueError:
        return [f"{INVALID_ID} for job {item}"]
    if tasks is None:
        error = _call_update(job_id, None, changes)
        return [f"{error} for job {item}"] if error else []
    groups: dict[str, set[int]] = {}
    for task in tasks:
        groups.setdefault(_call_update(job_id, task, changes), set()).add(task)
    return group_lines(job_id, groups)


def _call_update(job_id: int, task: int | None, changes: dict[str, object]) -> str:
    target: dict[str, object] = {} if task is None else {"array_task_id": task}
    try:
        common.call("UpdateJob", job_id=job_id, requester_uid=os.getuid(), **target, **changes)
    except RpcError as err:
        return common.rpc_message(err)
    return ""
