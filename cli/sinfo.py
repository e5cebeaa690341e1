"""sinfo: view nodes and partitions, as Slurm 22.05's sinfo prints them.

Asks the controller for nodes and partitions (GetNodes, GetPartitions on one
connection), filters them, groups nodes that agree on every field shown
into records (per partition, or per node with ``-N``), sorts the records
and prints the ``-o``/``-O`` columns (cli.sinfo_fields).

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys
import time

from cli import clusters, common, fmt, sinfo_env, sinfo_sort
from cli import sinfo_fields as fields
from cli.opts import NO_ARG, REQUIRED, Option
from minislurm import hostlist
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sinfo"
# "#" stands for the widest partition or node list (at least 9), as in Slurm; these
# are the formats real sinfo 22.05 prints (its man page differs on spaces and justification).
FORMATS = {
    "default": "%#P %.5a %.10l %.6D %.6t %N",
    "summarize": "%#P %.5a %.10l %.16F %N",
    "long": "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N",
    "node": "%#N %.6D %.#P %6t",
    "node_long": "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E",
    "reasons": "%20E %9u %19H %N",
    "reasons_long": "%20E %12U %19H %6t %N",
}
# "%all": every field in Slurm's order (its separators differ between the two halves).
ALL_FIELDS = (
    "|".join("%" + c for c in "abcdefghlmnoprstuvwz")
    + "|"
    + "".join(f"%{c} |" for c in "ABCDEFGHILMNOPRSTUVXYZ")[:-1]
)
VALID_STATES = (
    "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,reserved,"
    "perfctrs,cloud,completing,powering_down,powered_down,power_down,powering_up,fail,maint,"
    "reboot,reboot^,unknown"
)
OPTIONS = [
    Option("all", "a"),
    Option("clusters", "M", REQUIRED),
    Option("cluster", "", REQUIRED, dest="clusters"),
    Option("dead", "d"),
    Option("exact", "e"),
    Option("federation"),
    Option("format", "o", REQUIRED),
    Option("Format", "O", REQUIRED),
    Option("help"),
    Option("hide"),
    Option("iterate", "i", REQUIRED),
    Option("list-reasons", "R"),
    Option("local"),
    Option("long", "l"),
    Option("noconvert"),
    Option("Node", "N"),
    Option("nodes", "n", REQUIRED),
    Option("noheader", "h"),
    Option("partition", "p", REQUIRED),
    Option("responding", "r"),
    Option("sort", "S", REQUIRED),
    Option("states", "t", REQUIRED),
    Option("summarize", "s"),
    Option("usage"),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V"),
]

USAGE = """\
Usage: sinfo [-adelNRrsv] [-i seconds] [-t states] [-p partition] [-n nodes]
             [-o format] [-O Format]
"""

HELP = """\
Usage: sinfo [OPTIONS]
  -a, --all                  show all partitions (including hidden and those
                             not accessible)
  -d, --dead                 show only non-responding nodes
  -e, --exact                group nodes only on exact match of configuration
  -h, --noheader             no headers on output
  -i, --iterate=seconds      specify an iteration period
  -l, --long                 long output - displays more information
  -n, --nodes=NODES          report on specific node(s)
  -N, --Node                 Node-centric format
  -o, --format=format        format specification
  -O, --Format=format        long format specification
  -p, --partition=PARTITION  report on specific partition
  -r, --responding           report only responding nodes
  -R, --list-reasons         list reason nodes are down or drained
  -s, --summarize            report state summary only
  -S, --sort=fields          comma separated list of fields to sort on
  -t, --states=node_state    specify the what states of nodes to view
  -v, --verbose              verbosity level
  -V, --version              output version information and exit

Help options:
  --help                     show this help message
  --usage                    display brief usage message
