"""sacct: report accounting data of jobs and job steps, as Slurm 22.05's sacct prints them.

Parses the options (getopt-style, Slurm's flags), makes one GetAccounting
call (the controller filters by job, user, state, time window, partition
and ``-X``), applies the filters the request cannot carry (accounts, names,
groups, nodes) and prints the ``--format`` columns (cli.sacct_fields),
delimited with ``-p``/``-P``, or ``--json`` (cli.sacct_json).

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys
import time

from cli import common, fmt, sacct_layout
from cli import sacct_fields as fields
from cli.opts import NO_ARG, REQUIRED, Option
from cli.sacct_help import HELP, USAGE
from cli.timespec import parse_time
from minislurm import hostlist

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sacct"
STEP_NAMES = ("batch", "extern", "interactive")
MAX_ARRAY_TASKS = 4_000_001  # Slurm's largest MaxArraySize
clock = time.time  # the current time (tests replace it)

OPTIONS = [
    Option("allusers", "a"),
    Option("accounts", "A", REQUIRED),
    Option("allocations", "X"),
    Option("brief", "b"),
    Option("delimiter", "", REQUIRED),
    Option("duplicates", "D"),
    Option("federation"),
    Option("helpformat", "e", dest="helpformat"),
    Option("help-fields", "", dest="helpformat"),
    Option("endtime", "E", REQUIRED),
    Option("gid", "g", REQUIRED, dest="group"),
    Option("group", "", REQUIRED, dest="group"),
    Option("help", "h"),
    Option("json"),
    Option("local"),
    Option("name", "", REQUIRED),
    Option("jobs", "j", REQUIRED, many=True),
    Option("long", "l"),
    Option("allclusters", "L"),
    Option("cluster", "", REQUIRED, dest="clusters"),
    Option("clusters", "M", REQUIRED),
    Option("nodelist", "N", REQUIRED),
    Option("noconvert"),
    Option("noheader", "n"),
    Option("fields", "", REQUIRED, dest="format", many=True),
    Option("format", "o", REQUIRED, many=True),
    Option("parsable", "p"),
    Option("parsable2", "P"),
    Option("qos", "q", REQUIRED),
    Option("partition", "r", REQUIRED),
    Option("state", "s", REQUIRED, many=True),
    Option("starttime", "S", REQUIRED),
    Option("truncate", "T"),
    Option("uid", "", REQUIRED, dest="user", many=True),
    Option("user", "u", REQUIRED, many=True),
    Option("usage", "U"),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V"),
]


class Query:
    """What one sacct invocation asks the controller for and how it prints the answer."""

    def __init__(self) -> None:
        self.request: dict[str, object] = {}
        self.columns: list[sacct_layout.Column] = []
        self.layout = sacct_layout.Layout()
        self.header = True
        self.json = False
        self.accounts: set[str] = set()
        self.names: set[str] = set()
        self.groups: set[str] = set()
        self.qos: set[str] = set()
        self.nodes: set[str] = set()
        self.other_cluster = False  # -M names only clusters that are not this one


def fatal(message: str) -> common.CommandError:
    """Slurm's ``fatal()``: ``sacct: fatal: ...``, exit status 1."""
    return common.CommandError(f"fatal: {message}")


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _expand_array(word: str) -> list[str]:
    """``123_[1-3,5]`` (with an optional ``.step``) as one id per task."""
    head, _, rest = word.partition("_[")
    inside, closed, tail = rest.partition("]")
    out: list[str] = []
    for part in inside.split(","):
        low, dash, high = part.partition("-")
        if not closed or not _digits(low) or (dash and not _digits(high)):
            raise fatal(f"Bad job array element specified: {head}")
        last = int(high or low)
        if last - int(low) + len(out) > MAX_ARRAY_TASKS:
            raise fatal(f"Bad job/step specified: {word}")
        out += [f"{head}_{task}{tail}" for task in range(int(low), last + 1)]
    return out


