"""squeue: view the jobs in the queue, as Slurm 22.05's squeue prints them.

Parses the options, asks the controller for the jobs (GetJobs, filtered
there by id, user, partition, state and name), sorts them with Slurm's sort
keys and prints the ``-o``/``-O`` columns (cli.squeue_fields), or ``--json``;
``-s`` lists job steps instead (cli.squeue_steps).

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys
import time

from cli import clusters, common, fmt, squeue_arrays, squeue_env
from cli import squeue_fields as fields
from cli.opts import NO_ARG, OPTIONAL, REQUIRED, Option
from minislurm import hostlist
from minislurm.arrays import TaskSet, parse_job_ref
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "squeue"
DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
# "%all": every field, bar-separated, in Slurm's order.
ALL_FIELDS = "|".join("%" + c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

OPTIONS = [
    Option("account", "A", REQUIRED),
    Option("all", "a"),
    Option("array", "r"),
    Option("array-unique"),
    Option("clusters", "M", REQUIRED),
    Option("cluster", "", REQUIRED, dest="clusters"),
    Option("federation"),
    Option("format", "o", REQUIRED),
    Option("Format", "O", REQUIRED),
    Option("help"),
    Option("hide"),
    Option("iterate", "i", REQUIRED),
    Option("jobs", "j", OPTIONAL),
    Option("json"),
    Option("licenses", "L", REQUIRED),
    Option("local"),
    Option("long", "l"),
    Option("me"),
    Option("name", "n", REQUIRED),
    Option("noconvert"),
    Option("nodelist", "w", REQUIRED),
    Option("noheader", "h"),
    Option("partition", "p", REQUIRED),
    Option("priority", "P"),
    Option("qos", "q", REQUIRED),
    Option("reservation", "R", REQUIRED),
    Option("sibling"),
    Option("sort", "S", REQUIRED),
    Option("start"),
    Option("states", "t", REQUIRED),
    Option("steps", "s", OPTIONAL),
    Option("usage"),
    Option("user", "u", REQUIRED),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V"),
]

# Slurm 22.05's own texts (its tabs and a trailing blank written as escapes).
USAGE = """\
Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]
              [-n name] [-o format] [-p partitions] [--qos qos]
              [--reservation reservation] [--sort fields] [--start]
              [--step step_id] [-t states] [-u user_name] [--usage]
              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]
\t      [-ahjlrsv]
"""

HELP = """\
Usage: squeue [OPTIONS]
  -A, --account=account(s)        comma separated list of accounts
