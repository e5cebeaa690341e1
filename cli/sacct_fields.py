"""sacct's fields: each ``--format`` name, its width and its value.

Values are computed from an ``AcctRecord`` (a job's line or one of its steps)
as Slurm 22.05's sacct prints them (``src/sacct/print.c``); fields a record
cannot carry (disk I/O, energy, reservations...) print blank. How cells are
laid out is cli.sacct_layout's business.

Pure functions; imports cli.fmt and minislurm's lean modules only.
"""

from __future__ import annotations

from cli import fmt
from cli.acctunits import cpu_time_text, exact_size
from cli.usagefmt import VALUES, StepFigures
from minislurm import units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from minislurm.wire.protowire import Message

    Getter = Callable[[Any, int], str | None]  # a record (an AcctRecord for sacct), now

STR, NUM, DATE = "str", "num", "date"  # how a cell is cut: with "+", never, plainly
DEFAULT_FIELDS = "jobid,jobname,partition,account,alloccpus,state,exitcode"
BRIEF_FIELDS = "jobid,state,exitcode"
LONG_FIELDS = (
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,"
    "maxrss,maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,"
    "mincpu,mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,"
    "avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,"
    "maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,"
    "maxdiskwritenode,maxdiskwritetask,avediskwrite,reqtres,alloctres,"
    "tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,"
    "tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,tresusageoutmaxn,"
    "tresusageoutmaxt,tresusageoutave,tresusageouttot"
)
NO_REQUESTER = units.INFINITE
NO_VAL = 0xFFFFFFFE
NONE_ASSIGNED = "None assigned"


class Field:
    """One column: its name, width (negative: left-justified), cut kind and value."""

    __slots__ = ("getter", "kind", "name", "width")

    def __init__(self, name: str, width: int, kind: str, getter: Getter | None) -> None:
        self.name = name
        self.width = width
        self.kind = kind
        self.getter = getter

    def value(self, record: Message, now: int) -> str | None:
        """The field's text for a record (None: blank)."""
        return self.getter(record, now) if self.getter else None


# --------------------------------------------------------------------------- value formats


def exit_text(code: int, signal: int, quirk: bool = True) -> str:
    """ExitCode as sacct prints it: ``3:0``, ``0:15``.

    Args:
        code: the exit code.
        signal: the signal that ended it, or 0.
        quirk: subtract 128 from codes of 128 and more, as sacct's ExitCode does.

    Returns:
        ``code:signal``.
    """
    if signal:
        return f"0:{signal}"
    if quirk and code >= 128:
        code -= 128
    return f"{code}:0"


def rss_text(kib: int) -> str:
    """MaxRSS as sacct prints it: ``1234K``, ``2M``, ``2.50M``, ``0``.

    Args:
        kib: kibibytes.

    Returns:
        The size in the largest exact unit.
    """
    return exact_size(kib)


def state_text(record: Message) -> str:
    """State as sacct prints it: ``CANCELLED by 0`` when a user cancelled.

    Args:
        record: an AcctRecord.

    Returns:
        The text.
    """
    if record.state == "CANCELLED" and record.cancelled_by != NO_REQUESTER:
        return f"CANCELLED by {record.cancelled_by}"
    return str(record.state)


def job_id_raw(record: Message) -> str:
    """JobIDRaw: the record's own job id (``9``, ``9.batch``)."""
    raw = str(record.job_id_raw)
    return f"{raw}.{record.step}" if record.step else raw


def tres_count(tres: str, name: str) -> str | None:
    """One TRES count of a ``cpu=1,mem=8000M,node=1`` list.

    Args:
        tres: the list.
        name: a TRES name.

    Returns:
        Its count as written, or None.
    """
    for item in tres.split(","):
        key, _, count = item.partition("=")
        if key == name:
            return count
    return None


def _limit(record: Message, _now: int) -> str | None:
    minutes = record.time_limit
    if minutes == units.INFINITE:
        return "UNLIMITED"
    if minutes == NO_VAL:
        return "Partition_Limit"
    return units.format_limit_long(minutes) if minutes else None


def _limit_raw(record: Message, _now: int) -> str | None:
    minutes = record.time_limit
    if minutes in (units.INFINITE, NO_VAL):
        return _limit(record, _now)
    return str(minutes) if minutes else None


def _reserved(record: Message, now: int) -> str | None:
    eligible = record.eligible_time
    if not eligible:
        return units.format_duration_long(0)
    until = record.start_time or now
    return units.format_duration_long(max(until - eligible, 0))


def _date(name: str) -> Getter:
    return lambda r, _n: fmt.timestamp_or(getattr(r, name), "Unknown")


