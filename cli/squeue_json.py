"""``squeue --json``: the jobs as Slurm 22.05's squeue serialises them.

Only the keys a JobInfo can fill are written (in Slurm's order); the
document's frame (meta, errors, jobs) is Slurm's.

Pure functions; imports cli.fmt and minislurm's lean modules only, none of
ctld or nodeagent.
"""

from __future__ import annotations

from cli import fmt
from cli import squeue_fields as fields
from minislurm import SLURM_VERSION, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message


def _or_null(value: int) -> int | None:
    return value or None


def job_resources(job: Message) -> dict[str, object]:
    """``job_resources`` of a job holding nodes (per node: its CPUs and memory).

    Args:
        job: a JobInfo with an allocation.

    Returns:
        The dict (without Slurm's per-core map: JobInfo has no core ids).
    """
    return {
        "nodes": job.nodes,
        "allocated_cores": job.num_cpus,
        "allocated_hosts": len(job.allocation),
        "allocated_nodes": [
            {"nodename": a.node, "cpus_used": a.cpus, "memory_used": 0, "memory_allocated": a.mem}
            for a in job.allocation
        ],
    }


def json_job(job: Message) -> dict[str, object]:
    """One job as ``squeue --json`` prints it (the fields JobInfo carries; Slurm's
    "unset" values for the others).

    Args:
        job: a JobInfo.

    Returns:
        The job's dict, in Slurm's key order.
    """
    limit = job.time_limit
    out: dict[str, object] = {
        "account": job.account,
        "accrue_time": job.accrue_time,
        "array_job_id": 0,
        "array_task_id": None,
        "batch_flag": bool(job.batch),
        "batch_host": job.batch_host,
        "command": job.command,
        "cpus_per_task": _or_null(job.cpus_per_task),
        "eligible_time": job.eligible_time,
        "end_time": job.end_time,
        "excluded_nodes": job.exc_nodes,
        "exit_code": job.exit_code,
        "group_id": job.gid,
        "group_name": fmt.group_name(job.gid, job.group),
        "job_id": job.job_id,
    }
    if job.allocation:
        out["job_resources"] = job_resources(job)
    out.update(
        {
            "job_state": job.state,
            "last_sched_evaluation": job.last_sched_eval,
            "max_nodes": job.max_nodes,
            "name": job.name,
            "nodes": job.nodes,
            "nice": _or_null(job.nice),
            "tasks_per_node": job.ntasks_per_node,
            "cpus": job.num_cpus,
            "node_count": fields.node_count(job),
            "tasks": job.num_tasks,
            "partition": job.partition,
            "memory_per_node": _or_null(job.mem_per_node),
            "memory_per_cpu": _or_null(job.mem_per_cpu),
            "minimum_cpus_per_node": fields.min_cpus(job),
            "priority": job.priority,
            "qos": job.qos,
            "required_nodes": job.req_nodes,
            "requeue": bool(job.requeue),
            "restart_cnt": job.restarts,
            "start_time": job.start_time,
            "state_reason": job.reason or "None",
            "standard_error": job.stderr,
            "standard_input": job.stdin,
            "standard_output": job.stdout,
            "submit_time": job.submit_time,
            "time_limit": None if limit == units.INFINITE else limit,
            "tres_per_job": f"gres:gpu:{job.gpus}" if job.gpus else "",
            "tres_per_node": job.tres_per_node,
            "tres_per_task": f"gres:gpu:{job.gpus_per_task}" if job.gpus_per_task else "",
            "tres_req_str": job.tres,
            "tres_alloc_str": job.tres if job.nodes else "",
            "user_id": job.uid,
            "user_name": fmt.user_name(job.uid, job.user),
            "current_working_directory": job.work_dir,
        }
    )
    return out


def json_text(reply: Message) -> str:
    """The whole ``squeue --json`` document.

    Args:
        reply: a GetJobs reply.

    Returns:
        The JSON text (Slurm's layout: meta, errors, jobs).
    """
    major, minor, micro = (int(part) for part in SLURM_VERSION.split("."))
    document = {
        "meta": {
            "plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"},
            "Slurm": {
                "version": {"major": major, "micro": micro, "minor": minor},
                "release": SLURM_VERSION,
            },
        },
        "errors": [],
        "jobs": [json_job(job) for job in reply.jobs],
    }
    return fmt.to_json(document)
