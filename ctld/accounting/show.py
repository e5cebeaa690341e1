"""What sacctmgr show, sshare and sprio are answered, built from the controller's state.

Imports ctld.accounting.manager, ctld.sched.priority and minislurm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from ctld.accounting.manager import Accounting
from ctld.sched.priority import Factors, PriorityWeights
from minislurm.model import Job
from minislurm.requests import (
    AccountInfo,
    AcctUserInfo,
    AssocInfo,
    AssocListing,
    JobPriorityInfo,
    QosInfo,
)
from minislurm.states import JobState


def assoc_listing(accounting: Accounting, cluster: str) -> AssocListing:
    """Every association with its fair-share figures, accounts and users.

    Args:
        accounting: the controller's associations and usage.
        cluster: the cluster name.

    Returns:
        The listing; associations depth first, as sshare lists them.
    """
    book = accounting.book
    assocs = tuple(
        AssocInfo(
            account=row.assoc.account,
            user=row.assoc.user,
            parent=row.assoc.parent,
            shares=row.assoc.shares,
            max_jobs=row.assoc.max_jobs,
            max_submit=row.assoc.max_submit,
            grp_tres=row.assoc.grp_tres,
            depth=row.depth,
            raw_usage=row.raw_usage,
            norm_shares=row.norm_shares,
            norm_usage=row.norm_usage,
            effective_usage=row.effective_usage,
            level_fs=row.level_fs if math.isfinite(row.level_fs) else math.inf,
            fairshare=row.fairshare,
        )
        for row in accounting.shares()
    )
    accounts = tuple(
        AccountInfo(name=a.name, description=a.description, organization=a.organization)
        for a in sorted(book.accounts.values(), key=lambda a: a.name)
    )
    users = tuple(
        AcctUserInfo(name=u.name, default_account=u.default_account, admin=u.admin)
        for u in sorted(book.users.values(), key=lambda u: u.name)
    )
    qos = tuple(
        QosInfo(
            name=q.name,
            description=q.description,
            priority=q.priority,
            max_jobs_pu=q.max_jobs_pu,
            max_submit_pu=q.max_submit_pu,
            preempt=",".join(q.preempt),
            preempt_mode=q.preempt_mode,
        )
        for q in book.qos.values()
    )
    return AssocListing(assocs=assocs, accounts=accounts, users=users, cluster=cluster, qos=qos)


def priorities(
    jobs: Iterable[Job], factors: Callable[[Job], Factors], weights: PriorityWeights
) -> tuple[list[JobPriorityInfo], dict[str, int]]:
    """The factors of every pending job that is not held, as sprio lists them.

    Args:
        jobs: the controller's jobs.
        factors: a job's factors now.
        weights: the configured weights.

    Returns:
        The jobs' factors by job id, and the weights by sprio's names.
    """
    out = []
    for job in sorted(jobs, key=lambda j: j.job_id):
        if job.state is not JobState.PENDING or job.held:
            continue
        f = factors(job)
        out.append(
            JobPriorityInfo(
                job_id=job.job_id,
                partition=job.partition,
                user=job.user,
                account=job.account,
                priority=f.priority(weights),
                age=f.age,
                fairshare=f.fairshare,
                job_size=f.job_size,
                partition_factor=f.partition,
                qos=f.qos,
                nice=f.nice,
            )
        )
    named = {
        "Age": weights.age,
        "FairShare": weights.fairshare,
        "JobSize": weights.job_size,
        "Partition": weights.partition,
        "QOS": weights.qos,
    }
    return out, named
