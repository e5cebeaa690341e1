"""squeue -s / --steps: the running job steps, as Slurm 22.05's squeue prints them.

Steps have fields of their own (cli.squeue_step_fields: the ``-o`` codes
and ``-O`` names valid for steps, and the step sort, by partition then step
id) and Slurm's filters for steps (jobs, steps, partitions, nodes and users;
names, accounts, QOS and states are ignored, as in Slurm). The controller
sends Slurm's step list (GetSteps ``running``: batch steps included);
everything else happens here.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys
import time

from cli import common, fmt, squeue
from cli import squeue_step_fields as fields
from minislurm import hostlist
from minislurm.arrays import TaskSet
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "squeue"
DEFAULT_FORMAT = "%.15i %.8j %.9P %.8u %.9M %N"


class StepQuery:
    """What one ``squeue -s`` asks for and how it prints it."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, int | None, int]] | None = None  # (job, task, step)
        self.job_ids: list[int] = []
        self.tasks: dict[int, TaskSet] = {}
        self.partitions: list[str] = []
        self.nodes: set[str] = set()
        self.uids: set[int] | None = None  # None: any user
        self.columns: list[fmt.Column] = []
        self.table = fields.SHORT
        self.sort = fields.DEFAULT_SORT
        self.header = True
        self.date = False
        self.iterate = 0


def parse_steps(text: str) -> list[tuple[int, int | None, int]]:
    """Read ``-s``'s list as Slurm's ``_build_step_list`` does: ``12.0,16_4.1``.

    Like Slurm, a step that is not a number reads as step 0 (``12.batch``
    is ``12.0``) and text after the step is ignored.

    Args:
        text: the option's value.

    Returns:
        ``(job id, array task or None, step id)`` of each item.

    Raises:
        CommandError: an item without a step, or a job id or step below 0.
    """
    out: list[tuple[int, int | None, int]] = []
    for item in (i for i in text.split(",") if i):
        parts = [p for p in item.split(".") if p]
        if not parts:
            break
        job_name = parts[0]
        if len(parts) < 2:
            raise common.CommandError(f"error: Invalid job_step id: {job_name}.??")
        job_id, rest = fmt.strtol(job_name)
        task = fmt.strtol(rest[1:])[0] if rest.startswith("_") else None
        step_id = fmt.strtol(parts[1])[0]
        if job_id <= 0 or step_id < 0:
            raise common.CommandError(f"error: Invalid job_step id: {job_name}.{parts[1]}")
        out.append((job_id, task, step_id))
    return out


def _uids(values: dict[str, object]) -> set[int] | None:
    names = fmt.split_list(str(values["user"])) if "user" in values else []
    if values.get("me"):
        names.append(fmt.user_name(os.getuid()))
    if not names:
        return None
    uids = set()
    for name in names:
        uid = fmt.resolve_user(name)
        if uid is None:
            sys.stderr.write(f"{PROG}: error: Invalid user: {name}\n\n")
        else:
            uids.add(uid)
    return uids


def _selection(values: dict[str, object], rest: list[str], query: StepQuery) -> None:
    """``-s``'s list (or the first argument), ``-j``'s, and Slurm's rule between them."""
    steps, jobs = str(values["steps"]), values.get("jobs")
    if rest:  # the first word is the list of the option that came without one
        if jobs == "":
            jobs = rest.pop(0)
        elif not steps:
            steps = rest.pop(0)
    if rest:
        sys.stdout.write(squeue.USAGE)
        raise common.CommandError(f"error: Unrecognized option: {rest[0]}")
    if steps:
        query.steps = parse_steps(steps)
    if jobs == "":
        raise common.CommandError("error: Incompatible options --jobs and --steps")
    if jobs:
        query.job_ids, query.tasks = squeue.parse_job_ids(str(jobs))


def _columns(values: dict[str, object], query: StepQuery) -> None:
    squeue.check_format_options(values)
    if "Format" in values:
        spec = ",".join(fields.canonical(token) for token in str(values["Format"]).split(","))
        query.table = fields.LONG
        query.columns, errors = fmt.parse_long_format(spec, fields.LONG)
    else:
        spec = str(values.get("format") or DEFAULT_FORMAT)
        if spec.lower() == "%all":
            spec = fields.ALL_FIELDS
        query.columns, errors = fmt.parse_format(spec, fields.SHORT)
    for name in errors:
        sys.stderr.write(f"{PROG}: error: Invalid job step format specification: {name}\n")