def parse_jobs(texts: list[str]) -> list[str]:
    """Read ``-j``: comma lists of ``123``, ``123_4``, ``123_[1-3]``, ``123.batch``, ``123.0``.

    Args:
        texts: each use of the option.

    Returns:
        The ids, one array task each.

    Raises:
        CommandError: a malformed id (Slurm's ``Bad job/step specified``).
    """
    ids: list[str] = []
    for word in (w for text in texts for w in fmt.split_list(text.strip("'\""))):
        words = _expand_array(word) if "_[" in word else [word]
        for one in words:
            job, dot, step = one.partition(".")
            number, underscore, task = job.partition("_")
            if not _digits(number) or not int(number):
                raise fatal(f"Bad job/step specified: {one}")
            if dot and not (_digits(step) or step in STEP_NAMES):
                raise fatal(f"Bad step specified: {job}")  # Slurm names the job, not the step
            if underscore and not _digits(task):
                raise fatal(f"Bad job array element specified: {number}")
            ids.append(one)
    return ids


def parse_users(texts: list[str]) -> list[str] | None:
    """Read ``-u``: names or uids (``-1``: every user).

    Args:
        texts: each use of the option.

    Returns:
        The uids as text, or None for every user.

    Raises:
        CommandError: an unknown user (sacct's ``Invalid user id``).
    """
    uids: list[str] = []
    for text in texts:
        if text == "-1":
            return None
        for word in fmt.split_list(text):
            uid = fmt.resolve_user(word)
            if uid is None:
                raise common.CommandError(f"error: Invalid user id: {word}")
            uids.append(str(uid))
    return uids


def parse_states(texts: list[str]) -> list[str]:
    """Read ``-s``: state names or their codes, any case.

    Args:
        texts: each use of the option.

    Returns:
        The full state names.

    Raises:
        CommandError: an unknown state.
    """
    names = []
    for word in (w for text in texts for w in fmt.split_list(text)):
        name = fmt.job_state_name(word)
        if name is None:
            raise fatal(f"unrecognized job state value '{word}'")
        names.append(name)
    return names


def _many(values: dict[str, object], option: str) -> list[str]:
    """Every use of a repeatable option."""
    value = values.get(option, [])
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _time_option(values: dict[str, object], option: str, now: float) -> int:
    if option not in values:
        return 0
    try:
        return parse_time(str(values[option]), now)
    except ValueError as err:
        sys.stderr.write(f"{err}\n")  # Slurm's parse_time says it, without sacct's name
        raise SystemExit(1) from None


def _window(values: dict[str, object], query: Query, now: float) -> None:
    """-S/-E, and sacct's default start: midnight today, or now when states are asked for."""
    start = _time_option(values, "starttime", now)
    end = _time_option(values, "endtime", now)
    if not start and not query.request.get("jobs"):
        today = time.localtime(now)
        midnight = time.mktime((today.tm_year, today.tm_mon, today.tm_mday, 0, 0, 0, 0, 0, -1))
        start = int(now) if query.request.get("states") else int(midnight)
    if start:
        query.request["start_after"] = start
    if end:
        query.request["end_before"] = end


def _users(values: dict[str, object], query: Query) -> None:
    users = parse_users(_many(values, "user"))
    everyone = bool(values.get("allusers")) or users is None
    if users:
        query.request["users"] = users
    elif not everyone and os.getuid() != 0 and not query.request.get("jobs"):
        if "nodelist" not in values:
            query.request["users"] = [str(os.getuid())]


def _columns(values: dict[str, object], query: Query) -> None:
    specs = _many(values, "format")
    if values.get("brief"):
        specs.append(fields.BRIEF_FIELDS)
    if values.get("long"):
        specs.append(fields.LONG_FIELDS)
    if not specs:
        specs.append(os.environ.get("SACCT_FORMAT") or fields.DEFAULT_FIELDS)
    try:
        query.columns = sacct_layout.parse_columns(",".join(specs))
    except sacct_layout.InvalidField as err:
        raise common.CommandError(f'error: Invalid field requested: "{err}"') from None
    parsable = bool(values.get("parsable") or values.get("parsable2"))
    delimiter = str(values.get("delimiter", "|"))
    query.layout = sacct_layout.Layout(parsable, bool(values.get("parsable")), delimiter)