def _secs(get: Callable[[Message], int]) -> Getter:
    return lambda r, _n: units.format_duration_long(get(r))


def _text(name: str) -> Getter:
    return lambda r, _n: str(getattr(r, name)) or None


def _job(get: Getter) -> Getter:
    """A field sacct prints for jobs only (blank on step lines)."""
    return lambda r, n: None if r.step else get(r, n)


def _step(get: Getter) -> Getter:
    """A field sacct prints for steps only."""
    return lambda r, n: get(r, n) if r.step else None


def _usage(name: str) -> Getter:
    """A step's usage figure as sstat prints it, from what its nodes last sampled."""
    value = VALUES[name]
    return lambda r, _n: str(value(StepFigures(r.job_id, list(r.usage)))) if r.usage else None


def _const(text: str) -> Getter:
    return lambda _r, _n: text


def _cpu_seconds(record: Message) -> int:
    return int(record.elapsed) * int(record.alloc_cpus)


def _derived(record: Message, _now: int) -> str:
    return exit_text(record.derived_exit_code, record.derived_exit_signal, quirk=False)


def _max_rss(record: Message, _now: int) -> str | None:
    return rss_text(record.max_rss) if record.end_time or record.max_rss else None


def _req_mem(record: Message, _now: int) -> str | None:
    return tres_count(record.req_tres, "mem")


def _req_nodes(record: Message, _now: int) -> str | None:
    if record.step:
        return str(record.nnodes)
    return tres_count(record.req_tres, "node")


def _alloc_nodes(record: Message, _now: int) -> str:
    return str(record.nnodes) if record.step or record.alloc_tres else "0"


def _nodelist(record: Message, _now: int) -> str:
    return str(record.nodes) or ("" if record.step else NONE_ASSIGNED)


def _user(record: Message, _now: int) -> str:
    return fmt.user_name(record.uid, record.user)


def _group(record: Message, _now: int) -> str:
    return fmt.group_name(record.gid, record.group)


# --------------------------------------------------------------------------- the table

_TRES_USAGE = tuple(
    f"TRESUsage{way}{what}"
    for way in ("In", "Out")
    for what in ("Ave", "Max", "MaxNode", "MaxTask", "Min", "MinNode", "MinTask", "Tot")
)
_UNKNOWN = _const("Unknown")
_ZERO = _const("0")

