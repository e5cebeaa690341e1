"""sstat's fields: the live usage of a running step, as Slurm 22.05's sstat prints it.

The node agents send each task's figures (nodeagent.stepstat); here they
are summed up as Slurm's ``jobacctinfo_aggregate`` does (the largest and
smallest value of each TRES with the node and task holding it, the total,
the average per task) and printed in sstat's formats (``src/sstat/print.c``):
sizes in their largest exact unit, CPU time as elapsed time, TRES lists with
their names in order. Energy and CPU frequency are not measured: 0, as
Slurm prints them without an energy plugin.

Pure functions; imports cli.sacct_fields and minislurm's lean modules only.
"""

from __future__ import annotations

from cli.sacct_fields import BYTE_UNITS, NUM, STR, Field, cpu_time_text, exact_size
from minislurm import hostlist, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from minislurm.wire.protowire import Message

DEFAULT_FIELDS = (
    "jobid,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,"
    "averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,"
    "ntasks,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,consumedenergy,maxdiskread,"
    "maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
    "maxdiskwritetask,avediskwrite,tresusageinave,tresusageinmax,tresusageinmaxn,"
    "tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,"
    "tresusageoutave,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutmin,"
    "tresusageoutminn,tresusageoutmint,tresusageouttot"
)
PID_FIELDS = "jobid,nodelist,pids"
UNKNOWN = "Unknown"  # a CPU frequency nobody asked for


class Spread:
    """One figure over a step's tasks: extremes (and where), total, average."""

    __slots__ = ("ave", "max", "max_node", "max_task", "min", "min_node", "min_task", "tot")

    def __init__(self, values: list[tuple[float, str, int]]) -> None:
        """Args: values: ``(value, node, task id)`` of each task, in node then task order."""
        none: tuple[float, str, int] = (0.0, "", 0)
        top = max(values, key=lambda v: v[0], default=none)
        low = min(values, key=lambda v: v[0], default=none)
        self.max, self.max_node, self.max_task = top
        self.min, self.min_node, self.min_task = low
        self.tot = sum(v[0] for v in values)
        self.ave = self.tot / len(values) if values else 0.0


class StepFigures:
    """What sstat prints of one step (or, with ``-i``, of one of its nodes).

    Args:
        job_id: the step as sstat names it (``12.0``, ``12.batch``).
        nodes: each answering node's NodeStepStat.
        convert: sizes in their largest exact unit (``--noconvert``: in bytes).
        usage: the usage figures are printed (``-i`` prints the processes alone).
    """

    def __init__(
        self, job_id: str, nodes: list[Message], convert: bool = True, usage: bool = True
    ) -> None:
        self.job_id = job_id
        self.convert = convert
        self.usage = usage
        self.nodelist = hostlist.compress([str(n.node) for n in nodes])
        self.pids = ",".join(str(p) for n in nodes for p in n.pids)
        tasks = [(str(n.node), t) for n in nodes for t in n.tasks] if usage else []
        self.ntasks = len(tasks)
        self.first_node = str(nodes[0].node) if nodes else ""

        def spread(get: Callable[[Message], float]) -> Spread:
            return Spread([(get(t), node, int(t.task_id)) for node, t in tasks])

        self.cpu = spread(lambda t: float(t.cpu))
        self.rss = spread(lambda t: int(t.max_rss))
        self.vmem = spread(lambda t: int(t.max_vmem))
        self.pages = spread(lambda t: int(t.max_pages))
        self.read = spread(lambda t: int(t.disk_read))
        self.write = spread(lambda t: int(t.disk_write))
        self.gpus = any(int(t.gpus) for _, t in tasks)  # gres/gpu* are shown for GPU steps
        self.gpumem = spread(lambda t: int(t.max_gpu_mem))
        self.gpuutil = spread(lambda t: int(t.max_gpu_util))


def kib_text(f: StepFigures, kib: float) -> str:
    """A memory size: ``218204K`` (``--noconvert``: bytes)."""
    return exact_size(int(kib)) if f.convert else str(int(kib) * 1024)


def bytes_text(f: StepFigures, count: float) -> str:
    """A byte count: ``1685844``, ``4K`` (``--noconvert``: as it is)."""
    return exact_size(int(count), BYTE_UNITS) if f.convert else str(int(count))