"""


class View:
    """What one sinfo invocation shows and how."""

    def __init__(self) -> None:
        self.spec = FORMATS["default"]
        self.long_names = ""  # the -O value, when given
        self.node_view = False
        self.exact = False
        self.reasons = False
        self.partitions: list[str] = []
        self.nodes: set[str] = set()
        self.states: list[str] = []
        self.dead = self.responding = False
        self.sort = ""  # -S: Slurm's sort keys ("": its default order)
        self.cluster: str | None = None  # -M: the cluster named (printed above the header)
        self.header = True
        self.date = False
        self.iterate = 0


def parse_states(text: str) -> list[str]:
    """Read ``-t``: node state words, any case.

    Args:
        text: a comma-separated list.

    Returns:
        The words, lower case.

    Raises:
        CommandError: an unknown state (Slurm's two-line message).
    """
    words = [w.lower() for w in fmt.split_list(text)]
    for word in words:
        if word not in fields.STATE_WORDS and word not in fields.OTHER_STATES:
            raise common.CommandError(
                f'error: Bad state string: "{word}"\n{PROG}: error: valid states: {VALID_STATES}'
            )
    return words


def _select_spec(values: dict[str, object], view: View) -> None:
    if values.get("Format"):
        view.long_names = str(values["Format"])
        return
    if values.get("format"):
        view.spec = str(values["format"])
        return
    long = bool(values.get("long"))
    if values.get("summarize"):
        view.spec = FORMATS["summarize"]
    elif view.reasons:
        view.spec = FORMATS["reasons_long" if long else "reasons"]
    elif view.node_view:
        view.spec = FORMATS["node_long" if long else "node"]
    elif "env_format" in values:
        view.spec = str(values["env_format"])
    elif long:
        view.spec = FORMATS["long"]


def build_view(values: dict[str, object], rest: list[str]) -> View:
    """Turn parsed options into a view.

    Args:
        values: the parsed options.
        rest: positional arguments (none are accepted).

    Returns:
        The view.

    Raises:
        CommandError: a bad value or an unexpected argument.
    """
    if rest:
        raise common.CommandError(f"error: Unrecognized option: {rest[0]}")
    view = View()
    view.node_view = bool(values.get("Node"))
    view.reasons = bool(values.get("list_reasons")) and not view.node_view
    view.exact = bool(values.get("exact"))
    _select_spec(values, view)
    view.partitions = fmt.split_list(str(values.get("partition", "")))
    if values.get("nodes"):
        try:
            view.nodes = set(hostlist.expand(str(values["nodes"])))
        except ValueError:
            raise common.CommandError(f"error: Invalid node name {values['nodes']}") from None
    if values.get("states"):
        view.states = parse_states(str(values["states"]))
    view.dead, view.responding = bool(values.get("dead")), bool(values.get("responding"))
    view.sort = str(values.get("sort", ""))
    view.header = not values.get("noheader")
    view.iterate = _iterate(values)
    view.date = (bool(values.get("long")) or view.iterate > 0) and view.header
    return view


def _iterate(values: dict[str, object]) -> int:
    if "iterate" not in values:
        return 0
    text = str(values["iterate"])
    if not text.isdigit() or int(text) == 0:
        raise common.CommandError(f"error: Error: invalid entry for --iterate={text}")
    return int(text)


# --------------------------------------------------------------------------- output


def _widths(spec: str, parts: list[Message], records: list[fields.Record]) -> str:
    """Replace ``%#P`` and ``%#N`` by the widest partition name and node list."""
    part_width = max([fields.MIN_FIELD_WIDTH] + [len(p.name) + int(bool(p.default)) for p in parts])
    node_width = max([fields.MIN_FIELD_WIDTH] + [len(fields.FIELDS["N"][1](r)) for r in records])
    for code, width in (("P", part_width), ("N", node_width)):
        spec = spec.replace(f"%#{code}", f"%{width}{code}")
        spec = spec.replace(f"%.#{code}", f"%.{width}{code}")
    return spec


def columns_for(view: View, spec: str) -> list[fmt.Column]:
    """Parse the format (``-o`` codes or ``-O`` names), reporting invalid parts.

    Args:
        view: the view.
        spec: the ``-o`` format with ``#`` widths resolved.

    Returns:
        The columns, with ``-O`` names mapped to their codes.
    """
    if view.long_names:
        columns, errors = fmt.parse_long_format(view.long_names, fields.LONG_NAMES)
        for column in columns:
            column.code = fields.LONG_NAMES[column.code]
    else:
        columns, errors = fmt.parse_format(spec, fields.FIELDS)
    kind = "job" if view.long_names else "node"  # Slurm's words for -O, sic
    for error in errors:
        sys.stderr.write(f"{PROG}: error: Invalid {kind} format specification: {error}\n")
    return columns


def _value(column: fmt.Column, record: fields.Record) -> tuple[str, bool]:
    if column.code == "P":
        return fields.partition_name(record, column.width), True
    return fields.FIELDS[column.code][1](record), True


def report_text(view: View, nodes: list[Message], parts: list[Message]) -> str:
    """The header and record lines for one reply.

    Args:
        view: the view.
        nodes: GetNodes' nodes.
        parts: GetPartitions' partitions, in configuration order.

    Returns:
        The text (each line ending with a newline).
    """
    parts = [p for p in parts if not view.partitions or p.name in view.partitions]
    spec = view.spec.replace("%all", ALL_FIELDS)
    codes = {c.code for c in fmt.parse_format(spec.replace("#", ""), fields.FIELDS)[0]}
    if view.long_names:
        codes = {
            fields.LONG_NAMES.get(n.split(":")[0].lower(), "") for n in view.long_names.split(",")
        }
    if view.node_view:
        records = fields.node_records(nodes, parts, view)
    else:
        records = fields.partition_records(nodes, parts, view, codes)
    if view.sort:
        records = sinfo_sort.sort_records(records, view.sort, parts)
    columns = columns_for(view, _widths(spec, parts, records))
    lines = []
    if view.header:
        lines.append(
            fmt.render(columns, lambda c: (fields.FIELDS[c.code][0], c.code != "N" or not c.right))
        )
    lines += [fmt.render(columns, lambda c, r=r: _value(c, r)) for r in records]  # type: ignore[misc]
    return "".join(line + "\n" for line in lines)


def fetch() -> tuple[list[Message], list[Message]] | None:
    """GetPartitions and GetNodes on one connection (Slurm's order).

    Returns:
        ``(nodes, partitions)``, or None after printing Slurm's message for a failed call.
    """
    what = "slurm_load_partitions"
    try:
        with common.controller() as client:
            parts = list(client.call("GetPartitions").partitions)
            what = "slurm_load_node"
            nodes = list(client.call("GetNodes").nodes)
    except RpcError as err:
        sys.stderr.write(f"{what}: {common.rpc_message(err)}\n")
        return None
    return nodes, parts


def run(view: View) -> int:
    """Print the report once, or every ``-i`` seconds.

    Args:
        view: the view.

    Returns:
        The exit status.
    """
    while True:
        fetched = fetch()
        if fetched is None:
            return 1
        nodes, parts = fetched
        out = sys.stdout
        if view.date:
            out.write(fmt.date_line() + "\n")
        if view.cluster and view.header:
            out.write(f"CLUSTER: {view.cluster}\n")
        out.write(report_text(view, nodes, parts))
        if not view.iterate:
            return 0
        out.write("\n")
        out.flush()
        time.sleep(view.iterate)


def _sinfo(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE)
    view = build_view(sinfo_env.with_environment(values, os.environ), rest)
    view.cluster = clusters.requested(PROG, values)
    return run(view)


def main(argv: list[str] | None = None) -> int:
    """Run sinfo.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sinfo, argv)
