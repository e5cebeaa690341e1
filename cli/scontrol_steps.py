"""scontrol show step: running job steps, as Slurm 22.05's scontrol prints them.

``show step`` lists every running step, ``show step 12`` a job's (an
array's id: all its tasks'), ``show step 12.0`` one step; the layout is
Slurm's ``slurm_sprint_job_step_info`` (``src/api/job_step_info.c``), on
seven lines or one (``-o``). The id is read as Slurm reads it: ``12_3.0``
shows every step of task 3 and ``12.batch`` step 0.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import sys

from cli import common, fmt
from minislurm import hostlist, units
from minislurm.stepids import BATCH_STEP, step_id_text
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message


def parse_step_ref(text: str) -> tuple[int, int | None, int | None]:
    """Read ``show step``'s id as scontrol does: ``12``, ``12.0``, ``12_3``.

    Args:
        text: the id.

    Returns:
        ``(job id, array task or None, step id or None)``; a job id of 0
        (text that is no number) means every job.
    """
    job_id, rest = fmt.strtol(text)
    if rest.startswith("_"):
        return job_id % (1 << 32), fmt.strtol(rest[1:])[0] % (1 << 32), None
    if rest.startswith("."):
        return job_id % (1 << 32), None, fmt.strtol(rest[1:])[0] % (1 << 32)
    return job_id % (1 << 32), None, None


def show_text(step: Message, oneliner: bool = False) -> str:
    """One step in scontrol's layout.

    Args:
        step: a StepInfo of Slurm's step list.
        oneliner: one line (``-o``) instead of seven.

    Returns:
        The text, ending in a newline (two when multi-line).
    """
    sep = " " if oneliner else "\n   "
    job = f"{step.array_job_id}_{step.array_task_id}" if step.array_job_id else str(step.job_id)
    batch = step.step_id == BATCH_STEP
    lines = [
        f"StepId={job}.{step_id_text(step.step_id)} UserId={step.uid} "
        f"StartTime={units.format_timestamp(step.start_time)} "
        f"TimeLimit={units.format_limit_long(step.time_limit)}",
        f"State={step.state} Partition={step.partition} NodeList={step.nodelist}",
        f"Nodes={hostlist.count(step.nodelist)} CPUs={step.num_cpus} Tasks={step.ntasks} "
        f"Name={step.name} Network=(null)",
        f"TRES={step.tres or '(null)'}",
        "ResvPorts=(null)",
        "CPUFreqReq=Default" + ("" if batch else f" Dist={str(step.distribution).capitalize()}"),
        f"SrunHost:Pid={step.srun_host or '(null)'}:{step.srun_pid}",
    ]
    if step.tres_per_node:
        lines.append(f"TresPerNode={step.tres_per_node}")
    if step.gpus_per_task:
        lines.append(f"TresPerTask=gres:gpu:{step.gpus_per_task}")
    return sep.join(lines) + ("\n" if oneliner else "\n\n")


def not_found_text(job_id: int, task: int | None, step_id: int | None) -> str:
    """scontrol's line when a named job has no such running step.

    Args:
        job_id: the job id read.
        task: the array task read, or None.
        step_id: the step read, or None (then nothing follows the dot).

    Returns:
        e.g. ``Job step 12.7 not found``.
    """
    job = f"{job_id}_{task}" if task is not None else str(job_id)
    step = "" if step_id is None else step_id_text(step_id)
    return f"Job step {job}.{step} not found\n"


def show_steps(args: list[str], oneliner: bool) -> int:
    """``show step [ID]``.

    Args:
        args: at most one id.
        oneliner: ``-o``.

    Returns:
        The exit status: 1 when the job is unknown or a named step is not running.
    """
    job_id, task, step_id = parse_step_ref(args[0]) if args else (0, None, None)
    try:
        reply = common.call("GetSteps", job_id=job_id, running=True)
    except RpcError as err:
        sys.stderr.write(f"slurm_get_job_steps error: {common.rpc_message(err)}\n")
        return 1
    steps = [
        s
        for s in reply.steps
        if (task is None or (s.array_job_id and s.array_task_id == task))
        and (step_id is None or s.step_id == step_id)
    ]
    sys.stdout.write("".join(show_text(s, oneliner) for s in steps))
    if steps:
        return 0
    if args:
        sys.stdout.write(not_found_text(job_id, task, step_id))
        return 1
    sys.stdout.write("No job steps in the system\n")
    return 0
