"""sacctmgr show account|user|association: the columns and tables, as Slurm prints them.

Fixed-width cells are print_fields.c's (right-justified, a long string
ends in ``+``, a space after each cell); ``-p``/``-P`` print ``|``-separated
values. ``tree`` indents the Account column by depth.

Imports cli.sacct_layout (the cells) only.
"""

from __future__ import annotations

from dataclasses import dataclass

from cli.sacct_fields import STR
from cli.sacct_layout import fixed_cell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from minislurm.wire.protowire import Message


@dataclass(frozen=True)
class Field:
    """One column: its title, width (negative: left-justified) and value."""

    title: str
    width: int
    value: Callable[[Message, str], str]


def _limit(value: int) -> str:
    return "" if value < 0 else str(value)


ASSOC_FIELDS: dict[str, Field] = {
    "cluster": Field("Cluster", 10, lambda a, c: c),
    "account": Field("Account", 10, lambda a, c: a.account),
    "user": Field("User", 10, lambda a, c: a.user),
    "partition": Field("Partition", 10, lambda a, c: ""),
    "share": Field("Share", 9, lambda a, c: str(a.shares)),
    "priority": Field("Priority", 10, lambda a, c: ""),
    "grpjobs": Field("GrpJobs", 7, lambda a, c: ""),
    "grptres": Field("GrpTRES", 13, lambda a, c: a.grp_tres),
    "grpsubmit": Field("GrpSubmit", 9, lambda a, c: ""),
    "grpwall": Field("GrpWall", 11, lambda a, c: ""),
    "grptresmins": Field("GrpTRESMins", 13, lambda a, c: ""),
    "maxjobs": Field("MaxJobs", 7, lambda a, c: _limit(a.max_jobs)),
    "maxtres": Field("MaxTRES", 13, lambda a, c: ""),
    "maxtrespernode": Field("MaxTRESPerNode", 14, lambda a, c: ""),
    "maxsubmit": Field("MaxSubmit", 9, lambda a, c: _limit(a.max_submit)),
    "maxwall": Field("MaxWall", 11, lambda a, c: ""),
    "maxtresmins": Field("MaxTRESMins", 13, lambda a, c: ""),
    "qos": Field("QOS", 20, lambda a, c: "normal"),
    "defaultqos": Field("Def QOS", 9, lambda a, c: ""),
    "grptresrunmin": Field("GrpTRESRunMin", 13, lambda a, c: ""),
    "parentname": Field("Par Name", 10, lambda a, c: a.parent if not a.user else ""),
}
ALIASES = {
    "fairshare": "share",
    "shares": "share",
    "maxsubmitjobs": "maxsubmit",
    "defqos": "defaultqos",
    "assoc": "account",
    "accounts": "account",
    "users": "user",
    "maxjobsperuser": "maxjobspu",
    "maxsubmitjobsperuser": "maxsubmitpu",
    "descr": "description",
}
DEFAULT_ASSOC = (
    "cluster account user partition share priority grpjobs grptres grpsubmit grpwall "
    "grptresmins maxjobs maxtres maxtrespernode maxsubmit maxwall maxtresmins qos "
    "defaultqos grptresrunmin"
).split()
USER_FIELDS = {
    "user": Field("User", 10, lambda u, c: u.name),
    "defaultaccount": Field("Def Acct", 10, lambda u, c: u.default_account),
    "admin": Field("Admin", 9, lambda u, c: u.admin),
}
USER_ASSOC = (
    "cluster account partition share priority maxjobs maxnodes maxcpus maxsubmit maxwall "
    "maxcpumins qos defaultqos"
).split()
_EMPTY_USER_ASSOC = {
    "maxnodes": Field("MaxNodes", 8, lambda a, c: ""),
    "maxcpus": Field("MaxCPUs", 8, lambda a, c: ""),
    "maxcpumins": Field("MaxCPUMins", 11, lambda a, c: ""),
}
_BLANK: Callable[[Message, str], str] = lambda q, c: ""  # noqa: E731
QOS_FIELDS = {
    "name": Field("Name", 10, lambda q, c: q.name),
    "priority": Field("Priority", 10, lambda q, c: str(q.priority)),
    "gracetime": Field("GraceTime", 10, lambda q, c: "00:00:00"),
    "preempt": Field("Preempt", 10, lambda q, c: q.preempt),
    "preemptexempttime": Field("PreemptExemptTime", 19, _BLANK),
    "preemptmode": Field("PreemptMode", 11, lambda q, c: q.preempt_mode or "cluster"),
    "flags": Field("Flags", 40, _BLANK),
    "usagethres": Field("UsageThres", 10, _BLANK),
    "usagefactor": Field("UsageFactor", 11, lambda q, c: "1.000000"),
    "grptres": Field("GrpTRES", 13, _BLANK),
    "grptresmins": Field("GrpTRESMins", 13, _BLANK),
    "grptresrunmin": Field("GrpTRESRunMin", 13, _BLANK),
    "grpjobs": Field("GrpJobs", 7, _BLANK),
    "grpsubmit": Field("GrpSubmit", 9, _BLANK),
    "grpwall": Field("GrpWall", 11, _BLANK),
    "maxtres": Field("MaxTRES", 13, _BLANK),
    "maxtrespernode": Field("MaxTRESPerNode", 14, _BLANK),
    "maxtresmins": Field("MaxTRESMins", 13, _BLANK),
    "maxwall": Field("MaxWall", 11, _BLANK),
    "maxtrespu": Field("MaxTRESPU", 13, _BLANK),
    "maxjobspu": Field("MaxJobsPU", 9, lambda q, c: _limit(q.max_jobs_pu)),
    "maxsubmitpu": Field("MaxSubmitPU", 11, lambda q, c: _limit(q.max_submit_pu)),
    "maxtrespa": Field("MaxTRESPA", 13, _BLANK),
    "maxjobspa": Field("MaxJobsPA", 9, _BLANK),
    "maxsubmitpa": Field("MaxSubmitPA", 11, _BLANK),
    "mintres": Field("MinTRES", 13, _BLANK),
    "description": Field("Descr", 11, lambda q, c: q.description),
}
ACCOUNT_FIELDS = {
    "account": Field("Account", 10, lambda a, c: a.name),
    "descr": Field("Descr", 20, lambda a, c: a.description),
    "org": Field("Org", 20, lambda a, c: a.organization),
}


