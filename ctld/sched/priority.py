"""Job priority: a pure function of the job, the time, the weights and the factors.

Slurm's ``priority/multifactor``: each factor is in [0, 1] and counts with
its ``PriorityWeight*``; the nice value is subtracted::

    priority = Wage * age + Wfairshare * fairshare + Wjobsize * size
             + Wpartition * partition + Wqos * qos - nice

* age: time since the job became eligible over ``PriorityMaxAge`` (at most 1);
* fairshare: the association's Fair Tree factor (:mod:`ctld.accounting.fairshare`);
* size: (nodes / cluster nodes + CPUs / cluster CPUs) / 2, or one minus that
  with ``PriorityFavorSmall``;
* partition: its PriorityJobFactor over the largest PriorityJobFactor;
* qos: its QOS's Priority over the largest Priority of any QOS (0 when all
  are 0, as for the one ``normal`` QOS of a fresh database).

With every weight 0 all jobs tie at 1 and the scheduler's tie-breaks (submit
time, then job id) make it first-come, first-served. Slurm's default,
``priority/basic``, ignores the weights and numbers jobs down instead: each
one less than the job submitted before it, less its nice value, so that the
order shows in ``squeue -o %Q`` and its default sort as it does in Slurm.

Imports only minislurm.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.model import Job

BASIC_TOP = 0xFFFF0000  # priority/basic: the first job gets one less


@dataclass(frozen=True)
class PriorityWeights:
    """The ``Priority*`` settings of slurm.conf that this function reads."""

    basic: bool = False  # PriorityType=priority/basic: the weights do not count
    age: int = 0
    job_size: int = 0
    partition: int = 0
    fairshare: int = 0
    qos: int = 0
    max_age: float = 7 * 24 * 3600.0  # seconds (PriorityMaxAge=7-0)
    favor_small: bool = False


@dataclass(frozen=True)
class ClusterSize:
    """What the size and partition factors are relative to."""

    nodes: int = 0
    cpus: int = 0
    max_job_factor: int = 1  # the largest PriorityJobFactor of any partition


@dataclass(frozen=True)
class Factors:
    """A job's normalised priority factors, each in [0, 1], and its nice value."""

    age: float = 0.0
    fairshare: float = 0.0
    job_size: float = 0.0
    partition: float = 0.0
    qos: float = 0.0
    nice: int = 0

    def weighted(self, weights: PriorityWeights) -> dict[str, float]:
        """Each factor times its weight, as sprio shows them."""
        return {
            "AGE": weights.age * self.age,
            "FAIRSHARE": weights.fairshare * self.fairshare,
            "JOBSIZE": weights.job_size * self.job_size,
            "PARTITION": weights.partition * self.partition,
            "QOS": weights.qos * self.qos,
        }

    def priority(self, weights: PriorityWeights) -> int:
        """The priority these factors give: at least 1."""
        return max(int(sum(self.weighted(weights).values()) - self.nice), 1)


def job_factors(
    job: Job,
    now: float,
    weights: PriorityWeights,
    size: ClusterSize,
    partition_job_factor: int = 1,
    fairshare: float = 0.0,
    qos: float = 0.0,
) -> Factors:
    """A job's factors now.

    Args:
        job: the job.
        now: the current time (epoch seconds).
        weights: the configured weights (PriorityMaxAge, PriorityFavorSmall).
        size: the cluster's nodes and CPUs, and the largest PriorityJobFactor.
        partition_job_factor: the job's partition's PriorityJobFactor.
        fairshare: its association's fair-share factor.
        qos: its QOS factor.

    Returns:
        The factors.
    """
    since = job.eligible_time or job.submit_time
    age = min(max(now - since, 0.0) / weights.max_age, 1.0) if weights.max_age > 0 else 1.0
    node_part = min(job.request.min_nodes / size.nodes, 1.0) if size.nodes else 0.0
    cpu_part = min(job.request.min_cpus / size.cpus, 1.0) if size.cpus else 0.0
    job_size = (node_part + cpu_part) / 2
    if weights.favor_small:
        job_size = 1.0 - job_size
    partition = partition_job_factor / size.max_job_factor if size.max_job_factor else 0.0
    return Factors(age, fairshare, job_size, partition, qos, job.nice)


def job_priority(
    job: Job,
    now: float,
    weights: PriorityWeights,
    size: ClusterSize,
    partition_job_factor: int = 1,
    fairshare: float = 0.0,
    qos: float = 0.0,
) -> int:
    """The job's priority now; 0 for a held job, the one an administrator set if any.

    Args:
        job: the pending job.
        now: the current time (epoch seconds).
        weights: the configured weights.
        size: the cluster's size, for the size and partition factors.
        partition_job_factor: the job's partition's PriorityJobFactor.
        fairshare: its association's fair-share factor.
        qos: its QOS factor.

    Returns:
        The priority, at least 1 unless the job is held.
    """
    fixed = fixed_priority(job, weights)
    if fixed is not None:
        return fixed
    factors = job_factors(job, now, weights, size, partition_job_factor, fairshare, qos)
    return factors.priority(weights)


def fixed_priority(job: Job, weights: PriorityWeights) -> int | None:
    """A priority no factor makes: 0 when held, an administrator's, or priority/basic's.

    priority/basic's is one less per job submitted before, less the nice value
    (at least 1); job ids count submissions, so the id stands for the count,
    and the tasks of an array share their array's.

    Args:
        job: the job.
        weights: the configured weights.

    Returns:
        The priority, or None when the factors make it.
    """
    if job.held:
        return 0
    if job.priority_set:
        return job.priority_set
    if weights.basic:
        return max(BASIC_TOP - (job.array_job_id or job.job_id) - job.nice, 1)
    return None
