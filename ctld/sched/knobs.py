"""The scheduler's knobs: ``SchedulerType``, ``default_queue_depth`` and the ``bf_*`` parameters.

One frozen dataclass with Slurm's defaults, built from slurm.conf once at
start and passed to every pass (no global, unlike Slurm's ``slurm_conf``).
minislurm.config has already checked the values' syntax and ranges.

Imports only minislurm.config and minislurm.topology.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from minislurm.config import SlurmConfig
from minislurm.topology import Topology

SCHED_BACKFILL = "sched/backfill"
SCHED_BUILTIN = "sched/builtin"

DEFAULT_BF_WINDOW = 1440  # minutes: a day
DEFAULT_BF_RESOLUTION = 60  # seconds
DEFAULT_BF_MAX_JOB_TEST = 500
DEFAULT_BF_INTERVAL = 30  # seconds
DEFAULT_BF_JOB_PART_COUNT_RESERVE = 0  # every job tested gets a reservation
DEFAULT_QUEUE_DEPTH = 100  # jobs an event-triggered pass looks at
DEFAULT_MAX_SWITCH_WAIT = 300  # seconds a job waits at most for its --switches count


@dataclass(frozen=True)
class SchedConfig:
    """How a pass schedules.

    ``scheduler_type`` is ``sched/backfill`` (Slurm's default) or
    ``sched/builtin`` (strict priority order: the first job of a partition
    that does not fit blocks the partition). ``bf_job_part_count_reserve``
    (0: no limit) reserves only for that many waiting jobs of each partition,
    highest priority first; the jobs below start only where they delay none of
    those (1 is EASY backfilling). ``default_queue_depth`` bounds the
    quick pass the controller runs on events between full passes (Slurm's
    main scheduler). ``bf_continue`` is accepted
    and has no effect: a pass is a pure function of one snapshot and never
    yields its locks part way, which is what the flag is about in Slurm.
    """

    scheduler_type: str = SCHED_BACKFILL
    bf_window: int = DEFAULT_BF_WINDOW  # minutes: no reservation starts later than this
    bf_resolution: int = DEFAULT_BF_RESOLUTION  # seconds: granularity of the resource-time map
    bf_max_job_test: int = DEFAULT_BF_MAX_JOB_TEST  # jobs tested per pass at most
    bf_interval: int = DEFAULT_BF_INTERVAL  # seconds between passes when nothing happens
    bf_job_part_count_reserve: int = DEFAULT_BF_JOB_PART_COUNT_RESERVE  # 0: reserve for all
    bf_continue: bool = False
    default_queue_depth: int = DEFAULT_QUEUE_DEPTH  # jobs an event-triggered pass looks at
    max_switch_wait: int = DEFAULT_MAX_SWITCH_WAIT  # seconds
    topology: Topology | None = None  # topology/tree or topology/block; None: flat

    @property
    def backfill(self) -> bool:
        """Whether lower-priority jobs may start ahead of waiting ones."""
        return self.scheduler_type == SCHED_BACKFILL

    @property
    def window_seconds(self) -> float:
        """``bf_window`` in seconds."""
        return self.bf_window * 60.0


BUILTIN = SchedConfig(scheduler_type=SCHED_BUILTIN)


def sched_config(conf: SlurmConfig) -> SchedConfig:
    """The knobs slurm.conf sets; Slurm's defaults for the rest.

    Args:
        conf: the parsed slurm.conf (values already validated).

    Returns:
        The scheduler's configuration.
    """
    knobs = sched_from_params(conf.scheduler_type, conf.scheduler_parameters)
    return replace(knobs, topology=conf.topology)


def sched_from_params(scheduler_type: str, params: dict[str, str]) -> SchedConfig:
    """The knobs of a ``SchedulerType`` and parsed ``SchedulerParameters``; defaults for the rest.

    Args:
        scheduler_type: ``sched/backfill`` or ``sched/builtin``.
        params: the parameters by name (values already validated).

    Returns:
        The scheduler's configuration.
    """

    def number(name: str, default: int) -> int:
        value = params.get(name, "")
        return int(value) if value else default

    return SchedConfig(
        scheduler_type=scheduler_type,
        bf_window=number("bf_window", DEFAULT_BF_WINDOW),
        bf_resolution=number("bf_resolution", DEFAULT_BF_RESOLUTION),
        bf_max_job_test=number("bf_max_job_test", DEFAULT_BF_MAX_JOB_TEST),
        bf_interval=number("bf_interval", DEFAULT_BF_INTERVAL),
        bf_job_part_count_reserve=number(
            "bf_job_part_count_reserve", DEFAULT_BF_JOB_PART_COUNT_RESERVE
        ),
        bf_continue="bf_continue" in params,
        default_queue_depth=number("default_queue_depth", DEFAULT_QUEUE_DEPTH),
        max_switch_wait=number("max_switch_wait", DEFAULT_MAX_SWITCH_WAIT),
    )
