"""sstat on a node: the live usage of one step's tasks here.

stepd writes each sample's per-task peaks to ``usage.json`` in the step's
directory (nodeagent.usage). When sstat asks, slurmd reads that record and
samples the stepd's process tree once more, as Slurm's stepd polls its
tasks on a stat request: the figures are current even when
``JobAcctGatherFrequency`` is long, and peaks between samples are not lost.

Imports nodeagent.spool, nodeagent.usage, the generated messages and psutil.
"""

from __future__ import annotations

import os

import psutil

from minislurm.wire.rpc import minislurm_pb2 as pb
from nodeagent import spool
from nodeagent.usage import Usage, by_task, read_record, usage_by_child


def node_stat(stepdir: str, node: str) -> pb.NodeStepStat | None:
    """The usage of the step whose directory this is, on this node.

    Args:
        stepdir: the step's (or batch job's) spool directory.
        node: this node's name.

    Returns:
        Each task's figures and the step's processes; None when no stepd runs there.
    """
    stepd = spool.stepd_pid(stepdir)
    if stepd is None:
        return None
    record = read_record(os.path.join(stepdir, spool.USAGE_FILE))
    per_task, peaks, tasks = record if record is not None else (False, {}, {})
    try:
        children = usage_by_child(stepd)
    except psutil.Error:  # the stepd ended meanwhile
        children = {}
    for task, usage in by_task(children, tasks, per_task).items():
        peaks[task] = peaks.get(task, Usage()).peak(usage)
    return pb.NodeStepStat(
        node=node,
        tasks=[_task_usage(task, peaks[task]) for task in sorted(peaks)],
        pids=_pids_below(stepd),
    )


def final_usage(stepdir: str) -> list[pb.TaskUsage]:
    """What an ended step's stepd last recorded of each task, for accounting.

    Args:
        stepdir: the step's (or batch job's) spool directory.

    Returns:
        Each task's figures; none when nothing was recorded or every figure is 0.
    """
    record = read_record(os.path.join(stepdir, spool.USAGE_FILE))
    if record is None or not any(any(u) for u in record.peaks.values()):
        return []
    return [_task_usage(task, record.peaks[task]) for task in sorted(record.peaks)]


def _task_usage(task_id: int, usage: Usage) -> pb.TaskUsage:
    return pb.TaskUsage(
        task_id=task_id,
        max_rss=usage.rss,
        max_vmem=usage.vmem,
        max_pages=usage.pages,
        cpu=usage.cpu,
        disk_read=usage.read,
        disk_write=usage.write,
        gpus=usage.gpus,
        max_gpu_util=usage.gpuutil,
        max_gpu_mem=usage.gpumem,
    )


def _pids_below(root: int) -> list[int]:
    """Every process of the step: the descendants of its stepd, by pid."""
    try:
        return sorted(p.pid for p in psutil.Process(root).children(recursive=True))
    except psutil.Error:
        return []