\t\t\t\t  to view, default is all accounts
  -a, --all                       display jobs in hidden partitions
      --array-unique              display one unique pending job array
                                  element per line
      --federation                Report federated information if a member
                                  of one
  -h, --noheader                  no headers on output
      --hide                      do not display jobs in hidden partitions
  -i, --iterate=seconds           specify an interation period
  -j, --job=job(s)                comma separated list of jobs IDs
                                  to view, default is all
      --json                      Produce JSON output
      --local                     Report information only about jobs on the
                                  local cluster. Overrides --federation.
  -l, --long                      long report
  -L, --licenses=(license names)  comma separated list of license names to view
  -M, --clusters=cluster_name     cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default. Implies --local.
  -n, --name=job_name(s)          comma separated list of job names to view
      --noconvert                 don't convert units from their original type
                                  (e.g. 2048M won't be converted to 2G).
  -o, --format=format             format specification
  -O, --Format=format             format specification
  -p, --partition=partition(s)    comma separated list of partitions
\t\t\t\t  to view, default is all partitions
  -q, --qos=qos(s)                comma separated list of qos's
\t\t\t\t  to view, default is all qos's
  -R, --reservation=name          reservation to view, default is all
  -r, --array                     display one job array element per line
      --sibling                   Report information about all sibling jobs
                                  on a federated cluster. Implies --federation.
  -s, --step=step(s)              comma separated list of job steps
\t\t\t\t  to view, default is all
  -S, --sort=fields               comma separated list of fields to sort on
      --start                     print expected start times of pending jobs
  -t, --states=states             comma separated list of states to view,
\t\t\t\t  default is pending and running,
\t\t\t\t  '--states=all' reports all states
  -u, --user=user_name(s)         comma separated list of users to view
      --name=job_name(s)          comma separated list of job names to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --nodelist=hostlist         list of nodes to view, default is\x20
\t\t\t\t  all nodes
      --yaml                      Produce YAML output

Help options:
  --help                          show this help message
  --usage                         display a brief summary of squeue options
"""


class Query:
    """What one squeue invocation asks for and how it prints it."""

    def __init__(self) -> None:
        self.request: dict[str, object] = {}
        self.no_user_matches = False  # -u named only unknown users
        self.accounts: list[str] = []
        self.qos: list[str] = []
        self.reservations: list[str] = []
        self.nothing = False  # -j "" or -L: no job can match
        self.nodes: set[str] = set()
        self.columns: list[fmt.Column] = []
        self.long_names = False  # columns come from -O
        self.sort = fields.DEFAULT_SORT
        self.header = True
        self.date = False
        self.iterate = 0
        self.json = False
        self.tasks: dict[int, TaskSet] = {}  # -j's array tasks, by array
        self.expand = False  # -r: one line per array task
        self.unique = False  # --array-unique: an array's pending tasks apart when they differ
        self.cluster: str | None = None  # -M: the cluster named (printed above the header)


def parse_states(text: str) -> tuple[list[str], bool]:
    """Read ``-t``: state names or compact codes, any case, or ``all``.

    Args:
        text: the option's value.

    Returns:
        ``(state names, all_states)``.

    Raises:
        CommandError: an unknown state (Slurm's two-line message).
    """
    names: list[str] = []
    for word in fmt.split_list(text):
        upper = word.upper()
        if upper == "ALL":
            return [], True
        name = fmt.job_state_name(upper)
        if name is None:
            valid = ",".join(fmt.JOB_STATES)
            raise common.CommandError(
                f"error: Invalid job state specified: {word}\n"
                f"{PROG}: error: Valid job states include: {valid}\n"
            )
        names.append(name)
    return names, False


def parse_job_ids(text: str) -> tuple[list[int], dict[int, TaskSet]]:
    """Read ``-j``: job ids and array tasks (``12``, ``16_4``, ``16_[1-3]``).

    Args:
        text: the option's value.

    Returns:
        ``(ids, tasks)``: plain ids, and the tasks named of each array.

    Raises:
        CommandError: a malformed id.
    """
    ids: list[int] = []
    tasks: dict[int, TaskSet] = {}
    for word in fmt.split_jobs(text):
        try:
            job_id, named, _ = parse_job_ref(word)
        except ValueError:  # Slurm reads the leading number, as strtol does
            digits = word[: len(word) - len(word.lstrip("0123456789"))]
            job_id, named = int(digits or 0), None
        if not job_id or job_id > 0xFFFFFFFF:
            raise common.CommandError(f"error: Invalid job id: {word}")
        if named is None:
            ids.append(job_id)
        else:
            known = tasks.get(job_id, TaskSet())
            tasks[job_id] = TaskSet.of([*known, *named])
    return ids, tasks


def _users(values: dict[str, object], query: Query) -> list[str]:
    users = fmt.split_list(str(values["user"])) if "user" in values else []
    if values.get("me"):
        users.append(fmt.user_name(os.getuid()))
    valid = []
    for user in users:
        if fmt.resolve_user(user) is None:
            sys.stderr.write(f"{PROG}: error: Invalid user: {user}\n\n")
        else:
            valid.append(user)
    query.no_user_matches = bool(users) and not valid
    return valid


def check_format_options(values: dict[str, object]) -> None:
    """Reject ``-o`` with ``-O``, and either with ``-l``, in Slurm's words.

    Args:
        values: the parsed options.

    Raises:
        CommandError: two of them were given.
    """
    if "format" in values and "Format" in values:
        names = ["-o (--format)", "-O (--Format)"]
        if list(values).index("Format") < list(values).index("format"):
            names.reverse()  # Slurm names the option given first
        raise common.CommandError(f"error: {names[0]} is incompatible with {names[1]}")
    if values.get("long") and ("format" in values or "Format" in values):
        raise common.CommandError(
            "fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
            "Please remove one and retry."
        )


def _columns(values: dict[str, object], query: Query) -> None:
    check_format_options(values)
    long_spec = values.get("Format", None if values.get("long") else values.get("env_Format"))
    if long_spec is not None:
        query.long_names = True
        query.columns, errors = fmt.parse_long_format(str(long_spec), fields.LONG)
    else:
        given = "format" if "format" in values or values.get("long") else "env_format"
        spec = str(values.get(given, ""))
        if given not in values:
            spec = (
                LONG_FORMAT
                if values.get("long")
                else (START_FORMAT if values.get("start") else DEFAULT_FORMAT)
            )
        query.columns, errors = fmt.parse_format(spec.replace("%all", ALL_FIELDS), fields.SHORT)
    for code in errors:
        sys.stderr.write(f"{PROG}: error: Invalid job format specification: {code}\n")


def build_query(values: dict[str, object], rest: list[str]) -> Query:
    """Turn parsed options into a GetJobs request and printing choices.

    Args:
        values: the parsed options.
        rest: the positional arguments (only a ``-j`` list may follow ``-j``).

    Returns:
        The query.

    Raises:
        CommandError: a bad value or an unexpected argument.
    """
    query = Query()
    jobs = values.get("jobs")
    if jobs == "" and rest:  # "-j 123": Slurm takes the next word as -j's value
        jobs = rest.pop(0)
        query.nothing = not jobs  # -j "": a list of no job
    if rest:
        sys.stdout.write(USAGE)
        raise common.CommandError(f"error: Unrecognized option: {rest[0]}")
    request = query.request
    if jobs:
        request["job_ids"], query.tasks = parse_job_ids(str(jobs))
        if query.tasks:
            request["array_tasks"] = [f"{a}_[{t}]" for a, t in query.tasks.items()]
    users = _users(values, query)
    if users:
        request["users"] = users
    for option, key in (("partition", "partitions"), ("name", "names")):
        if option in values:
            request[key] = fmt.split_list(str(values[option]))
    states_text = values.get("states") or ("PENDING" if values.get("start") else "")
    if states_text:
        request["states"], request["all_states"] = parse_states(str(states_text))
    query.accounts = fmt.split_list(str(values.get("account", "")))
    query.qos = fmt.split_list(str(values.get("qos", "")))
    query.reservations = fmt.split_list(str(values.get("reservation", "")))
    query.nothing = query.nothing or bool(values.get("licenses"))  # no job holds a license
    if "nodelist" in values:
        query.nodes = expand_nodes(str(values["nodelist"]))
    _columns(values, query)
    query.sort = str(values.get("sort") or ("S" if values.get("start") else fields.DEFAULT_SORT))
    query.header = not values.get("noheader")
    query.iterate = iterate_seconds(values)
    query.date = (bool(values.get("long")) or query.iterate > 0) and query.header
    query.json = bool(values.get("json"))
    query.expand = bool(values.get("array"))
    query.unique = bool(values.get("array_unique"))
    return query


def expand_nodes(expr: str) -> set[str]:
    """Read ``-w``: a hostlist expression.

    Args:
        expr: e.g. ``n[1-2]``.

    Returns:
        The node names.

    Raises:
        CommandError: a malformed expression.
    """
    try:
        return set(hostlist.expand(expr))
    except ValueError:
        raise common.CommandError(f"error: Invalid node name {expr}") from None


def check_nodes(names: set[str]) -> None:
    """Refuse a ``-w`` name the controller does not know, as Slurm's squeue does.

    Args:
        names: the node names of ``-w``.

    Raises:
        CommandError: ``Invalid node name X`` for the first unknown one.
    """
    try:
        known = {node.name for node in common.call("GetNodes", names=sorted(names)).nodes}
    except RpcError as err:
        raise common.CommandError(f"error: slurm_load_node: {common.rpc_message(err)}") from None
    unknown = sorted(names - known)
    if unknown:
        raise common.CommandError(f"error: Invalid node name {unknown[0]}")


def iterate_seconds(values: dict[str, object]) -> int:
    """Read ``-i``: seconds between reports (0: report once).

    Args:
        values: the parsed options.

    Returns:
        The period.

    Raises:
        CommandError: not a positive number.
    """
    if "iterate" not in values:
        return 0
    text = str(values["iterate"])
    if not text.isdigit() or int(text) == 0:
        raise common.CommandError(f"error: --iterate={text}\n")
    return int(text)


# --------------------------------------------------------------------------- output


def select_jobs(jobs: list[Message], query: Query) -> list[Message]:
    """Apply the filters the controller does not: accounts, QOS, nodes, unknown users.

    An array's pending tasks that have records of their own then show in its
    line (unless ``-r``, ``--array-unique`` or ``-j`` naming its tasks).

    Args:
        jobs: the jobs of the reply.
        query: the query.

    Returns:
        The jobs to sort and print.
    """
    if query.no_user_matches or query.nothing:
        return []
    selected = [
        job
        for job in jobs
        if (not query.accounts or job.account in query.accounts)
        and (not query.qos or job.qos in query.qos)
        and (not query.reservations or job.reservation in query.reservations)
        and (not query.nodes or query.nodes.intersection(hostlist.expand(job.nodes)))
    ]
    if query.expand or query.unique:
        return selected
    return squeue_arrays.combine(selected, query.tasks.keys())


def header_line(query: Query) -> str:
    """The header line of the columns.

    Args:
        query: the query (its columns).

    Returns:
        The line, without a newline.
    """
    return fmt.render(query.columns, lambda c: fields.header_text(c, query.long_names))


def job_line(query: Query, job: Message, now: int) -> str:
    """One job's line.

    Args:
        query: the query (its columns).
        job: a JobInfo.
        now: the reply's time.

    Returns:
        The line, without a newline.
    """
    return fmt.render(query.columns, lambda c: fields.value_text(c, job, now, query.long_names))


def print_table(query: Query, reply: Message) -> None:
    """Print the header and the sorted jobs.

    Args:
        query: the query.
        reply: the GetJobs reply.

    Raises:
        CommandError: an unknown sort key (after the header, as Slurm).
    """
    out = sys.stdout
    if query.date:
        out.write(fmt.date_line() + "\n")
    if query.header:
        if query.cluster:
            out.write(f"CLUSTER: {query.cluster}\n")
        out.write(header_line(query) + "\n")
        out.flush()
    jobs = fields.sort_jobs(select_jobs(list(reply.jobs), query), query.sort, reply.now)
    # As Slurm's squeue, an array record's tasks are listed where the record sorts.
    jobs = squeue_arrays.expand(jobs, query.expand, query.tasks)
    out.write("".join(job_line(query, job, reply.now) + "\n" for job in jobs))


def fetch(request: dict[str, object]) -> Message | None:
    """GetJobs, with Slurm's ``slurm_load_jobs error`` on failure.

    Args:
        request: the GetJobs fields.

    Returns:
        The reply, or None after printing the error.
    """
    try:
        return common.call("GetJobs", **request)
    except RpcError as err:
        sys.stderr.write(f"slurm_load_jobs error: {common.rpc_message(err)}\n")
        return None


def run(values: dict[str, object], rest: list[str]) -> int:
    """squeue's work after option parsing.

    Args:
        values: the parsed options.
        rest: positional arguments.

    Returns:
        The exit status.
    """
    if "steps" in values:
        from cli import squeue_steps  # only -s pays for it

        return squeue_steps.run(values, rest)
    query = build_query(values, rest)
    query.cluster = clusters.requested(PROG, values)
    if query.nodes:
        check_nodes(query.nodes)
    if query.json:
        reply = fetch({"all_states": True})
        if reply is None:
            return 1
        from cli import squeue_json  # only --json pays for it

        sys.stdout.write(squeue_json.json_text(reply) + "\n")
        return 0
    while True:
        reply = fetch(query.request)
        if reply is None:
            return 1
        print_table(query, reply)
        if not query.iterate:
            return 0
        sys.stdout.write("\n")
        sys.stdout.flush()
        time.sleep(query.iterate)


def _squeue(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE)
    return run(squeue_env.with_environment(values, os.environ), rest)


def main(argv: list[str] | None = None) -> int:
    """Run squeue.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _squeue, argv)
