"""The GPUs a submission asks for: ``[type:]count`` per job, node or task, and tasks per GPU.

A type (``--gpus-per-node=a100:2``) asks for GPUs of that type, and every
typed request of a job, ``--gres=gpu:type:N`` included, must name the same
one. ``--ntasks-per-gpu`` makes the tasks from the GPUs, or the GPUs from
the tasks, as Slurm's client does.

Imports cli.common and cli.submit.
"""

from __future__ import annotations

from cli.common import CommandError
from cli.submit import gres_gpu_type, option_text, parse_count, parse_gpus


def gpu_fields(prog: str, values: dict[str, object]) -> dict[str, object]:
    """``--gpus``, ``--gpus-per-node``, ``--gpus-per-task`` (``[type:]N``), ``--ntasks-per-gpu``.

    A type (``a100:2``) asks for GPUs of that type; every typed request of a
    job must name the same type, ``--gres=gpu:type:N`` included.

    Args:
        prog: the command (for messages).
        values: the merged options.

    Returns:
        JobSpec fields.

    Raises:
        CommandError: Slurm's message and status.
    """
    spec: dict[str, object] = {}
    types = set()
    for key in ("gpus", "gpus_per_node", "gpus_per_task"):
        text = option_text(values, key)
        if text is not None:
            kind, spec[key] = parse_gpus(prog, text)
            if kind:
                types.add(kind)
    gres_type = gres_gpu_type(option_text(values, "gres") or "")
    if gres_type:
        types.add(gres_type)
    if len(types) > 1:
        raise CommandError("error: Invalid generic resource (gres) specification")
    if types:
        spec["gpu_type"] = types.pop()
    total, per_task = int(str(spec.get("gpus") or 0)), int(str(spec.get("gpus_per_task") or 0))
    if total and per_task and "ntasks" in values:
        if total // per_task != parse_count(str(values["ntasks"]), "--ntasks"):
            raise CommandError(
                "error: Failed to validate job spec. Based on --gpus and --gpus-per-task number"
                " of requested tasks differ from -n/--ntasks.\n"
                f"{prog}: error: Invalid generic resource (gres) specification"
            )
    per_gpu = option_text(values, "ntasks_per_gpu")
    if per_gpu is not None:
        spec.update(_ntasks_per_gpu(prog, values, spec, parse_count(per_gpu, "--ntasks-per-gpu")))
    elif spec.get("gpus_per_task") and not spec.get("gpus") and not _tasks_given(values):
        raise CommandError(
            "error: Failed to validate job spec. --gpus-per-task used without either --gpus"
            " or -n/--ntasks is not allowed.\n"
            f"{prog}: error: Invalid generic resource (gres) specification"
        )
    return spec


def _tasks_given(values: dict[str, object]) -> bool:
    """-n, or --ntasks-per-node (which Slurm's client also counts as asking for tasks)."""
    return "ntasks" in values or "ntasks_per_node" in values


def _ntasks_per_gpu(
    prog: str, values: dict[str, object], gpus: dict[str, object], per_gpu: int
) -> dict[str, object]:
    """``--ntasks-per-gpu``: the tasks from the GPUs, else the GPUs from the tasks or nodes."""
    for other in ("gpus_per_task", "gpus_per_socket"):
        if other in values:
            option = other.replace("_", "-")
            raise CommandError(
                f"fatal: --{option} is mutually exclusive with --ntasks-per-gpu"
                " and SLURM_NTASKS_PER_GPU"
            )
    nodes = int(str(values.get("nodes", "1")).split("-")[0] or 1)
    per_node = int(str(gpus.get("gpus_per_node") or 0)) or _gres_gpus(values)
    total = int(str(gpus.get("gpus") or 0)) or per_node * nodes
    if total:
        return {"ntasks": total * per_gpu}
    if "ntasks" in values:
        return {"gpus": -(-parse_count(str(values["ntasks"]), "--ntasks") // per_gpu)}
    if "nodes" in values:
        return {"ntasks": nodes * per_gpu, "gpus_per_node": 1}
    raise CommandError(
        "error: gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU"
        f" specification or a node/ntask specification\n{prog}: error: Invalid generic"
        " resource (gres) specification"
    )


def _gres_gpus(values: dict[str, object]) -> int:
    """The GPUs per node ``--gres`` asks for (0 when it names none, or not plainly)."""
    for item in str(values.get("gres") or "").split(","):
        fields = item.split(":")
        if fields[0] == "gpu":
            count = fields[-1] if len(fields) > 1 else "1"
            return int(count) if count.isdigit() else 0
    return 0
