"""scancel: cancel or signal jobs, as Slurm 22.05's scancel does.

Jobs are named by id, or chosen by filters (name, user, partition, state,
and client-side account, QOS and nodes); one CancelJobs call does the work
and its per-job results become Slurm's messages: an unknown or finished job
is silent for a plain cancel (``-v`` shows why), any failure to signal is an
error. Steps (``123.0``) are killed or signalled one by one, with the
messages and exit statuses of Slurm's step path (:func:`cancel_steps`).

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys

from cli import clusters, common, fmt, scancel_env
from cli.opts import NO_ARG, REQUIRED, Option
from minislurm import hostlist, units
from minislurm.arrays import parse_job_ref
from minislurm.wire import protowire
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "scancel"
SIGKILL = 9
INVALID_JOB_ID = "Invalid job id specified"
# Slurm's error numbers: scancel exits with a failed step's, cut to 8 bits.
NOT_NOW = "Job can not be altered now, try again later"
STEP_ERRNO = {
    "Access/permission denied": 2002,
    "Invalid user id": 2010,
    INVALID_JOB_ID: 2017,
    NOT_NOW: 2020,
}
# A plain cancel of these is not an error (the job is gone or going anyway).
_QUIET_ERRORS = frozenset((INVALID_JOB_ID, "Job/step already completing or completed"))

OPTIONS = [
    Option("account", "A", REQUIRED),
    Option("batch", "b"),
    Option("clusters", "M", REQUIRED),
    Option("full", "f"),
    Option("help"),
    Option("hurry", "H"),
    Option("interactive", "i"),
    Option("me"),
    Option("name", "n", REQUIRED),
    Option("nodelist", "w", REQUIRED),
    Option("partition", "p", REQUIRED),
    Option("qos", "q", REQUIRED),
    Option("quiet", "Q"),
    Option("signal", "s", REQUIRED),
    Option("state", "t", REQUIRED),
    Option("usage"),
    Option("user", "u", REQUIRED),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V"),
]

USAGE = """\
Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]
               [-p partition] [-Q] [-q qos] [-s signal | integer]
               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]
               [--me] [-V] [-v] [-w hosts...] [job_id]
"""

HELP = """\
Usage: scancel [OPTIONS] [job_id]
  -A, --account=account           act only on jobs charging this account
  -b, --batch                     signal batch shell for specified job
  -f, --full                      signal batch shell and all steps for specified job
  -i, --interactive               require response from user for each job
      --me                        act only on jobs of the current user
  -n, --name=job_name             act only on jobs with this name
  -p, --partition=partition       act only on jobs in this partition
  -Q, --quiet                     disable warnings
  -q, --qos=qos                   act only on jobs with this quality of service
  -s, --signal=name | integer     signal to send to job, default is SIGKILL
  -t, --state=states              act only on jobs in this state.  Valid job
                                  states are PENDING, RUNNING and SUSPENDED
  -u, --user=user_name            act only on jobs of this user
  -V, --version                   output version information and exit
  -v, --verbose                   verbosity level
  -w, --nodelist                  act only on jobs on these nodes

Help options:
  --help                          show this help message
  --usage                         display brief usage message
