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

Imports ctld.sched.preempt, ctld.requeue, minislurm.accounts (QOS), ctld.state and minislurm.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ctld import requeue as requeueops
from ctld.intents import Intent
from ctld.sched.preempt import WAITING_FOR_RESOURCES, Preemptee, Relation, choose
from ctld.state import ClusterState
from minislurm.accounts import Qos
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


def group_of(job: Job, conf: SlurmConfig) -> str:
    """What the relation tells a running job by: its partition, or its QOS under preempt/qos.

    Args:
        job: the job.
        conf: slurm.conf.

    Returns:
        The partition's or the QOS's name.
    """
    return job.qos if conf.preempt_type == QOS else job.partition


def relation(state: ClusterState, conf: SlurmConfig, qos: Mapping[str, Qos]) -> Relation:
    """The groups of running jobs a pending job may preempt, by PreemptType.

    Args:
        state: the cluster (the jobs' partitions and QOS).
        conf: slurm.conf.
        qos: the QOS table (``Preempt=`` lists).

    Returns:
        The relation: lower-tier partitions, or the QOS its QOS's Preempt list names.
    """
    tiers = {name: p.priority_tier for name, p in state.partitions.items()}
    below = {
        name: frozenset(p for p, other in tiers.items() if other < tier)
        for name, tier in tiers.items()
    }

    def by_tier(job: PendingJob) -> frozenset[str]:
        return below.get(job.partition, frozenset())

    def by_qos(job: PendingJob) -> tuple[str, ...]:
        own = qos.get(state.jobs[job.job_id].qos)
        return own.preempt if own is not None else ()

    return by_tier if conf.preempt_type == PARTITION_PRIO else by_qos


def victims(
    state: ClusterState,
    conf: SlurmConfig,
    qos: Mapping[str, Qos],
    snapshot: Snapshot,
    decided: Plan,
    now: float,
    priority: Callable[[Job, float], int],
) -> tuple[list[Job], list[Intent]]:
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
        The victims' new (COMPLETING) records, and the kills to ask of their nodes.
    """
    waiting = WAITING_FOR_RESOURCES.intersection(decided.reasons.values())
    if not enabled(conf) or not waiting:
        return [], []
    exempt = conf.preempt_exempt_time * 60
    candidates = []
    dying = []
    for job in state.active_jobs():
        if job.allocation is None:
            continue
        rank = priority(job, now)
        entry = Preemptee(job.job_id, job.allocation, rank, job.start_time, group_of(job, conf))
        if job.state is JobState.COMPLETING:
            dying.append(entry)
        elif (
            job.state is JobState.RUNNING
            and now - job.start_time >= exempt
            and mode_of(job, conf, qos) != OFF
        ):
            candidates.append(entry)
    if not candidates:
        return [], []
    chosen = choose(snapshot, decided, candidates, relation(state, conf, qos), dying)
    killing: list[Job] = []
    intents: list[Intent] = []
    for preemption in chosen:
        for victim_id in preemption.victims:
            job = state.jobs[victim_id]
            victim, kill = requeueops.preempted(job, mode_of(job, conf, qos), now)
            killing.append(victim)
            intents += kill
    return killing, intents