class FormatError(Exception):
    """An unknown field in format=."""


def pick(spec: str, known: dict[str, Field]) -> list[Field]:
    """The fields that ``format=`` names (``name%width`` sets a width).

    Args:
        spec: the comma-separated list.
        known: the entity's fields.

    Returns:
        The fields.

    Raises:
        FormatError: an unknown field.
    """
    out = []
    for item in filter(None, spec.split(",")):
        name, _, width = item.partition("%")
        key = ALIASES.get(name.lower(), name.lower())
        if key not in known:
            raise FormatError(f"Unknown field '{name}'")
        field = known[key]
        if width.lstrip("-").isdigit():
            field = Field(field.title, int(width), field.value)
        out.append(field)
    return out


def table(
    fields: list[Field], rows: list[Message], cluster: str, style: str, header: bool
) -> list[str]:
    """The lines of a listing.

    Args:
        fields: the columns.
        rows: the records.
        cluster: the cluster name.
        style: "" (fixed width), "p" (trailing |) or "P".
        header: print the header.

    Returns:
        The lines.
    """
    lines = []
    if style:
        end = "|" if style == "p" else ""
        if header:
            lines.append("|".join(f.title for f in fields) + end)
        lines += ["|".join(f.value(r, cluster) for f in fields) + end for r in rows]
        return lines
    if header:
        lines.append("".join(fixed_cell(f.title[: abs(f.width)], f.width, "") for f in fields))
        lines.append("".join("-" * abs(f.width) + " " for f in fields))
    for row in rows:
        lines.append("".join(fixed_cell(f.value(row, cluster), f.width, STR) for f in fields))
    return lines


def tree_fields(fields: list[Field]) -> list[Field]:
    """The fields with Account indented by depth and left-justified in 20 (``tree``)."""
    out = []
    for field in fields:
        if field.title == "Account":
            field = Field("Account", -20, lambda a, c: " " * a.depth + a.account)
        out.append(field)
    return out


def user_assoc_fields() -> list[Field]:
    """The columns of ``show user -s`` (withassoc)."""
    known = {**ASSOC_FIELDS, **_EMPTY_USER_ASSOC}
    return [*USER_FIELDS.values(), *(known[n] for n in USER_ASSOC)]
