"""sshare: the associations' shares, usage and fair-share factors.

Every account of the tree is listed with its depth shown by indentation;
users are listed when they are the caller (the default), named by ``-u``,
or all with ``-a``. ``-A`` starts the tree at the named accounts. ``-l``
adds NormUsage, LevelFS, GrpTRESMins and TRESRunMins (the last two are
not tracked and print blank). ``-o`` chooses the fields as Slurm's does
(``name[%width]``, a name any prefix of a field's, in Slurm's order; a
negative width left-justifies); ``-e`` lists them. ID, GrpTRESRaw and
Partition are not tracked either and print blank.

Imports cli.common and cli.sacct_layout (the cells).
"""

from __future__ import annotations

import math
import os
import sys

from cli import clusters, common, fmt
from cli.opts import REQUIRED, Option
from cli.sacct_fields import STR
from cli.sacct_layout import fixed_cell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sshare"
OPTIONS = [
    Option("all", "a"),
    Option("accounts", "A", REQUIRED),
    Option("users", "u", REQUIRED),
    Option("long", "l"),
    Option("clusters", "M", REQUIRED),
    Option("format", "o", REQUIRED, many=True),
    Option("helpformat", "e"),
    Option("noheader", "n"),
    Option("parsable", "p"),
    Option("parsable2", "P"),
    Option("help", "h"),
    Option("usage"),
    Option("version", "V"),
]
HELP = """Usage:  sshare [OPTION]
  Valid OPTIONs are:
    -a or --all            list all users
    -A or --accounts=      display specific accounts (comma separated list)
    -e or --helpformat     Print a list of fields that can be specified
                           with the '--format' option
    -l or --long           include normalized usage in output
    -n or --noheader       omit header from output
    -o or --format=        Comma separated list of fields (use
                           "--helpformat" for a list of available fields).
    -p or --parsable       '|' delimited output with a trailing '|'
    -P or --parsable2      '|' delimited output without a trailing '|'
    -u or --users=         display specific users (comma separated list)
"""

_SHORT = [
    ("Account", -20), ("User", 10), ("RawShares", 10), ("NormShares", 11), ("RawUsage", 11),
    ("EffectvUsage", 13), ("FairShare", 10),
]  # fmt: skip
_LONG = [
    ("Account", -20), ("User", 10), ("RawShares", 10), ("NormShares", 11), ("RawUsage", 11),
    ("NormUsage", 11), ("EffectvUsage", 13), ("FairShare", 10), ("LevelFS", 10),
    ("GrpTRESMins", 30), ("TRESRunMins", 30),
]  # fmt: skip


# Every field -o may name, in Slurm's order (a prefix names the first that matches).
FIELDS = [
    ("Account", -20), ("Cluster", 10), ("EffectvUsage", 13), ("FairShare", 10),
    ("GrpTRESMins", 30), ("GrpTRESRaw", 30), ("ID", 6), ("LevelFS", 10), ("NormShares", 11),
    ("NormUsage", 11), ("Partition", 12), ("RawShares", 10), ("RawUsage", 11),
    ("TRESRunMins", 30), ("User", 10),
]  # fmt: skip


def parse_fields(specs: list[str]) -> list[tuple[str, int]]:
    """Read ``-o``: ``name[%width]`` items, as Slurm's sshare matches them.

    Args:
        specs: each use of the option (comma-separated lists).

    Returns:
        ``(title, width)`` columns; a repeated name is kept once, as Slurm keeps it.

    Raises:
        CommandError: ``Invalid field requested: "name"``.
    """
    columns: list[tuple[str, int]] = []
    items = [item for spec in specs for item in spec.split(",")]
    for item in [i for i in items if i] or [""]:
        name, _, width = item.partition("%")
        found = next((f for f in FIELDS if f[0].lower().startswith(name.lower())), None)
        if found is None:
            raise common.CommandError(f'error: Invalid field requested: "{name}"')
        column = (found[0], _atoi(width) or found[1])
        if all(c[0] != column[0] for c in columns):
            columns.append(column)
    return columns