def build_query(values: dict[str, object], rest: list[str], now: float) -> Query:
    """Turn parsed options into a GetAccounting request and printing choices.

    Args:
        values: the parsed options.
        rest: positional arguments (none are allowed).
        now: the current time, for the default window and relative times.

    Returns:
        The query.

    Raises:
        CommandError: a bad value or an unexpected argument.
    """
    if rest:
        words = "".join(f"\n{PROG}: error:  {word}" for word in rest)
        raise common.CommandError(f"error: Unknown arguments:{words}")
    query = Query()
    _columns(values, query)
    request = query.request
    if "jobs" in values:
        request["jobs"] = parse_jobs(_many(values, "jobs"))
    if "state" in values:
        request["states"] = parse_states(_many(values, "state"))
    if "partition" in values:
        request["partitions"] = fmt.split_list(str(values["partition"]))
    request["jobs_only"] = bool(values.get("allocations"))
    request["duplicates"] = bool(values.get("duplicates"))
    _users(values, query)
    _window(values, query, now)
    query.accounts = set(fmt.split_list(str(values.get("accounts", ""))))
    query.names = set(fmt.split_list(str(values.get("name", ""))))
    query.groups = set(fmt.split_list(str(values.get("group", ""))))
    query.qos = set(fmt.split_list(str(values.get("qos", ""))))
    if "nodelist" in values:
        try:
            query.nodes = set(hostlist.expand(str(values["nodelist"])))
        except ValueError:
            raise common.CommandError(f"error: Invalid node list: {values['nodelist']}") from None
    query.header = not values.get("noheader")
    query.json = "json" in values
    query.other_cluster = _other_cluster(values)
    return query


def _other_cluster(values: dict[str, object]) -> bool:
    """-M names only other clusters: this one keeps no record of theirs."""
    if "clusters" not in values or values.get("allclusters"):
        return False
    named = {c.lower() for c in fmt.split_list(str(values["clusters"]))}
    return "all" not in named and common.client_config().cluster_name.lower() not in named


# --------------------------------------------------------------------------- output


def _wanted(job: Message, query: Query) -> bool:
    """The filters the request cannot carry, on a job's line."""
    group = fmt.group_name(job.gid, job.group)
    return (
        (not query.accounts or job.account in query.accounts)
        and (not query.names or job.name in query.names)
        and (not query.groups or group in query.groups or str(job.gid) in query.groups)
        and (not query.qos or job.qos in query.qos)
        and (not query.nodes or bool(query.nodes.intersection(hostlist.expand(job.nodes))))
    )


def select_records(records: list[Message], query: Query) -> list[Message]:
    """Apply the client-side filters; a step goes with its job's line.

    Args:
        records: the reply's records.
        query: the query.

    Returns:
        The records to print.
    """
    if query.other_cluster:
        return []
    if not (query.accounts or query.names or query.groups or query.qos or query.nodes):
        return records
    out: list[Message] = []
    keep = False
    for record in records:
        if not record.step:
            keep = _wanted(record, query)
        if keep:
            out.append(record)
    return out


def print_records(query: Query, records: list[Message], now: int) -> None:
    """Print the records' lines.

    Args:
        query: the query (columns, layout).
        records: the records.
        now: the reply's time.
    """
    lines = (sacct_layout.record_line(query.columns, r, now, query.layout) for r in records)
    sys.stdout.write("".join(line + "\n" for line in lines))


def run(values: dict[str, object], rest: list[str]) -> int:
    """sacct's work after option parsing.

    Args:
        values: the parsed options.
        rest: positional arguments.

    Returns:
        The exit status.
    """
    if values.get("helpformat") and not rest:
        sys.stdout.write(sacct_layout.help_format())
        return 0
    query = build_query(values, rest, clock())
    if query.header and not query.json:
        header = sacct_layout.header_lines(query.columns, query.layout)
        sys.stdout.write("".join(line + "\n" for line in header))
        sys.stdout.flush()
    reply = common.call("GetAccounting", **query.request)
    records = select_records(list(reply.records), query)
    if query.json:
        from cli import sacct_json  # only --json pays for it

        sys.stdout.write(sacct_json.json_text(records) + "\n")
        return 0
    print_records(query, records, int(reply.now))
    return 0


def _sacct(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(
        PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE, try_help=False
    )
    return run(values, rest)


def main(argv: list[str] | None = None) -> int:
    """Run sacct.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sacct, argv)
