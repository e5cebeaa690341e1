"""Preemption in the controller: who may preempt whom, and what becomes of the preempted.

``PreemptType`` says how the relation is decided (Slurm's ``preempt/``
plugins): ``preempt/partition_prio``, a job of a partition of higher
PriorityTier may preempt the jobs of partitions of lower tier;
``preempt/qos``, a job may preempt the jobs whose QOS its QOS's
``Preempt=`` list names. A running job may be preempted only when its
PreemptMode (its QOS's under preempt/qos when set, else its partition's,
else the global one) is not OFF and it has run PreemptExemptTime. The
choice of victims is :func:`ctld.sched.preempt.choose`'s; jobs already
being killed count as gone, so a preemptor waiting for its victims to end
does not preempt more. What happens to a victim is
:func:`ctld.requeue.preempted`'s.

Imports ctld.sched.preempt, ctld.requeue, ctld.assoc (QOS), ctld.state and minislurm.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ctld import requeue as requeueops
from ctld.assoc import Qos
from ctld.sched.preempt import Preemptee, Relation, choose
from ctld.state import ClusterState
from minislurm.config import SlurmConfig
from minislurm.model import Job, PendingJob, Plan, Snapshot
from minislurm.states import JobState

NONE = "preempt/none"
PARTITION_PRIO = "preempt/partition_prio"
QOS = "preempt/qos"
OFF = "OFF"


def enabled(conf: SlurmConfig) -> bool:
    """Whether any job may be preempted.

    Args:
        conf: slurm.conf.

    Returns:
        True unless PreemptType is preempt/none.
    """
    return conf.preempt_type != NONE


def mode_of(job: Job, conf: SlurmConfig, qos: Mapping[str, Qos]) -> str:
    """A running job's PreemptMode: OFF, CANCEL or REQUEUE.

    Args:
        job: the job.
        conf: slurm.conf (the global mode, its partition's).
        qos: the QOS table.

    Returns:
        Its QOS's (preempt/qos, when set), else its partition's, else the global mode.
    """
    own = qos.get(job.qos)
    if conf.preempt_type == QOS and own is not None and own.preempt_mode:
        return own.preempt_mode
    part = next((p for p in conf.partitions if p.name == job.partition), None)
    return part.preempt_mode if part is not None and part.preempt_mode else conf.preempt_mode


def relation(
    state: ClusterState, conf: SlurmConfig, qos: Mapping[str, Qos]
) -> Callable[[PendingJob, Preemptee], bool]:
    """Whether a pending job may preempt a running one, by PreemptType.

    Args:
        state: the cluster (the jobs' partitions and QOS).
        conf: slurm.conf.
        qos: the QOS table (``Preempt=`` lists).

    Returns:
        The relation.
    """
    tiers = {name: p.priority_tier for name, p in state.partitions.items()}

    def by_tier(job: PendingJob, victim: Preemptee) -> bool:
        other = state.jobs[victim.job_id].partition
        return tiers.get(job.partition, 0) > tiers.get(other, 0)

    def by_qos(job: PendingJob, victim: Preemptee) -> bool:
        own = qos.get(state.jobs[job.job_id].qos)
        return own is not None and state.jobs[victim.job_id].qos in own.preempt

    return by_tier if conf.preempt_type == PARTITION_PRIO else by_qos


def victims(
    state: ClusterState,
    conf: SlurmConfig,
    qos: Mapping[str, Qos],
    snapshot: Snapshot,
    decided: Plan,
    now: float,
    priority: Callable[[Job, float], int],
) -> list[Job]:
    """The running jobs that waiting jobs preempt after a pass, their kills begun.

    Args:
        state: the cluster.
        conf: slurm.conf.
        qos: the QOS table.
        snapshot: what the pass planned from.
        decided: the pass's plan.
        now: the time of the pass.
        priority: a job's priority now (candidates go lowest first).

    Returns:
        The victims' new (COMPLETING) records.
    """
    if not enabled(conf) or not any(j.state is JobState.PENDING for j in state.queued_jobs()):
        return []
    exempt = conf.preempt_exempt_time * 60
    candidates = []
    dying = []
    for job in state.active_jobs():
        if job.allocation is None:
            continue
        entry = Preemptee(job.job_id, job.allocation, priority(job, now), job.start_time)
        if job.state is JobState.COMPLETING:
            dying.append(entry)
        elif (
            job.state is JobState.RUNNING
            and now - job.start_time >= exempt
            and mode_of(job, conf, qos) != OFF
        ):
            candidates.append(entry)
    if not candidates:
        return []
    may: Relation = relation(state, conf, qos)
    chosen = choose(snapshot, decided, candidates, may, dying)
    out = []
    for preemption in chosen:
        for victim_id in preemption.victims:
            job = state.jobs[victim_id]
            out.append(requeueops.preempted(job, mode_of(job, conf, qos), now))
    return out
