"""Answering ``GetAccounting``: the records sacct asked for, read from the database.

Accounting reads the database, not the controller's memory: the controller
forgets finished jobs after MinJobAge, their records stay. The filters a
query can apply go to :func:`ctld.store.repo.load_accounting`; the records
are built by :mod:`ctld.accounting.records` (earlier runs of requeued jobs, with
``-D``, by :mod:`ctld.accounting.runs`) and chosen exactly by :mod:`ctld.accounting.filters`.

Imports ctld.accounting's records, runs and filters, ctld.store and minislurm's
records; no gRPC server, no clock (``now`` is an argument).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from ctld.accounting.filters import parse_selector, select
from ctld.accounting.records import job_order, job_records
from ctld.accounting.runs import run_records
from ctld.store import repo, runrepo
from minislurm.requests import AcctQuery, AcctRecord, NodeStepStat


def accounting_records(
    session: Session, request: AcctQuery, now: float, cluster: str
) -> list[AcctRecord]:
    """Every record a GetAccounting request asks for, in sacct's order.

    Args:
        session: an open (read) transaction.
        request: the filters.
        now: the controller's clock (running records' elapsed time, the window's end).
        cluster: ClusterName, for each record.

    Returns:
        The records: each job's line followed by its steps (with
        ``duplicates``, each earlier run's first).

    Raises:
        InvalidRequest: a malformed job id or an unknown state.
    """
    selectors = [parse_selector(text) for text in request.jobs]
    jobs = repo.load_accounting(
        session,
        job_ids={sel.job_id for sel in selectors},
        users=list(request.users),
        partitions=list(request.partitions),
        active_since=float(request.start_after),
    )
    jobs.sort(key=lambda pair: job_order(pair[0]))
    ids = [job.job_id for job, _ in jobs]
    runs = runrepo.load_runs(session, ids) if request.duplicates else {}
    usage: dict[tuple[int, int], dict[int, list[NodeStepStat]]] = {}
    for (job_id, run_id, step_id), stats in repo.load_usage(session, ids).items():
        usage.setdefault((job_id, run_id), {})[step_id] = stats
    records = []
    for job, steps in jobs:
        for run in runs.get(job.job_id, []):
            records += run_records(run, now, cluster, usage.get((job.job_id, run.job.restarts)))
        records += job_records(job, steps, now, cluster, usage.get((job.job_id, job.restarts)))
    return select(records, request, now)
