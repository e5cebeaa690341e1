"""Job priority: a pure function of the job, the time and the weights.

A subset of Slurm's ``priority/multifactor``: age, job size and partition
factors, each in [0, 1], times their ``PriorityWeight*``, minus the job's
nice value. With every weight 0 (Slurm's default) all jobs tie at 1 and the
scheduler's tie-breaks (submit time, then job id) make it first-come,
first-served.

Imports only minislurm.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.model import Job


@dataclass(frozen=True)
class PriorityWeights:
    """The ``Priority*`` settings of slurm.conf that this function reads."""

    age: int = 0
    job_size: int = 0
    partition: int = 0
    max_age: float = 7 * 24 * 3600.0  # seconds (PriorityMaxAge=7-0)
    favor_small: bool = False


def job_priority(
    job: Job, now: float, weights: PriorityWeights, cluster_cpus: int, partition_factor: float
) -> int:
    """The job's priority now; 0 for a held job.

    Args:
        job: the pending job.
        now: the current time (epoch seconds).
        weights: the configured weights.
        cluster_cpus: CPUs in the whole cluster, for the size factor.
        partition_factor: the partition's PriorityJobFactor, normalised to [0, 1].

    Returns:
        The priority, at least 1 unless the job is held.
    """
    if job.held:
        return 0
    since = job.eligible_time or job.submit_time
    age = min(max(now - since, 0.0) / weights.max_age, 1.0) if weights.max_age > 0 else 1.0
    size = min(job.request.min_cpus / cluster_cpus, 1.0) if cluster_cpus else 0.0
    if weights.favor_small:
        size = 1.0 - size
    value = (
        weights.age * age + weights.job_size * size + weights.partition * partition_factor
    ) - job.nice
    return max(int(value), 1)