def disk_text(f: StepFigures, count: float) -> str:
    """Bytes read or written, as sstat's ``_print_small_double``: ``1685844``, ``4K``."""
    if count > 1:
        return bytes_text(f, count)
    return f"{count:.2f}M" if count > 0 else "0"


def _cpu(seconds: float) -> str:
    return cpu_time_text(int(seconds))


def _gres(f: StepFigures, gpumem: str, gpuutil: str) -> str:
    """``gres/gpumem=...,gres/gpuutil=...,`` for a step with GPUs (Slurm 23.02's), else ""."""
    return f"gres/gpumem={gpumem},gres/gpuutil={gpuutil}," if f.gpus else ""


def gpumem_text(f: StepFigures, mib: float) -> str:
    """GPU memory as Slurm writes it: ``36266M`` (``--noconvert``: bytes)."""
    return f"{int(mib)}M" if f.convert else str(int(mib) << 20)


def _tres_in(f: StepFigures, which: str) -> str:
    """``cpu=00:00:01,energy=0,fs/disk=...,mem=...K,pages=0,vmem=...K``: one value of each."""
    spreads = (f.cpu, f.read, f.rss, f.pages, f.vmem, f.gpumem, f.gpuutil)
    cpu, read, rss, pages, vmem, gpumem, gpuutil = (getattr(s, which) for s in spreads)
    gres = _gres(f, gpumem_text(f, gpumem), str(int(gpuutil)))
    return (
        f"cpu={units.format_duration_long(int(cpu))},energy=0,"
        f"fs/disk={bytes_text(f, read)},{gres}mem={kib_text(f, rss)},"
        f"pages={int(pages)},vmem={kib_text(f, vmem)}"
    )


def _tres_in_where(f: StepFigures, which: str) -> str:
    spreads = (f.cpu, f.read, f.rss, f.pages, f.vmem, f.gpumem, f.gpuutil)
    nodes = [getattr(s, f"{which}_node") for s in spreads]
    return (
        f"cpu={nodes[0]},energy={f.first_node},fs/disk={nodes[1]},{_gres(f, nodes[5], nodes[6])}"
        f"mem={nodes[2]},pages={nodes[3]},vmem={nodes[4]}"
    )


def _tres_in_task(f: StepFigures, which: str) -> str:
    """Slurm formats each task id as that TRES's value: cpu as time in ms, sizes in bytes."""
    spreads = (f.cpu, f.read, f.rss, f.pages, f.vmem, f.gpumem, f.gpuutil)
    tasks = [getattr(s, f"{which}_task") for s in spreads]
    gres = _gres(f, exact_size(tasks[5], BYTE_UNITS), str(tasks[6]))
    return (
        f"cpu={units.format_duration_long(tasks[0] // 1000)},"
        f"fs/disk={exact_size(tasks[1], BYTE_UNITS)},{gres}mem={exact_size(tasks[2], BYTE_UNITS)},"
        f"pages={tasks[3]},vmem={exact_size(tasks[4], BYTE_UNITS)}"
    )


def _tres_out(f: StepFigures, which: str) -> str:
    return f"energy=0,fs/disk={bytes_text(f, getattr(f.write, which))}"


def _tres_out_where(f: StepFigures, node: str) -> str:
    return f"energy={f.first_node},fs/disk={node}"


def _tres_out_task(task: int) -> str:
    return f"fs/disk={exact_size(task, BYTE_UNITS)}"


def _text(get: Callable[[StepFigures], object]) -> Callable[[StepFigures, int], str | None]:
    """A field's value: blank for a usage figure when only the processes are printed."""
    return lambda f, _now: str(get(f)) if f.usage else None


def _always(get: Callable[[StepFigures], object]) -> Callable[[StepFigures, int], str]:
    return lambda f, _now: str(get(f))


