"""Answering ``GetAccounting``: the records sacct asked for, read from the database.

Accounting reads the database, not the controller's memory: the controller
forgets finished jobs after MinJobAge, their records stay. The filters a
query can apply go to :func:`ctld.store.repo.load_accounting`; the records
are built by :mod:`ctld.accounting` (earlier runs of requeued jobs, with
``-D``, by :mod:`ctld.acctruns`) and chosen exactly by :mod:`ctld.acctselect`.

Imports ctld.accounting, ctld.acctruns, ctld.acctselect, ctld.store and the generated
messages; no gRPC server, no clock (``now`` is an argument).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from ctld import accounting, acctruns, acctselect
from ctld.store import repo, runrepo
from minislurm.wire.rpc import minislurm_pb2 as pb


def accounting_records(
    session: Session, request: pb.GetAccountingRequest, now: float, cluster: str
) -> list[pb.AcctRecord]:
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
    selectors = [acctselect.parse_selector(text) for text in request.jobs]
    jobs = repo.load_accounting(
        session,
        job_ids={sel.job_id for sel in selectors},
        users=list(request.users),
        partitions=list(request.partitions),
        active_since=float(request.start_after),
    )
    jobs.sort(key=lambda pair: accounting.job_order(pair[0]))
    runs = runrepo.load_runs(session, [job.job_id for job, _ in jobs]) if request.duplicates else {}
    records = []
    for job, steps in jobs:
        for run in runs.get(job.job_id, []):
            records += acctruns.run_records(run, now, cluster)
        records += accounting.job_records(job, steps, now, cluster)
    return acctselect.select(records, request, now)
