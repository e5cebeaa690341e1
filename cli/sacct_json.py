"""``sacct --json``: jobs with their steps, in the shape of Slurm 22.05's dbv0.0.38 output.

Only the keys an ``AcctRecord`` can fill are written; the document's frame
(meta, errors, jobs) and the nesting (a job's steps inside it) are Slurm's.

Pure functions; imports cli.fmt, cli.sacct_fields and minislurm's lean modules only.
"""

from __future__ import annotations

from cli import fmt
from cli import sacct_fields as fields
from minislurm import SLURM_VERSION, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

# Slurm's TRES ids: (type, name, id).
_TRES_IDS = {
    "cpu": ("cpu", None, 1),
    "mem": ("mem", None, 2),
    "energy": ("energy", None, 3),
    "node": ("node", None, 4),
    "billing": ("billing", None, 5),
    "gres/gpu": ("gres", "gpu", 1001),
}
_MEMORY_UNITS = {"M": 1, "G": 1024, "T": 1024 * 1024, "P": 1024**3}


def exit_code(code: int, signal: int) -> dict[str, object]:
    """An exit status as dbv0.0.38 writes it.

    Args:
        code: the exit code.
        signal: the signal that ended it, or 0.

    Returns:
        ``{"status": "SUCCESS"|"FAILED"|"SIGNALED", "return_code": ...}``.
    """
    if signal:
        return {
            "status": "SIGNALED",
            "return_code": 0,
            "signal": {"signal_id": signal, "name": units.signal_name(signal)},
        }
    return {"status": "FAILED" if code else "SUCCESS", "return_code": code}


def tres_list(text: str) -> list[dict[str, object]]:
    """A TRES string as dbv0.0.38's list of ``{type, name, id, count}``.

    Args:
        text: e.g. ``billing=1,cpu=1,mem=8000M,node=1``.

    Returns:
        The list (memory counted in megabytes).
    """
    out: list[dict[str, object]] = []
    for item in text.split(",") if text else []:
        key, _, count = item.partition("=")
        kind, name, tres_id = _TRES_IDS.get(key, (key, None, 0))
        if count[-1:] in _MEMORY_UNITS:
            number = int(count[:-1]) * _MEMORY_UNITS[count[-1]]
        else:
            number = int(count) if count.isdigit() else 0
        out.append({"type": kind, "name": name, "id": tres_id, "count": number})
    return out


def _cpu_time(seconds: float) -> dict[str, int]:
    whole = int(seconds)
    return {"seconds": whole, "microseconds": round((seconds - whole) * 1_000_000)}


def json_step(step: Message) -> dict[str, object]:
    """One step as dbv0.0.38 writes it.

    Args:
        step: a step's AcctRecord.

    Returns:
        The dict.
    """
    return {
        "time": {
            "elapsed": step.elapsed,
            "end": step.end_time or None,
            "start": step.start_time,
            "suspended": 0,
            "total": _cpu_time(step.total_cpu),
        },
        "exit_code": exit_code(step.exit_code, step.exit_signal),
        "nodes": {"count": step.nnodes, "range": step.nodes},
        "tasks": {"count": step.ntasks},
        "kill_request_user": None,
        "state": step.state,
        "statistics": {"memory": {"max_rss_kib": step.max_rss}},
        "step": {"job_id": step.job_id_raw, "id": fields.job_id_raw(step), "name": step.name},
        "tres": {"allocated": tres_list(step.alloc_tres)},
    }


def json_job(job: Message, steps: list[Message]) -> dict[str, object]:
    """One job with its steps as dbv0.0.38 writes it.

    Args:
        job: the job's AcctRecord.
        steps: its steps' records.

    Returns:
        The dict, in Slurm's key order.
    """
    requester = job.cancelled_by if job.cancelled_by != fields.NO_REQUESTER else None
    task = job.array_task_id if job.has("array_task_id") else None
    limit = job.time_limit
    return {
        "account": job.account,
        "allocation_nodes": job.nnodes if job.alloc_tres else 0,
        "array": {"job_id": job.array_job_id, "task_id": task},
        "cluster": job.cluster,
        "derived_exit_code": exit_code(job.derived_exit_code, job.derived_exit_signal),
        "time": {
            "elapsed": job.elapsed,
            "eligible": job.eligible_time,
            "end": job.end_time,
            "start": job.start_time,
            "submission": job.submit_time,
            "suspended": 0,
            "limit": None if limit == units.INFINITE else limit,
            "total": _cpu_time(job.total_cpu),
        },
        "exit_code": exit_code(job.exit_code, job.exit_signal),
        "group": fmt.group_name(job.gid, job.group),
        "job_id": job.job_id_raw,
        "name": job.name,
        "nodes": job.nodes or fields.NONE_ASSIGNED,
        "partition": job.partition,
        "qos": job.qos,
        "required": {"CPUs": job.req_cpus},
        "kill_request_user": None if requester is None else fmt.user_name(requester),
        "restarts": job.restarts,
        "state": {"current": job.state, "reason": job.reason or "None"},
        "steps": [json_step(step) for step in steps],
        "tres": {"allocated": tres_list(job.alloc_tres), "requested": tres_list(job.req_tres)},
        "user": fmt.user_name(job.uid, job.user),
        "working_directory": job.work_dir,
    }


def json_text(records: list[Message]) -> str:
    """The whole ``sacct --json`` document.

    Args:
        records: the reply's records (each job's line followed by its steps; a
            step whose job line was not selected is shown under its own record).

    Returns:
        The JSON text.
    """
    jobs: list[tuple[Message, list[Message]]] = []
    for record in records:
        if record.step and jobs and jobs[-1][0].job_id_raw == record.job_id_raw:
            jobs[-1][1].append(record)
        elif record.step:
            jobs.append((record, [record]))
        else:
            jobs.append((record, []))
    major, minor, micro = (int(part) for part in SLURM_VERSION.split("."))
    document = {
        "meta": {
            "plugin": {"type": "openapi/dbv0.0.38", "name": "Slurm OpenAPI DB v0.0.38"},
            "Slurm": {
                "version": {"major": major, "micro": micro, "minor": minor},
                "release": SLURM_VERSION,
            },
        },
        "errors": [],
        "jobs": [json_job(job, steps) for job, steps in jobs],
    }
    return fmt.to_json(document)
