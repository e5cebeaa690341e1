"""sdiag: the controller's statistics since it started, in Slurm 22.05's layout.

Jobs submitted, started, completed, cancelled and failed; the jobs pending
and running now; the main schedule cycles (our event passes) and the
backfill cycles (our full passes), in microseconds; and the RPCs by method
and by user with their count and time. Slurm's lines for what minislurm has
no counterpart of (server and agent threads, DBD queue, scheduling depth,
the backfill table, gettimeofday's latency) are left out rather than shown
with made-up values. RPCs are listed most called first, as Slurm's; ``-i``
sorts them by name (Slurm: by message id), ``-t`` by total time, ``-T`` by
average time. ``-r`` starts every count again (root, SlurmUser and
operators), as Slurm's; arguments beyond the options are ignored, as there.

Imports cli.common, cli.clusters, cli.fmt and minislurm.wire.h2grpc.
"""

from __future__ import annotations

import sys

from cli import clusters, common, fmt
from cli.opts import REQUIRED, Option
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sdiag"
OPTIONS = [
    Option("all", "a"),
    Option("reset", "r"),
    Option("cluster", "M", REQUIRED, dest="clusters"),
    Option("sort-by-id", "i"),
    Option("sort-by-time", "t"),
    Option("sort-by-time2", "T"),
    Option("version", "V"),
    Option("help"),
    Option("usage"),
]
HELP = """Usage: sdiag [OPTIONS]
  -a, --all           all statistics
  -r, --reset         reset statistics
  -M, --cluster       direct the request to a specific cluster
  -i, --sort-by-id    sort RPCs by id
  -t, --sort-by-time  sort RPCs by total run time
  -T, --sort-by-time2 sort RPCs by average run time
  -V, --version       display current version number

Help options:
  --help          show this help message
  --usage         display brief usage message
"""
USAGE = "Usage: sdiag [-M cluster] [-aritT]\n"
RULE = "*" * 55


def _when(epoch: int) -> str:
    return f"{fmt.date_line(epoch)} ({epoch})"


def _mean(total: int, count: int) -> int:
    return total // count if count else 0


def rpc_order(values: dict[str, object]) -> str:
    """How the RPC lists are sorted: ``count`` (Slurm's default), ``id``, ``time``, ``time2``."""
    for key, order in (("sort_by_id", "id"), ("sort_by_time", "time"), ("sort_by_time2", "time2")):
        if values.get(key):
            return order
    return "count"


def _sorted(rows: list[Message], order: str, key_of_id: str) -> list[Message]:
    if order == "id":
        return sorted(rows, key=lambda r: getattr(r, key_of_id))
    if order == "time":
        return sorted(rows, key=lambda r: -r.total_us)
    if order == "time2":
        return sorted(rows, key=lambda r: -_mean(r.total_us, r.count))
    return list(rows)  # the controller sends them most called first


def report(stats: Message, order: str) -> str:
    """sdiag's text for a GetStats reply.

    Args:
        stats: the reply.
        order: see :func:`rpc_order`.

    Returns:
        The lines, each ending in a newline.
    """
    main_count, bf_count = stats.sched_cycle_count, stats.bf_cycle_count
    lines = [
        RULE,
        f"sdiag output at {_when(stats.now)}",
        f"Data since      {_when(stats.server_start)}",
        RULE,
        f"Jobs submitted: {stats.jobs_submitted}",
        f"Jobs started:   {stats.jobs_started}",
        f"Jobs completed: {stats.jobs_completed}",
        f"Jobs canceled:  {stats.jobs_canceled}",
        f"Jobs failed:    {stats.jobs_failed}",
        "",
        f"Job states ts:  {_when(stats.now)}",
        f"Jobs pending:   {stats.jobs_pending}",
        f"Jobs running:   {stats.jobs_running}",
        "",
        "Main schedule statistics (microseconds):",
        f"\tLast cycle:   {stats.sched_cycle_last_us}",
        f"\tMax cycle:    {stats.sched_cycle_max_us}",
        f"\tTotal cycles: {main_count}",
    ]
    if main_count:
        lines.append(f"\tMean cycle:   {_mean(stats.sched_cycle_sum_us, main_count)}")
    lines += [
        "",
        "Backfilling stats",
        f"\tTotal cycles: {bf_count}",
        f"\tLast cycle: {stats.bf_cycle_last_us}",
        f"\tMax cycle:  {stats.bf_cycle_max_us}",
    ]
    if bf_count:
        lines.append(f"\tMean cycle: {_mean(stats.bf_cycle_sum_us, bf_count)}")
    lines += ["", "Remote Procedure Call statistics by message type"]
    for rpc in _sorted(list(stats.rpcs_by_type), order, "name"):
        lines.append(f"\t{rpc.name:<40}{_counts(rpc)}")
    lines += ["", "Remote Procedure Call statistics by user"]
    for rpc in _sorted(list(stats.rpcs_by_user), order, "uid"):
        user = fmt.user_name(rpc.uid) if rpc.uid >= 0 else "(unauthenticated)"
        lines.append(f"\t{user:<16}({rpc.uid:>8}) {_counts(rpc)}")
    lines += ["", "Pending RPC statistics", "\tNo pending RPCs"]
    return "".join(line + "\n" for line in lines)


def _counts(rpc: Message) -> str:
    mean = _mean(rpc.total_us, rpc.count)
    return f"count:{rpc.count:<6} ave_time:{mean:<6} total_time:{rpc.total_us}"


def _sdiag(argv: list[str]) -> int:
    values, _ = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE)
    clusters.requested(PROG, values)
    if values.get("reset"):
        try:
            common.call("GetStats", reset=True)
        except RpcError as err:
            sys.stderr.write(f"slurm_reset_statistics: {common.rpc_message(err)}\n")
            return 1
        sys.stdout.write("Reset scheduling statistics\n")
        return 0
    sys.stdout.write(report(common.call("GetStats"), rpc_order(values)))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run sdiag.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sdiag, argv)
