"""Jobs' priorities as shown and charged: factors, weights and fair-share usage.

Imports ctld.sched.priority, ctld.scheduling, ctld.acctmgr, ctld.state and minislurm.
"""

from __future__ import annotations

from ctld.accounting.manager import Accounting
from ctld.sched.priority import Factors, PriorityWeights, fixed_priority, job_factors
from ctld.sched.snapshot import cluster_size
from ctld.state import ClusterState
from minislurm.config import SlurmConfig
from minislurm.model import Job
from minislurm.states import JobState


def weights_of(conf: SlurmConfig) -> PriorityWeights:
    """The multifactor weights slurm.conf sets (``Priority*``), none under priority/basic.

    Args:
        conf: the configuration.

    Returns:
        The weights.
    """
    if conf.priority_type == "priority/basic":
        return PriorityWeights(basic=True)
    return PriorityWeights(
        age=conf.priority_weight_age,
        job_size=conf.priority_weight_job_size,
        partition=conf.priority_weight_partition,
        fairshare=conf.priority_weight_fairshare,
        qos=conf.priority_weight_qos,
        max_age=float(conf.priority_max_age * 60),
        favor_small=conf.priority_favor_small,
    )


class Ranking:
    """Priorities of the jobs the controller knows.

    Args:
        state: the cluster.
        weights: the multifactor weights.
        accounting: fair share and QOS.
    """

    def __init__(self, state: ClusterState, weights: PriorityWeights, accounting: Accounting):
        self._state = state
        self.weights = weights
        self._accounting = accounting

    def priority(self, job: Job, now: float) -> int:
        """A job's priority as shown (0 when held, as in Slurm).

        Args:
            job: the job.
            now: the time.

        Returns:
            The priority.
        """
        fixed = fixed_priority(job, self.weights)
        if fixed is not None:
            return fixed
        when = now if job.state is JobState.PENDING else job.submit_time
        return self.factors(job, when).priority(self.weights)

    def factors(self, job: Job, now: float) -> Factors:
        """A job's priority factors now (what sprio shows).

        Args:
            job: the job.
            now: the time.

        Returns:
            Its factors.
        """
        part = self._state.partitions.get(job.partition)
        job_factor = part.priority_job_factor if part else 1
        size = cluster_size(self._state)
        fairshare = self._accounting.fairshare(job)
        qos = self._accounting.qos_factor(job)
        return job_factors(job, now, self.weights, size, job_factor, fairshare, qos)

    def charge_usage(self, now: float) -> None:
        """Charge the allocated TRES-seconds of jobs to their associations (fair share).

        Args:
            now: the time.
        """
        since = self._accounting.usage_time
        jobs = [
            j
            for j in self._state.jobs.values()
            if j.allocation and (not j.end_time or j.end_time > since)
        ]
        self._accounting.charge(now, jobs)