# sstat's fields, in its --helpformat order: (name, width, how cut, value).
FIELDS = [
    Field(name, width, kind, getter)
    for name, width, kind, getter in (
        ("AveCPU", 10, STR, _text(lambda f: _cpu(f.cpu.ave))),
        ("AveCPUFreq", 10, STR, _text(lambda f: "0")),
        ("AveDiskRead", 12, STR, _text(lambda f: disk_text(f, f.read.ave))),
        ("AveDiskWrite", 12, STR, _text(lambda f: disk_text(f, f.write.ave))),
        ("AvePages", 10, STR, _text(lambda f: int(f.pages.ave))),
        ("AveRSS", 10, STR, _text(lambda f: kib_text(f, f.rss.ave))),
        ("AveVMSize", 10, STR, _text(lambda f: kib_text(f, f.vmem.ave))),
        ("ConsumedEnergy", 14, STR, _text(lambda f: "0")),
        ("ConsumedEnergyRaw", 17, NUM, _text(lambda f: "0")),
        ("JobID", -12, STR, _always(lambda f: f.job_id)),
        ("MaxDiskRead", 12, STR, _text(lambda f: disk_text(f, f.read.max))),
        ("MaxDiskReadNode", 15, STR, _text(lambda f: f.read.max_node)),
        ("MaxDiskReadTask", 15, NUM, _text(lambda f: f.read.max_task)),
        ("MaxDiskWrite", 12, STR, _text(lambda f: disk_text(f, f.write.max))),
        ("MaxDiskWriteNode", 16, STR, _text(lambda f: f.write.max_node)),
        ("MaxDiskWriteTask", 16, NUM, _text(lambda f: f.write.max_task)),
        ("MaxPages", 8, STR, _text(lambda f: int(f.pages.max))),
        ("MaxPagesNode", 12, STR, _text(lambda f: f.pages.max_node)),
        ("MaxPagesTask", 14, NUM, _text(lambda f: f.pages.max_task)),
        ("MaxRSS", 10, STR, _text(lambda f: kib_text(f, f.rss.max))),
        ("MaxRSSNode", 10, STR, _text(lambda f: f.rss.max_node)),
        ("MaxRSSTask", 10, NUM, _text(lambda f: f.rss.max_task)),
        ("MaxVMSize", 10, STR, _text(lambda f: kib_text(f, f.vmem.max))),
        ("MaxVMSizeNode", 14, STR, _text(lambda f: f.vmem.max_node)),
        ("MaxVMSizeTask", 14, NUM, _text(lambda f: f.vmem.max_task)),
        ("MinCPU", 10, STR, _text(lambda f: _cpu(f.cpu.min))),
        ("MinCPUNode", 10, STR, _text(lambda f: f.cpu.min_node)),
        ("MinCPUTask", 10, NUM, _text(lambda f: f.cpu.min_task)),
        ("Nodelist", 20, STR, _always(lambda f: f.nodelist)),
        ("NTasks", 8, NUM, _always(lambda f: f.ntasks)),
        ("Pids", 20, STR, _always(lambda f: f.pids)),
        ("ReqCPUFreq", 10, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqMin", 13, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqMax", 13, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqGov", 13, STR, _text(lambda f: UNKNOWN)),
        ("TRESUsageInAve", 14, STR, _text(lambda f: _tres_in(f, "ave"))),
        ("TRESUsageInMax", 14, STR, _text(lambda f: _tres_in(f, "max"))),
        ("TRESUsageInMaxNode", 18, STR, _text(lambda f: _tres_in_where(f, "max"))),
        ("TRESUsageInMaxTask", 18, STR, _text(lambda f: _tres_in_task(f, "max"))),
        ("TRESUsageInMin", 14, STR, _text(lambda f: _tres_in(f, "min"))),
        ("TRESUsageInMinNode", 18, STR, _text(lambda f: _tres_in_where(f, "min"))),
        ("TRESUsageInMinTask", 18, STR, _text(lambda f: _tres_in_task(f, "min"))),
        ("TRESUsageInTot", 14, STR, _text(lambda f: _tres_in(f, "tot"))),
        ("TRESUsageOutAve", 15, STR, _text(lambda f: _tres_out(f, "ave"))),
        ("TRESUsageOutMax", 15, STR, _text(lambda f: _tres_out(f, "max"))),
        ("TRESUsageOutMaxNode", 19, STR, _text(lambda f: _tres_out_where(f, f.write.max_node))),
        ("TRESUsageOutMaxTask", 19, STR, _text(lambda f: _tres_out_task(f.write.max_task))),
        ("TRESUsageOutMin", 15, STR, _text(lambda f: _tres_out(f, "min"))),
        ("TRESUsageOutMinNode", 19, STR, _text(lambda f: _tres_out_where(f, f.write.min_node))),
        ("TRESUsageOutMinTask", 19, STR, _text(lambda f: _tres_out_task(f.write.min_task))),
        ("TRESUsageOutTot", 15, STR, _text(lambda f: _tres_out(f, "tot"))),
    )
]