# sacct's fields in its order (a name abbreviates to the first field it starts),
# with Slurm 22.05's default widths; negative widths are left-justified.
FIELDS: tuple[Field, ...] = tuple(
    Field(name, width, kind, getter)
    for name, width, kind, getter in (
        ("Account", 10, STR, _text("account")),
        ("AdminComment", 15, STR, None),
        ("AllocCPUS", 10, NUM, lambda r, _n: str(r.alloc_cpus)),
        ("AllocNodes", 10, STR, _alloc_nodes),
        ("AllocTRES", 10, STR, _text("alloc_tres")),
        ("AssocID", 7, NUM, None),
        ("AveCPU", 10, STR, _usage("AveCPU")),
        ("AveCPUFreq", 10, STR, None),
        ("AveDiskRead", 14, STR, _usage("AveDiskRead")),
        ("AveDiskWrite", 14, STR, _usage("AveDiskWrite")),
        ("AvePages", 10, STR, _usage("AvePages")),
        ("AveRSS", 10, STR, _usage("AveRSS")),
        ("AveVMSize", 10, STR, _usage("AveVMSize")),
        ("BlockID", 16, STR, None),
        ("Cluster", 10, STR, _text("cluster")),
        ("Comment", 14, STR, None),
        ("Constraints", 19, STR, None),
        ("Container", 19, STR, None),
        ("ConsumedEnergy", 14, STR, _ZERO),
        ("ConsumedEnergyRaw", 17, NUM, _ZERO),
        ("CPUTime", 10, NUM, _secs(_cpu_seconds)),
        ("CPUTimeRAW", 10, NUM, lambda r, _n: str(_cpu_seconds(r))),
        ("DBIndex", -21, NUM, None),
        ("DerivedExitCode", 15, STR, _job(_derived)),
        ("Elapsed", 10, NUM, _secs(lambda r: int(r.elapsed))),
        ("ElapsedRaw", 10, NUM, lambda r, _n: str(r.elapsed)),
        ("Eligible", 19, DATE, _date("eligible_time")),
        ("End", 19, DATE, _date("end_time")),
        ("ExitCode", 8, STR, lambda r, _n: exit_text(r.exit_code, r.exit_signal)),
        ("Flags", 19, STR, None),
        ("GID", 6, NUM, _job(lambda r, _n: str(r.gid))),
        ("Group", 9, STR, _job(_group)),
        ("JobID", -12, STR, lambda r, _n: str(r.job_id)),
        ("JobIDRaw", -12, STR, lambda r, _n: job_id_raw(r)),
        ("JobName", 10, STR, _text("name")),
        ("Layout", 9, STR, None),
        ("MaxDiskRead", 12, STR, _usage("MaxDiskRead")),
        ("MaxDiskReadNode", 15, STR, _usage("MaxDiskReadNode")),
        ("MaxDiskReadTask", 15, NUM, _usage("MaxDiskReadTask")),
        ("MaxDiskWrite", 12, STR, _usage("MaxDiskWrite")),
        ("MaxDiskWriteNode", 16, STR, _usage("MaxDiskWriteNode")),
        ("MaxDiskWriteTask", 16, NUM, _usage("MaxDiskWriteTask")),
        ("MaxPages", 8, STR, _usage("MaxPages")),
        ("MaxPagesNode", 12, STR, _usage("MaxPagesNode")),
        ("MaxPagesTask", 14, NUM, _usage("MaxPagesTask")),
        ("MaxRSS", 10, STR, _step(_max_rss)),
        ("MaxRSSNode", 10, STR, _usage("MaxRSSNode")),
        ("MaxRSSTask", 10, NUM, _usage("MaxRSSTask")),
        ("MaxVMSize", 10, STR, _usage("MaxVMSize")),
        ("MaxVMSizeNode", 14, STR, _usage("MaxVMSizeNode")),
        ("MaxVMSizeTask", 14, NUM, _usage("MaxVMSizeTask")),
        ("McsLabel", 12, STR, None),
        ("MinCPU", 10, STR, _usage("MinCPU")),
        ("MinCPUNode", 10, STR, _usage("MinCPUNode")),
        ("MinCPUTask", 10, NUM, _usage("MinCPUTask")),
        ("NCPUS", 10, NUM, lambda r, _n: str(r.alloc_cpus)),
        ("NNodes", 8, NUM, lambda r, _n: str(r.nnodes)),
        ("NodeList", 15, STR, _nodelist),
        ("NTasks", 8, NUM, _step(lambda r, _n: str(r.ntasks))),
        ("Priority", 10, NUM, None),
        ("Partition", 10, STR, _job(_text("partition"))),
        ("QOS", 10, STR, _job(_text("qos"))),
        ("QOSRAW", 6, NUM, None),
        ("Reason", 22, STR, _job(lambda r, _n: str(r.reason) or "None")),
        ("ReqCPUFreq", 10, STR, _UNKNOWN),
        ("ReqCPUFreqGov", 13, STR, _UNKNOWN),
        ("ReqCPUFreqMax", 13, STR, _UNKNOWN),
        ("ReqCPUFreqMin", 13, STR, _UNKNOWN),
        ("ReqCPUS", 8, NUM, lambda r, _n: str(r.req_cpus)),
        ("ReqMem", 10, STR, _job(_req_mem)),
        ("ReqNodes", 8, STR, _req_nodes),
        ("ReqTRES", 10, STR, _job(_text("req_tres"))),
        ("Reservation", 20, STR, None),
        ("ReservationId", 8, NUM, None),
        ("Reserved", 10, NUM, _job(_reserved)),
        ("Restarts", 8, NUM, _job(lambda r, _n: str(r.restarts))),
        ("ResvCPU", 10, NUM, None),
        ("ResvCPURAW", 10, NUM, None),
        ("Start", 19, DATE, _date("start_time")),
        ("State", 10, STR, lambda r, _n: state_text(r)),
        ("Submit", 19, DATE, _date("submit_time")),
        ("SubmitLine", 20, STR, None),
        ("Suspended", 10, NUM, _const("00:00:00")),
        ("SystemComment", 15, STR, None),
        ("SystemCPU", 10, STR, None),
        ("Timelimit", 10, STR, _job(_limit)),
        ("TimelimitRaw", 10, STR, _job(_limit_raw)),
        ("TotalCPU", 10, STR, lambda r, _n: cpu_time_text(r.total_cpu)),
        *((name, len(name), STR, _usage(name)) for name in _TRES_USAGE),
        ("UID", 6, NUM, _job(lambda r, _n: str(r.uid))),
        ("User", 9, STR, _job(_user)),
        ("UserCPU", 10, STR, None),
        ("WCKey", 10, STR, None),
        ("WCKeyID", 10, NUM, None),
        ("WorkDir", 20, STR, _job(_text("work_dir"))),
    )
)
