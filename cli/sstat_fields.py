"""sstat's fields: the live usage of a running step, as Slurm 22.05's sstat prints it.

The node agents send each task's figures (nodeagent.stepstat); here they
are summed up as Slurm's ``jobacctinfo_aggregate`` does (the largest and
smallest value of each TRES with the node and task holding it, the total,
the average per task) and printed in sstat's formats (``src/sstat/print.c``):
sizes in their largest exact unit, CPU time as elapsed time, TRES lists with
their names in order. Energy and CPU frequency are not measured: 0, as
Slurm prints them without an energy plugin.

Pure functions; imports cli.sacct_fields and cli.usagefmt only.
"""

from __future__ import annotations

from cli.sacct_fields import NUM, STR, Field
from cli.usagefmt import (
    StepFigures,
    cpu_text,
    disk_text,
    kib_text,
    tres_in,
    tres_in_task,
    tres_in_where,
    tres_out,
    tres_out_task,
    tres_out_where,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


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


def _text(get: Callable[[StepFigures], object]) -> Callable[[StepFigures, int], str | None]:
    """A field's value: blank for a usage figure when only the processes are printed."""
    return lambda f, _now: str(get(f)) if f.usage else None


def _always(get: Callable[[StepFigures], object]) -> Callable[[StepFigures, int], str]:
    return lambda f, _now: str(get(f))


# sstat's fields, in its --helpformat order: (name, width, how cut, value).
FIELDS = [
    Field(name, width, kind, getter)
    for name, width, kind, getter in (
        ("AveCPU", 10, STR, _text(lambda f: cpu_text(f.cpu.ave))),
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
        ("MinCPU", 10, STR, _text(lambda f: cpu_text(f.cpu.min))),
        ("MinCPUNode", 10, STR, _text(lambda f: f.cpu.min_node)),
        ("MinCPUTask", 10, NUM, _text(lambda f: f.cpu.min_task)),
        ("Nodelist", 20, STR, _always(lambda f: f.nodelist)),
        ("NTasks", 8, NUM, _always(lambda f: f.ntasks)),
        ("Pids", 20, STR, _always(lambda f: f.pids)),
        ("ReqCPUFreq", 10, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqMin", 13, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqMax", 13, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqGov", 13, STR, _text(lambda f: UNKNOWN)),
        ("TRESUsageInAve", 14, STR, _text(lambda f: tres_in(f, "ave"))),
        ("TRESUsageInMax", 14, STR, _text(lambda f: tres_in(f, "max"))),
        ("TRESUsageInMaxNode", 18, STR, _text(lambda f: tres_in_where(f, "max"))),
        ("TRESUsageInMaxTask", 18, STR, _text(lambda f: tres_in_task(f, "max"))),
        ("TRESUsageInMin", 14, STR, _text(lambda f: tres_in(f, "min"))),
        ("TRESUsageInMinNode", 18, STR, _text(lambda f: tres_in_where(f, "min"))),
        ("TRESUsageInMinTask", 18, STR, _text(lambda f: tres_in_task(f, "min"))),
        ("TRESUsageInTot", 14, STR, _text(lambda f: tres_in(f, "tot"))),
        ("TRESUsageOutAve", 15, STR, _text(lambda f: tres_out(f, "ave"))),
        ("TRESUsageOutMax", 15, STR, _text(lambda f: tres_out(f, "max"))),
        ("TRESUsageOutMaxNode", 19, STR, _text(lambda f: tres_out_where(f, f.write.max_node))),
        ("TRESUsageOutMaxTask", 19, STR, _text(lambda f: tres_out_task(f.write.max_task))),
        ("TRESUsageOutMin", 15, STR, _text(lambda f: tres_out(f, "min"))),
        ("TRESUsageOutMinNode", 19, STR, _text(lambda f: tres_out_where(f, f.write.min_node))),
        ("TRESUsageOutMinTask", 19, STR, _text(lambda f: tres_out_task(f.write.min_task))),
        ("TRESUsageOutTot", 15, STR, _text(lambda f: tres_out(f, "tot"))),
    )
]
