"""sprio: the weighted priority factors of pending jobs.

The default columns are JOBID, PARTITION, PRIORITY, SITE and each factor
whose weight is not zero; ``-l`` shows every factor with USER, ASSOC, NICE
and TRES; ``-w`` prints the weights; ``-o`` takes Slurm's ``%`` fields
(``%i %r %u %Y %S %A %B %F %J %P %Q %N %T``), or ``SPRIO_FORMAT`` when
``-o`` is not given. ``-j`` and ``-u`` select jobs and users, with Slurm's
messages for ids and users it cannot read. ASSOC, SITE and TRES factors
are not implemented and are 0. Under ``priority/basic`` sprio refuses, as
Slurm's does: there are no factors.

Imports cli.common and cli.fmt.
"""

from __future__ import annotations

import os
import sys

from cli import clusters, common, fmt
from cli.opts import REQUIRED, Option

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sprio"
OPTIONS = [
    Option("jobs", "j", REQUIRED),
    Option("user", "u", REQUIRED),
    Option("partition", "p", REQUIRED),
    Option("long", "l"),
    Option("clusters", "M", REQUIRED),
    Option("noheader", "h"),
    Option("weights", "w"),
    Option("format", "o", REQUIRED),
    Option("help"),
    Option("usage"),
    Option("version", "V"),
]
HELP = """Usage: sprio [OPTIONS]
  -h, --noheader                  no headers on output
  -j, --jobs                      comma separated list of jobs to view
  -l, --long                      long report
  -o, --format=format             format specification
  -p, --partition=partition_name  comma separated list of partitions to view
  -u, --user=user_name            comma separated list of users to view
  -w, --weights                   show the weights of each factor
"""
USAGE = """\
Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]
   [--federation] [--local] [--sibling] [--usage] [-hlnvVw]
"""
# code -> (title, width (negative: left), value of a JobPriorityInfo given the weights)
_FIELDS: dict[str, tuple[str, int, str]] = {
    "i": ("JOBID", 15, "job_id"),
    "r": ("PARTITION", -9, "partition"),
    "u": ("USER", 8, "user"),
    "Y": ("PRIORITY", 10, "priority"),
    "S": ("SITE", 10, ""),
    "A": ("AGE", 10, "age:Age"),
    "B": ("ASSOC", 10, ""),
    "F": ("FAIRSHARE", 10, "fairshare:FairShare"),
    "J": ("JOBSIZE", 10, "job_size:JobSize"),
    "P": ("PARTITION", 10, "partition_factor:Partition"),
    "Q": ("QOS", 10, "qos:QOS"),
    "N": ("NICE", 11, "nice"),
    "T": ("TRES", 20, ""),
}
_LONG = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
_WEIGHT_OF = {"A": "Age", "F": "FairShare", "J": "JobSize", "P": "Partition", "Q": "QOS"}


def default_format(weights: dict[str, int]) -> str:
    """Slurm's default: the factors with a weight, after JOBID, PARTITION, PRIORITY and SITE."""
    spec = "%.15i %9r %.10Y %.10S"
    for code in "AFJPQ":
        if weights.get(_WEIGHT_OF[code]):
            spec += f" %.10{code}"
    return spec


def parse(spec: str) -> list[tuple[str, int]]:
    """``%[.][width]code`` items into (code, width); negative width: left-justified.

    Args:
        spec: the format.

    Returns:
        The columns.

    Raises:
        CommandError: an unknown field.
    """
    columns = []
    for item in spec.split():
        if not item.startswith("%") or item[-1] not in _FIELDS:
            raise common.CommandError(f"error: Invalid job format specification: {item}")
        body = item[1:-1]
        right = body.startswith(".")
        digits = body.lstrip(".")
        width = int(digits) if digits.isdigit() else abs(_FIELDS[item[-1]][1])
        columns.append((item[-1], width if right else -width))
    return columns