def _atoi(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    end = len(digits) - len(digits.lstrip("0123456789"))
    return sign * int(digits[:end]) if end else 0


def help_format() -> str:
    """``-e``: the fields, four to a line, each 17 wide and a space apart.

    Returns:
        The text.
    """
    names = [f"{name:<17s}" for name, _ in FIELDS]
    return "".join(" ".join(names[i : i + 4]) + "\n" for i in range(0, len(names), 4))


def _number(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.6f}"


def values_of(assoc: Message, depth: int, cluster: str = "") -> dict[str, str]:
    """One association's cells by column title.

    Args:
        assoc: an AssocInfo.
        depth: its indentation.
        cluster: the cluster's name.

    Returns:
        Title to text.
    """
    root = assoc.depth == 0
    user = bool(assoc.user)
    return {
        "Account": " " * depth + assoc.account,
        "Cluster": cluster,
        "User": assoc.user,
        "RawShares": "" if root else str(assoc.shares),
        "NormShares": _number(assoc.norm_shares),
        "RawUsage": str(int(assoc.raw_usage)),
        "NormUsage": "" if root else _number(assoc.norm_usage),
        "EffectvUsage": _number(assoc.effective_usage),
        "FairShare": _number(assoc.fairshare) if user else "",
        "LevelFS": "" if root else _number(assoc.level_fs),
        "GrpTRESMins": "",
        "TRESRunMins": "",
        "GrpTRESRaw": "",
        "ID": "",
        "Partition": "",
    }


def select(
    assocs: list[Message], accounts: list[str], users: set[str] | None
) -> list[tuple[Message, int]]:
    """The rows to print with their indentation.

    Args:
        assocs: every association, depth first.
        accounts: ``-A`` (empty: from root).
        users: the users to list (None: all).

    Returns:
        ``(assoc, depth)`` pairs.
    """
    rows = []
    base: int | None = None if accounts else 0
    for assoc in assocs:
        if accounts:
            if base is not None and assoc.depth <= base:
                base = None
            if base is None and not assoc.user and assoc.account in accounts:
                base = assoc.depth
            if base is None:
                continue
        if assoc.user and users is not None and assoc.user not in users:
            continue
        rows.append((assoc, assoc.depth - (base or 0)))
    return rows


def _sshare(argv: list[str]) -> int:
    values, _ = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP)
    if values.get("helpformat"):
        sys.stdout.write(help_format())
        return 0
    if "format" in values:
        columns = parse_fields([str(v) for v in values["format"]])  # type: ignore[attr-defined]
    else:
        columns = _LONG if values.get("long") else _SHORT
    if values.get("all"):
        users: set[str] | None = None
    elif values.get("users"):
        users = set(fmt.split_list(str(values["users"])))
    else:
        users = {fmt.user_name(os.getuid())}
    accounts = fmt.split_list(str(values.get("accounts") or ""))
    cluster = clusters.requested(PROG, values)
    reply = common.call("GetAssocs")
    rows = select(list(reply.assocs), accounts, users)
    out = [f"CLUSTER: {cluster}"] if cluster and not values.get("noheader") else []
    style = "P" if values.get("parsable2") else "p" if values.get("parsable") else ""
    if style:
        end = "|" if style == "p" else ""
        if not values.get("noheader"):
            out.append("|".join(t for t, _ in columns) + end)
        for assoc, depth in rows:
            cells = values_of(assoc, depth, reply.cluster)
            out.append("|".join(cells[t] for t, _ in columns) + end)
    else:
        if not values.get("noheader"):
            out.append("".join(fixed_cell(t, w, "") for t, w in columns))
            out.append("".join("-" * abs(w) + " " for _, w in columns))
        for assoc, depth in rows:
            cells = values_of(assoc, depth, reply.cluster)
            out.append("".join(fixed_cell(cells[t], w, STR) for t, w in columns))
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run sshare.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sshare, argv)