"""


class Plan:
    """What to cancel or signal, and how."""

    def __init__(self) -> None:
        self.job_ids: list[int] = []
        self.array_tasks: list[str] = []  # "123_4", "123_[1-3]"
        self.steps: list[tuple[str, int]] = []  # ("123" or "123_4", step id)
        self.filters: dict[str, object] = {}  # CancelJobs filter fields
        self.accounts: list[str] = []
        self.qos: list[str] = []
        self.nodes: set[str] = set()
        self.signal = 0  # 0: cancel
        self.batch = False
        self.full = False
        self.verbose = 0
        self.quiet = False
        self.interactive = False

    @property
    def client_side(self) -> bool:
        """Whether the jobs must be listed first (filters CancelJobs lacks, -i, ids AND filters)."""
        return bool(
            self.accounts
            or self.qos
            or self.nodes
            or self.interactive
            or ((self.job_ids or self.array_tasks) and self.filters)
        )

    @property
    def named(self) -> bool:
        """Whether jobs were named on the command line."""
        return bool(self.job_ids or self.array_tasks or self.steps)


def parse_job_ids(words: list[str], plan: Plan) -> None:
    """Read the jobs of the command line (each word may be a comma list):
    ``123``, array tasks ``123_4`` or ``123_[1-3]``, steps ``123.0``.

    Args:
        words: the positional arguments.
        plan: where the ids, task references and steps go.

    Raises:
        CommandError: ``Invalid job id X``.
    """
    for word in words:
        for item in fmt.split_jobs(word):
            try:
                job_id, tasks, step = parse_job_ref(item)
            except ValueError:
                job_id, tasks, step = 0, None, ""
            if not 0 < job_id <= 0xFFFFFFFF or (step and not step.isdigit()):
                raise common.CommandError(f"error: Invalid job id {item}")
            if step:
                plan.steps.append((item.partition(".")[0], int(step)))
            elif tasks is not None:
                plan.array_tasks.append(item)
            else:
                plan.job_ids.append(job_id)


class BareError(Exception):
    """An error Slurm prints without the ``scancel:`` prefix (exit status 1)."""


def parse_states(text: str) -> list[str]:
    """Read ``-t``: job state names or compact codes.

    Args:
        text: a comma-separated list.

    Returns:
        The full state names.

    Raises:
        BareError: not a job state (Slurm's two-line message).
    """
    names = []
    for word in fmt.split_list(text):
        name = fmt.job_state_name(word)
        if name is None:
            raise BareError(
                f"Invalid job state specified: {word}\n"
                "Valid job states are PENDING, RUNNING, and SUSPENDED"
            )
        names.append(name)
    return names


def parse_signal(text: str) -> int:
    """Read ``-s``: a signal name (with or without SIG) or number.

    Args:
        text: the option's value.

    Returns:
        The signal number.

    Raises:
        BareError: ``Unknown job signal: X``.
    """
    try:
        return units.parse_signal(text)
    except ValueError:
        raise BareError(f"Unknown job signal: {text}") from None


def build_plan(values: dict[str, object], rest: list[str]) -> Plan:
    """Turn parsed options and arguments into a plan.

    Args:
        values: the parsed options.
        rest: the job ids.

    Returns:
        The plan.

    Raises:
        CommandError: a bad job id or user, or nothing to act on.
        BareError: a bad signal or state.
    """
    plan = Plan()
    if "signal" in values:
        plan.signal = parse_signal(str(values["signal"]))
    parse_job_ids(rest, plan)
    plan.batch, plan.full = bool(values.get("batch")), bool(values.get("full"))
    if (plan.batch or plan.full) and not plan.signal:
        plan.signal = SIGKILL
    user = str(values.get("user", "")) or (fmt.user_name(os.getuid()) if values.get("me") else "")
    if user:
        if fmt.resolve_user(user) is None:
            raise common.CommandError(f"error: Invalid user name: {user}")
        plan.filters["user"] = user
    for option, key in (("name", "name"), ("partition", "partition")):
        if values.get(option):
            plan.filters[key] = str(values[option])
    if "state" in values:
        plan.filters["states"] = parse_states(str(values["state"]))
    plan.accounts = fmt.split_list(str(values.get("account", "")))
    plan.qos = fmt.split_list(str(values.get("qos", "")))
    if values.get("nodelist"):
        try:
            plan.nodes = set(hostlist.expand(str(values["nodelist"])))
        except ValueError:
            raise common.CommandError(f"error: Invalid node name {values['nodelist']}") from None
    if not (plan.named or plan.filters or plan.accounts or plan.qos or plan.nodes):
        raise common.CommandError("error: No job identification provided")
    plan.verbose = len(values.get("verbose", []))  # type: ignore[arg-type]
    plan.quiet = bool(values.get("quiet"))
    plan.interactive = bool(values.get("interactive"))
    return plan


def action_text(plan: Plan, job_id: int) -> str:
    """What ``-v`` says before acting on a job.

    Args:
        plan: the plan.
        job_id: the job.

    Returns:
        e.g. ``Terminating job 14`` or ``Signal 10 to batch job 14``.
    """
    if not plan.signal:
        return f"Terminating job {job_id}"
    scope = "batch job" if plan.batch else ("full job" if plan.full else "job")
    return f"Signal {plan.signal} to {scope} {job_id}"


def matches(plan: Plan, job: Message) -> bool:
    """Whether a listed job passes the filters CancelJobs cannot apply.

    Args:
        plan: the plan.
        job: a JobInfo.

    Returns:
        True to act on it.
    """
    return (
        (not plan.accounts or job.account in plan.accounts)
        and (not plan.qos or job.qos in plan.qos)
        and (not plan.nodes or bool(plan.nodes.intersection(hostlist.expand(job.nodes))))
    )


def list_targets(plan: Plan) -> list[Message]:
    """The active jobs the plan names (for client-side filters and ``-i``).

    Args:
        plan: the plan.

    Returns:
        The matching jobs (none when no named id exists).
    """
    request: dict[str, object] = {"job_ids": plan.job_ids}
    if plan.array_tasks:
        request["array_tasks"] = plan.array_tasks
    filters = plan.filters
    if "user" in filters:
        request["users"] = [filters["user"]]
    if "partition" in filters:
        request["partitions"] = [filters["partition"]]
    if "name" in filters:
        request["names"] = [filters["name"]]
    if "states" in filters:
        request["states"] = filters["states"]
    try:
        reply = common.call("GetJobs", **request)
    except RpcError as err:
        if err.code == "NOT_FOUND":
            return []
        raise
    return [job for job in reply.jobs if matches(plan, job)]


def confirm(job: Message) -> bool:
    """Ask ``-i``'s question on stdout and read the answer.

    Args:
        job: the job.

    Returns:
        True when the answer starts with y.
    """
    sys.stdout.write(
        f"Cancel job_id={job.job_id} name={job.name} partition={job.partition} [y/n]? "
    )
    sys.stdout.flush()
    answer = sys.stdin.readline()
    return answer[:1] in ("y", "Y")


def no_match_text(plan: Plan) -> str:
    """``-v``'s message when the filters select no job.

    Args:
        plan: the plan.

    Returns:
        Slurm's line (without the ``scancel: `` prefix).
    """
    words = []
    if "name" in plan.filters:
        words.append(f"job_name={plan.filters['name']}")
    if "partition" in plan.filters:
        words.append(f"partition={plan.filters['partition']}")
    if "states" in plan.filters:
        words.append("state=" + ",".join(plan.filters["states"]))  # type: ignore[arg-type]
    if "user" in plan.filters:
        words.append(f"user_name={plan.filters['user']}")
    return "error: No active jobs match ALL job filters, including: " + "".join(
        w + " " for w in words
    )


def report(plan: Plan, results: list[Message]) -> int:
    """Print the per-job errors as Slurm does and compute the exit status.

    A plain cancel of an unknown or finished job is silent (``-v`` shows it)
    and not an error; every other failure is printed (unless ``-Q``) and is.

    Args:
        plan: the plan.
        results: CancelJobs' JobResults.

    Returns:
        The exit status.
    """
    status = 0
    for result in results:
        if not result.error:
            continue
        harmless = not plan.signal and result.error in _QUIET_ERRORS
        if (plan.verbose or not harmless) and not plan.quiet:
            sys.stderr.write(
                f"{PROG}: error: Kill job error on job id {result.ref or result.job_id}: "
                f"{result.error}\n"
            )
        if not harmless:
            status = max(status, exit_status(result.error))
    return status


def exit_status(error: str) -> int:
    """scancel's exit status for a failed job: Slurm exits with its error number's low byte.

    Args:
        error: the controller's message.

    Returns:
        210 for ``Access/permission denied`` (ESLURM_ACCESS_DENIED, 2002), 228 for
        ``Job can not be altered now`` (a signal to a pending job, 2020), else 1.
    """
    if error in ("Access/permission denied", NOT_NOW):
        return STEP_ERRNO[error] & 0xFF
    return 1


def _failed(job_id: int, error: str) -> Message:
    return protowire.Message("minislurm.v1.JobResult", job_id=job_id, error=error)


def _job_ids(plan: Plan) -> list[int] | None:
    """The ids to act on, listing (and confirming) jobs first when needed;
    None when CancelJobs' own filters select them (or only task references were given)."""
    if not plan.client_side:
        return plan.job_ids or None
    targets = list_targets(plan)
    if plan.interactive:
        targets = [job for job in targets if confirm(job)]
    plan.array_tasks = []  # listed: their records are among the targets
    return [job.job_id for job in targets]


def _active_jobs(plan: Plan) -> dict[str, Message]:
    """The active jobs the steps of the plan belong to, by how the command line named them."""
    refs = [job for job, _ in plan.steps]
    named: dict[str, object] = {
        "job_ids": [int(r) for r in refs if "_" not in r],
        "array_tasks": [r for r in refs if "_" in r],
    }
    try:
        reply = common.call("GetJobs", **named)
    except RpcError as err:
        if err.code == "NOT_FOUND":
            return {}
        raise
    jobs: dict[str, Message] = {}
    for job in reply.jobs:
        jobs[str(job.job_id)] = job
        if job.has("array_task_id"):
            jobs[f"{job.array_job_id}_{job.array_task_id}"] = job
    return jobs


def _step_error(plan: Plan, ref: str, error: str) -> None:
    if not plan.quiet:
        sys.stderr.write(f"{PROG}: error: Kill job error on job step id {ref}: {error}\n")


def cancel_steps(plan: Plan) -> int:
    """``scancel 123.0``: kill or signal each step named, with Slurm's messages.

    A step of a job that is not active is an error (status 1), of a pending
    job nothing at all. A running job's step that the controller refuses is
    reported with the job's id only, and the status is the error's number
    cut to 8 bits, as Slurm's scancel exits; a signal for a step that is not
    running is silent, as in Slurm.

    Args:
        plan: the plan (its steps and signal).

    Returns:
        The exit status.
    """
    jobs = _active_jobs(plan)
    status = 0
    for ref, step in plan.steps:
        job = jobs.get(ref)
        if job is None:
            _step_error(plan, f"{ref}.{step}", INVALID_JOB_ID)
            status = max(status, 1)
            continue
        if job.state == "PENDING":
            continue
        if plan.verbose:
            what = f"Signal {plan.signal} to" if plan.signal else "Terminating"
            sys.stderr.write(f"{PROG}: {what} step {ref}.{step}\n")
        named = {"array_tasks": [ref]} if "_" in ref else {"job_ids": [int(ref)]}
        reply = common.call(
            "CancelJobs",
            step_id=step,
            has_step=True,
            signal=plan.signal,
            requester_uid=os.getuid(),
            **named,
        )
        for result in reply.results:
            if not result.error or (plan.signal and result.error == INVALID_JOB_ID):
                continue
            _step_error(plan, ref, result.error)
            status = max(status, STEP_ERRNO.get(result.error, 1) & 0xFF)
    return status


def execute(plan: Plan) -> int:
    """Carry out the plan: list the jobs when needed, then one CancelJobs call.

    Args:
        plan: the plan.

    Returns:
        The exit status.
    """
    fields: dict[str, object] = {
        "signal": plan.signal,
        "batch_only": plan.batch,
        "full": plan.full,
        "requester_uid": os.getuid(),
    }
    step_status = cancel_steps(plan) if plan.steps else 0
    unknown = report_unknown(plan) if plan.client_side else 0
    if plan.steps and not (plan.job_ids or plan.array_tasks):
        return step_status
    ids = _job_ids(plan)
    if ids is None:
        fields.update(plan.filters)
        if plan.array_tasks:
            fields["array_tasks"] = plan.array_tasks
    elif not ids:
        if plan.verbose and not plan.interactive:
            sys.stderr.write(f"{PROG}: {no_match_text(plan)}\n")
        return max(step_status, unknown)
    else:
        fields["job_ids"] = ids
        if plan.array_tasks:
            fields["array_tasks"] = plan.array_tasks
        for job_id in ids if plan.verbose else ():
            sys.stderr.write(f"{PROG}: {action_text(plan, job_id)}\n")
    try:
        reply = common.call("CancelJobs", **fields)
    except RpcError as err:
        if ids is None:
            raise
        failed = [_failed(job_id, common.rpc_message(err)) for job_id in ids]
        return max(step_status, report(plan, failed))
    if plan.verbose and ids is None:
        if not reply.results:
            sys.stderr.write(f"{PROG}: {no_match_text(plan)}\n")
        for result in reply.results:
            sys.stderr.write(f"{PROG}: {action_text(plan, result.job_id)}\n")
    return max(step_status, unknown, report(plan, list(reply.results)))


def report_unknown(plan: Plan) -> int:
    """Report the named jobs that are not active when the jobs are listed first.

    With filters or ``-i`` Slurm's scancel checks the jobs it was given
    against the queue and reports each it does not find as an error
    (a plain cancel is silent about them).

    Args:
        plan: the plan.

    Returns:
        1 when a named job is not active, else 0.
    """
    if not plan.job_ids:
        return 0
    try:
        jobs = common.call("GetJobs", job_ids=plan.job_ids).jobs
    except RpcError as err:
        if err.code != "NOT_FOUND":
            raise
        jobs = []
    known = {j.job_id for j in jobs} | {j.array_job_id for j in jobs if j.array_job_id}
    missing = [job_id for job_id in plan.job_ids if job_id not in known]
    if not plan.quiet:
        sys.stderr.write(
            "".join(
                f"{PROG}: error: Kill job error on job id {job_id}: Invalid job id specified\n"
                for job_id in missing
            )
        )
    return int(bool(missing))


def _scancel(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE)
    values, errors = scancel_env.with_environment(values, os.environ)
    clusters.requested(PROG, values)
    sys.stderr.write("".join(f"{PROG}: error: {error}\n" for error in errors))
    try:
        plan = build_plan(values, rest)
    except BareError as err:
        sys.stderr.write(f"{err}\n")
        return 1
    return execute(plan)


def main(argv: list[str] | None = None) -> int:
    """Run scancel.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _scancel, argv)