def build_query(values: dict[str, object], rest: list[str]) -> StepQuery:
    """Turn the parsed options into a step query.

    Args:
        values: the parsed options.
        rest: the positional arguments (the list of ``-s`` or ``-j`` given without one).

    Returns:
        The query.

    Raises:
        CommandError: a bad step or job id, ``-j`` without a list, a bad option.
    """
    query = StepQuery()
    _selection(values, rest, query)
    query.partitions = fmt.split_list(str(values.get("partition", "")))
    if "nodelist" in values:
        query.nodes = squeue.expand_nodes(str(values["nodelist"]))
    query.uids = _uids(values)
    _columns(values, query)
    query.sort = str(values.get("sort") or fields.DEFAULT_SORT)
    query.header = not values.get("noheader")
    query.iterate = squeue.iterate_seconds(values)
    query.date = (bool(values.get("long")) or query.iterate > 0) and query.header
    return query


# --------------------------------------------------------------------------- output


def _job_named(query: StepQuery, step: Message) -> bool:
    """Whether ``-j`` names the step's job: its id, its array's, or its array task."""
    if step.job_id in query.job_ids or (step.array_job_id and step.array_job_id in query.job_ids):
        return True
    named = query.tasks.get(step.array_job_id) if step.array_job_id else None
    return named is not None and step.array_task_id in named


def _step_named(query: StepQuery, step: Message) -> bool:
    """Whether ``-s`` names the step (``J.S``: by job or array id; ``A_T.S``: by task)."""
    assert query.steps is not None
    for job_id, task, step_id in query.steps:
        if step_id != step.step_id:
            continue
        if task is None and job_id in (step.job_id, step.array_job_id):
            return True
        if task is not None and step.array_job_id == job_id and step.array_task_id == task:
            return True
    return False


def select_steps(steps: list[Message], query: StepQuery) -> list[Message]:
    """Slurm's ``_filter_step``: jobs, partitions, steps, nodes and users.

    Args:
        steps: the steps of the reply.
        query: the query.

    Returns:
        The steps to print.
    """
    return [
        step
        for step in steps
        if (not (query.job_ids or query.tasks) or _job_named(query, step))
        and (not query.partitions or step.partition in query.partitions)
        and (query.steps is None or _step_named(query, step))
        and (not query.nodes or query.nodes.intersection(hostlist.expand(step.nodelist)))
        and (query.uids is None or step.uid in query.uids)
    ]


def _cell(column: fmt.Column, text: str) -> tuple[str, bool]:
    return text, column.code not in fields.UNCUT


def header_line(query: StepQuery) -> str:
    """The header line (START_TIME's header is left-justified, as in Slurm).

    Args:
        query: the query (its columns).

    Returns:
        The line, without a newline.
    """
    columns = [
        fmt.Column(c.code, c.width, False, c.suffix) if c.code in ("S", "starttime") else c
        for c in query.columns
    ]
    return fmt.render(columns, lambda c: _cell(c, query.table[c.code][0]))


def step_line(query: StepQuery, step: Message, view: fields.View) -> str:
    """One step's line.

    Args:
        query: the query (its columns).
        step: a StepInfo.
        view: the reply's time and cluster.

    Returns:
        The line, without a newline.
    """
    return fmt.render(query.columns, lambda c: _cell(c, query.table[c.code][1](step, view)))


def print_steps(query: StepQuery, reply: Message) -> None:
    """Print the header and the chosen steps, sorted.

    Args:
        query: the query.
        reply: the GetSteps reply.
    """
    out = sys.stdout
    if query.date:
        out.write(fmt.date_line() + "\n")
    if query.header:
        out.write(header_line(query) + "\n")
    view = fields.View(int(reply.now), str(reply.cluster))
    steps = fields.sort_steps(select_steps(list(reply.steps), query), query.sort, view.now)
    out.write("".join(step_line(query, step, view) + "\n" for step in steps))


def run(values: dict[str, object], rest: list[str]) -> int:
    """``squeue -s``'s work after option parsing.

    Args:
        values: the parsed options.
        rest: positional arguments.

    Returns:
        The exit status.
    """
    query = build_query(values, rest)
    while True:
        try:
            reply = common.call("GetSteps", running=True)
        except RpcError as err:
            sys.stderr.write(f"slurm_get_job_steps error: {common.rpc_message(err)}\n")
            return 1
        print_steps(query, reply)
        if not query.iterate:
            return 0
        sys.stdout.write("\n")
        sys.stdout.flush()
        time.sleep(query.iterate)
