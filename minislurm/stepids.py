"""Slurm's step ids: the special steps above the numbered ones, and how they are written.

A job's srun steps are numbered 0, 1, 2...; above ``MAX_NORMAL_STEP`` Slurm
keeps ids for steps of another kind, written by name after the job id:
``12.batch`` (the batch script), ``12.interactive`` (salloc's shell under
``use_interactive_step``), ``12.extern`` (never made here).

Imports nothing (the commands use it; it must stay cheap to import).
"""

from __future__ import annotations

MAX_NORMAL_STEP = 0xFFFFFFF0  # step ids above are Slurm's special steps
INTERACTIVE_STEP = 0xFFFFFFFA  # salloc's interactive step (SLURM_INTERACTIVE_STEP)
BATCH_STEP = 0xFFFFFFFB  # the batch script's step (SLURM_BATCH_SCRIPT)
EXTERN_STEP = 0xFFFFFFFC  # the extern step (SLURM_EXTERN_CONT)

_NAMES = {INTERACTIVE_STEP: "interactive", BATCH_STEP: "batch", EXTERN_STEP: "extern"}
STEP_IDS = {name: step_id for step_id, name in _NAMES.items()}  # "batch" -> its id


def step_id_text(step_id: int) -> str:
    """A step id as Slurm writes it after the job id: ``0``, ``1``... ``batch``, ``interactive``.

    Args:
        step_id: the id.

    Returns:
        Its text.
    """
    return _NAMES.get(step_id) or str(step_id)
