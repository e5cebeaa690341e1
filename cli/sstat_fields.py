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
from cli.usagefmt import VALUES, StepFigures

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


def _usage(name: str) -> Callable[[StepFigures, int], str | None]:
    """A usage figure sstat shares with sacct (cli.usagefmt.VALUES)."""
    return _text(VALUES[name])


def _always(get: Callable[[StepFigures], object]) -> Callable[[StepFigures, int], str]:
    return lambda f, _now: str(get(f))


# sstat's fields, in its --helpformat order: (name, width, how cut, value).
FIELDS = [
    Field(name, width, kind, getter)
    for name, width, kind, getter in (
        ("AveCPU", 10, STR, _usage("AveCPU")),
        ("AveCPUFreq", 10, STR, _text(lambda f: "0")),
        ("AveDiskRead", 12, STR, _usage("AveDiskRead")),
        ("AveDiskWrite", 12, STR, _usage("AveDiskWrite")),
        ("AvePages", 10, STR, _usage("AvePages")),
        ("AveRSS", 10, STR, _usage("AveRSS")),
        ("AveVMSize", 10, STR, _usage("AveVMSize")),
        ("ConsumedEnergy", 14, STR, _text(lambda f: "0")),
        ("ConsumedEnergyRaw", 17, NUM, _text(lambda f: "0")),
        ("JobID", -12, STR, _always(lambda f: f.job_id)),
        ("MaxDiskRead", 12, STR, _usage("MaxDiskRead")),
        ("MaxDiskReadNode", 15, STR, _usage("MaxDiskReadNode")),
        ("MaxDiskReadTask", 15, NUM, _usage("MaxDiskReadTask")),
        ("MaxDiskWrite", 12, STR, _usage("MaxDiskWrite")),
        ("MaxDiskWriteNode", 16, STR, _usage("MaxDiskWriteNode")),
        ("MaxDiskWriteTask", 16, NUM, _usage("MaxDiskWriteTask")),
        ("MaxPages", 8, STR, _usage("MaxPages")),
        ("MaxPagesNode", 12, STR, _usage("MaxPagesNode")),
        ("MaxPagesTask", 14, NUM, _usage("MaxPagesTask")),
        ("MaxRSS", 10, STR, _usage("MaxRSS")),
        ("MaxRSSNode", 10, STR, _usage("MaxRSSNode")),
        ("MaxRSSTask", 10, NUM, _usage("MaxRSSTask")),
        ("MaxVMSize", 10, STR, _usage("MaxVMSize")),
        ("MaxVMSizeNode", 14, STR, _usage("MaxVMSizeNode")),
        ("MaxVMSizeTask", 14, NUM, _usage("MaxVMSizeTask")),
        ("MinCPU", 10, STR, _usage("MinCPU")),
        ("MinCPUNode", 10, STR, _usage("MinCPUNode")),
        ("MinCPUTask", 10, NUM, _usage("MinCPUTask")),
        ("Nodelist", 20, STR, _always(lambda f: f.nodelist)),
        ("NTasks", 8, NUM, _always(lambda f: f.ntasks)),
        ("Pids", 20, STR, _always(lambda f: f.pids)),
        ("ReqCPUFreq", 10, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqMin", 13, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqMax", 13, STR, _text(lambda f: UNKNOWN)),
        ("ReqCPUFreqGov", 13, STR, _text(lambda f: UNKNOWN)),
        ("TRESUsageInAve", 14, STR, _usage("TRESUsageInAve")),
        ("TRESUsageInMax", 14, STR, _usage("TRESUsageInMax")),
        ("TRESUsageInMaxNode", 18, STR, _usage("TRESUsageInMaxNode")),
        ("TRESUsageInMaxTask", 18, STR, _usage("TRESUsageInMaxTask")),
        ("TRESUsageInMin", 14, STR, _usage("TRESUsageInMin")),
        ("TRESUsageInMinNode", 18, STR, _usage("TRESUsageInMinNode")),
        ("TRESUsageInMinTask", 18, STR, _usage("TRESUsageInMinTask")),
        ("TRESUsageInTot", 14, STR, _usage("TRESUsageInTot")),
        ("TRESUsageOutAve", 15, STR, _usage("TRESUsageOutAve")),
        ("TRESUsageOutMax", 15, STR, _usage("TRESUsageOutMax")),
        ("TRESUsageOutMaxNode", 19, STR, _usage("TRESUsageOutMaxNode")),
        ("TRESUsageOutMaxTask", 19, STR, _usage("TRESUsageOutMaxTask")),
        ("TRESUsageOutMin", 15, STR, _usage("TRESUsageOutMin")),
        ("TRESUsageOutMinNode", 19, STR, _usage("TRESUsageOutMinNode")),
        ("TRESUsageOutMinTask", 19, STR, _usage("TRESUsageOutMinTask")),
        ("TRESUsageOutTot", 15, STR, _usage("TRESUsageOutTot")),
    )
]
