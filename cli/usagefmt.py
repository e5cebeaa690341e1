"""A step's usage as sacct and sstat print it: its tasks' figures summed up.

The node agents send each task's figures (nodeagent.stepstat); here they
are summed up as Slurm's ``jobacctinfo_aggregate`` does (the largest and
smallest value of each TRES with the node and task holding it, the total,
the average per task) and written in sstat's formats (``src/sstat/print.c``):
sizes in their largest exact unit, CPU time as elapsed time, TRES lists with
their names in order.

Pure functions; imports cli.acctunits and minislurm's lean modules only.
"""

from __future__ import annotations

from collections.abc import Callable

from cli.acctunits import BYTE_UNITS, cpu_time_text, exact_size
from minislurm import hostlist, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message


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


def cpu_text(seconds: float) -> str:
    return cpu_time_text(int(seconds))


def gres_text(f: StepFigures, gpumem: str, gpuutil: str) -> str:
    """``gres/gpumem=...,gres/gpuutil=...,`` for a step with GPUs (Slurm 23.02's), else ""."""
    return f"gres/gpumem={gpumem},gres/gpuutil={gpuutil}," if f.gpus else ""


def gpumem_text(f: StepFigures, mib: float) -> str:
    """GPU memory as Slurm writes it: ``36266M`` (``--noconvert``: bytes)."""
    return f"{int(mib)}M" if f.convert else str(int(mib) << 20)


def tres_in(f: StepFigures, which: str) -> str:
    """``cpu=00:00:01,energy=0,fs/disk=...,mem=...K,pages=0,vmem=...K``: one value of each."""
    spreads = (f.cpu, f.read, f.rss, f.pages, f.vmem, f.gpumem, f.gpuutil)
    cpu, read, rss, pages, vmem, gpumem, gpuutil = (getattr(s, which) for s in spreads)
    gres = gres_text(f, gpumem_text(f, gpumem), str(int(gpuutil)))
    return (
        f"cpu={units.format_duration_long(int(cpu))},energy=0,"
        f"fs/disk={bytes_text(f, read)},{gres}mem={kib_text(f, rss)},"
        f"pages={int(pages)},vmem={kib_text(f, vmem)}"
    )


def tres_in_where(f: StepFigures, which: str) -> str:
    spreads = (f.cpu, f.read, f.rss, f.pages, f.vmem, f.gpumem, f.gpuutil)
    nodes = [getattr(s, f"{which}_node") for s in spreads]
    gres = gres_text(f, nodes[5], nodes[6])
    return (
        f"cpu={nodes[0]},energy={f.first_node},fs/disk={nodes[1]},{gres}"
        f"mem={nodes[2]},pages={nodes[3]},vmem={nodes[4]}"
    )


def tres_in_task(f: StepFigures, which: str) -> str:
    """Slurm formats each task id as that TRES's value: cpu as time in ms, sizes in bytes."""
    spreads = (f.cpu, f.read, f.rss, f.pages, f.vmem, f.gpumem, f.gpuutil)
    tasks = [getattr(s, f"{which}_task") for s in spreads]
    gres = gres_text(f, exact_size(tasks[5], BYTE_UNITS), str(tasks[6]))
    return (
        f"cpu={units.format_duration_long(tasks[0] // 1000)},"
        f"fs/disk={exact_size(tasks[1], BYTE_UNITS)},{gres}mem={exact_size(tasks[2], BYTE_UNITS)},"
        f"pages={tasks[3]},vmem={exact_size(tasks[4], BYTE_UNITS)}"
    )


def tres_out(f: StepFigures, which: str) -> str:
    return f"energy=0,fs/disk={bytes_text(f, getattr(f.write, which))}"


def tres_out_where(f: StepFigures, node: str) -> str:
    return f"energy={f.first_node},fs/disk={node}"


def tres_out_task(task: int) -> str:
    return f"fs/disk={exact_size(task, BYTE_UNITS)}"


# The usage figures sstat and sacct both print, by field name: a step's value.
VALUES: dict[str, Callable[[StepFigures], object]] = {
    "AveCPU": lambda f: cpu_text(f.cpu.ave),
    "AveDiskRead": lambda f: disk_text(f, f.read.ave),
    "AveDiskWrite": lambda f: disk_text(f, f.write.ave),
    "AvePages": lambda f: int(f.pages.ave),
    "AveRSS": lambda f: kib_text(f, f.rss.ave),
    "AveVMSize": lambda f: kib_text(f, f.vmem.ave),
    "MaxDiskRead": lambda f: disk_text(f, f.read.max),
    "MaxDiskReadNode": lambda f: f.read.max_node,
    "MaxDiskReadTask": lambda f: f.read.max_task,
    "MaxDiskWrite": lambda f: disk_text(f, f.write.max),
    "MaxDiskWriteNode": lambda f: f.write.max_node,
    "MaxDiskWriteTask": lambda f: f.write.max_task,
    "MaxPages": lambda f: int(f.pages.max),
    "MaxPagesNode": lambda f: f.pages.max_node,
    "MaxPagesTask": lambda f: f.pages.max_task,
    "MaxRSS": lambda f: kib_text(f, f.rss.max),
    "MaxRSSNode": lambda f: f.rss.max_node,
    "MaxRSSTask": lambda f: f.rss.max_task,
    "MaxVMSize": lambda f: kib_text(f, f.vmem.max),
    "MaxVMSizeNode": lambda f: f.vmem.max_node,
    "MaxVMSizeTask": lambda f: f.vmem.max_task,
    "MinCPU": lambda f: cpu_text(f.cpu.min),
    "MinCPUNode": lambda f: f.cpu.min_node,
    "MinCPUTask": lambda f: f.cpu.min_task,
    "TRESUsageInAve": lambda f: tres_in(f, "ave"),
    "TRESUsageInMax": lambda f: tres_in(f, "max"),
    "TRESUsageInMaxNode": lambda f: tres_in_where(f, "max"),
    "TRESUsageInMaxTask": lambda f: tres_in_task(f, "max"),
    "TRESUsageInMin": lambda f: tres_in(f, "min"),
    "TRESUsageInMinNode": lambda f: tres_in_where(f, "min"),
    "TRESUsageInMinTask": lambda f: tres_in_task(f, "min"),
    "TRESUsageInTot": lambda f: tres_in(f, "tot"),
    "TRESUsageOutAve": lambda f: tres_out(f, "ave"),
    "TRESUsageOutMax": lambda f: tres_out(f, "max"),
    "TRESUsageOutMaxNode": lambda f: tres_out_where(f, f.write.max_node),
    "TRESUsageOutMaxTask": lambda f: tres_out_task(f.write.max_task),
    "TRESUsageOutMin": lambda f: tres_out(f, "min"),
    "TRESUsageOutMinNode": lambda f: tres_out_where(f, f.write.min_node),
    "TRESUsageOutMinTask": lambda f: tres_out_task(f.write.min_task),
    "TRESUsageOutTot": lambda f: tres_out(f, "tot"),
}