def cell_value(code: str, job: Message | None, weights: dict[str, int]) -> str:
    """One cell: a job's weighted factor, or the weight itself (``-w``) when job is None.

    Args:
        code: the field letter.
        job: a JobPriorityInfo, or None for the weights line.
        weights: the weights by name.

    Returns:
        The text.
    """
    _, _, source = _FIELDS[code]
    if job is None:
        if code == "i":
            return "Weights"
        if code == "S":
            return "1"
        if ":" in source:
            return str(weights.get(source.split(":")[1], 0))
        return ""
    if not source:
        return "0" if code != "T" else ""
    if ":" in source:
        attr, name = source.split(":")
        return f"{getattr(job, attr) * weights.get(name, 0):.0f}"
    return str(getattr(job, source))


def _line(columns: list[tuple[str, int]], texts: list[str]) -> str:
    cells = [t.rjust(w) if w > 0 else t.ljust(-w) for (_, w), t in zip(columns, texts, strict=True)]
    return " ".join(cells)


def job_ids(text: str) -> set[int]:
    """Read ``-j``: job ids (an array task's id is its array's, as Slurm reads ``12_3``).

    Args:
        text: a comma-separated list.

    Returns:
        The ids.

    Raises:
        CommandError: ``Invalid job id: X``.
    """
    ids = set()
    for word in fmt.split_list(text):
        head = word.partition("_")[0]
        if not head.isdigit() or not int(head):
            raise common.CommandError(f"error: Invalid job id: {word}")
        ids.add(int(head))
    return ids


def users(text: str) -> set[str] | None:
    """Read ``-u``: the users that exist (Slurm reports the others and goes on).

    Args:
        text: a comma-separated list.

    Returns:
        The users; None when none was named.
    """
    if not text:
        return None
    known = set()
    for user in fmt.split_list(text):
        if fmt.resolve_user(user) is None:
            sys.stderr.write(f"{PROG}: error: Invalid user: {user}\n\n")
        else:
            known.add(user)
    return known


def format_option(values: dict[str, object]) -> str | None:
    """The format asked for: ``-o``, else ``SPRIO_FORMAT``; None for the default.

    Args:
        values: the parsed options.

    Returns:
        The format.

    Raises:
        CommandError: ``-o`` beside ``-l``.
    """
    if values.get("long") and "format" in values:
        raise common.CommandError(
            "fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
            "Please remove one and retry."
        )
    spec = values.get("format", os.environ.get("SPRIO_FORMAT"))
    return None if spec is None else str(spec)


def _sprio(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE)
    if rest:
        sys.stdout.write(USAGE)
        raise common.CommandError(f"error: Unrecognized option: {rest[0]}")
    clusters.requested(PROG, values)
    jobs = job_ids(str(values.get("jobs") or ""))
    wanted = users(str(values.get("user") or ""))
    spec = format_option(values)
    config = {e.key: e.value for e in common.call("GetConfig").entries}
    plugin = config.get("PriorityType", "")
    if plugin == "priority/basic":
        sys.stderr.write(
            f"You are not running a supported priority plugin\n({plugin}).\n"
            "Only 'priority/multifactor' is supported.\n"
        )
        return 1
    reply = common.call("GetPriorities")
    weights = dict(reply.weights)
    if spec is None:
        spec = _LONG if values.get("long") else default_format(weights)
    columns = parse(spec)
    out = []
    if not values.get("noheader"):
        out.append(_line(columns, [_FIELDS[c][0] for c, _ in columns]))
    if values.get("weights"):
        out.append(_line(columns, [cell_value(c, None, weights) for c, _ in columns]))
    else:
        parts = set(fmt.split_list(str(values.get("partition") or "")))
        for job in reply.jobs:
            if (jobs and job.job_id not in jobs) or (wanted is not None and job.user not in wanted):
                continue
            if parts and job.partition not in parts:
                continue
            out.append(_line(columns, [cell_value(c, job, weights) for c, _ in columns]))
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run sprio.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sprio, argv)
