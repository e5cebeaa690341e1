"""The controller's accounting of associations: sacctmgr's changes, usage, fair share, limits.

Holds the association :class:`~minislurm.accounts.Book` and the decayed usage in
memory, mirrors every change in the database before answering (a change
acknowledged is durable), charges running jobs' allocated TRES-seconds,
and answers what submission and scheduling ask: a job's account, whether
``AccountingStorageEnforce`` lets it in, its fair-share factor, and which
association limit holds it back.

Imports ctld.accounting's assoc, assocedit, qos, fairshare and privileges, ctld.store
and minislurm.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import replace

from sqlalchemy.orm import Session

from ctld.accounting import assocedit
from ctld.accounting import qos as qosops
from ctld.accounting.assoc import AcctError
from ctld.accounting.fairshare import ShareRow, billing, decayed, fair_tree, parse_billing_weights
from ctld.accounting.privileges import Privileges
from ctld.store import assocrepo
from minislurm.accounts import UNSET, Assoc, Book, initial_book
from minislurm.arrays import TaskSet
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest, PermissionDenied
from minislurm.model import Job, PendingJob
from minislurm.requests import AssocChange
from minislurm.states import TERMINAL_JOB_STATES, JobState

log = logging.getLogger(__name__)

INVALID_ACCOUNT = "Invalid account or account/partition combination specified"
SUBMIT_LIMIT = (
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
)
REASON_MAX_JOBS = "AssocMaxJobsLimit"
REASON_GRP_GPUS = "AssocGrpGRES"
REASON_QOS_MAX_JOBS = "QOSMaxJobsPerUserLimit"
INVALID_QOS = "Invalid qos specification"
_HOLDING = (JobState.RUNNING, JobState.COMPLETING, JobState.SUSPENDED)

Transaction = Callable[[], AbstractContextManager[Session]]


class Accounting:
    """Associations, usage and fair share of one controller.

    Args:
        conf: the configuration.
        transaction: opens one database transaction.
        superusers: uids that are always administrators (root, SlurmUser).
    """

    def __init__(
        self, conf: SlurmConfig, transaction: Transaction, superusers: Iterable[int]
    ) -> None:
        self._transaction = transaction
        self.privileges = Privileges(frozenset(superusers))
        self.reconfigure(conf)
        self.usage: dict[tuple[str, str], float] = {}
        self.usage_time = 0.0
        self.book = initial_book()

    def reconfigure(self, conf: SlurmConfig) -> None:
        """Take slurm.conf's enforcement, decay half-life and billing weights (again).

        Args:
            conf: the configuration.
        """
        self.conf = conf
        self.enforce = frozenset(e.lower() for e in conf.accounting_storage_enforce)
        if self.enforce & {"limits", "qos"}:
            self.enforce |= {"associations"}
        self.half_life = conf.priority_decay_half_life * 60.0
        self._weights = {
            p.name: parse_billing_weights(p.tres_billing_weights) for p in conf.partitions
        }

    @property
    def book(self) -> Book:
        """The accounts, users, associations and QOS."""
        return self._book

    @book.setter
    def book(self, book: Book) -> None:
        self._book = book
        self.privileges.follow(book)
        self._refresh()

    def load(self, now: float) -> None:
        """Read the stored tree, or store the initial one (root) on a first start.

        Args:
            now: the time.
        """
        with self._transaction() as s:
            found = assocrepo.load_book(s)
            if found is None:
                self.usage_time = now
                assocrepo.save_book(s, self.book, self.usage, now)
            else:
                self.usage, self.usage_time = found[1], found[2]
                self.book = found[0]

    # ------------------------------------------------------------ sacctmgr

    def manage(self, request: AssocChange, jobs: Iterable[Job]) -> list[str]:
        """sacctmgr add|modify|delete account|user|qos: change, store, and say what changed.

        Args:
            request: the verb, entity, names, conditions and settings.
            jobs: the controller's jobs (what pending or running jobs use may not be deleted).

        Returns:
            What sacctmgr prints.

        Raises:
            PermissionDenied: the requester is not an operator (AdminLevel, root or SlurmUser).
            AcctError: nothing changed; the message says why.
        """
        grantor = self.privileges.level(request.requester_uid)
        if request.requester_uid not in self.privileges:
            raise PermissionDenied(" Access/permission denied")
        cluster = self.conf.cluster_name
        settings = dict(request.settings)
        where = {k.lower(): v for k, v in request.where.items()}
        names = [n for n in request.names if n]
        if request.verb == "add" and request.entity == "account":
            book, lines = assocedit.add_accounts(self.book, names, settings, cluster)
        elif request.verb == "add" and request.entity == "user":
            book, lines = assocedit.add_users(self.book, names, settings, cluster, grantor)
        elif request.verb == "modify" and request.entity in ("account", "user"):
            book, lines = assocedit.modify(
                self.book, request.entity, where, settings, cluster, grantor
            )
        elif request.verb == "delete" and request.entity in ("account", "user"):
            busy = {(j.account, j.user) for j in jobs if j.state not in TERMINAL_JOB_STATES}
            book, lines = assocedit.delete(self.book, request.entity, where, busy)
        elif request.entity == "qos":
            book, lines = self._manage_qos(request.verb, names, where, settings, jobs)
        else:
            raise AcctError(f" Unknown request: {request.verb} {request.entity}")
        usage = {k: v for k, v in self.usage.items() if k in book.assocs}
        with self._transaction() as s:
            assocrepo.save_book(s, book, usage, self.usage_time)
        self.usage = usage
        self.book = book
        log.info("associations: %s %s %s", request.verb, request.entity, " ".join(names))
        return lines

    def _manage_qos(
        self,
        verb: str,
        names: list[str],
        where: dict[str, str],
        settings: dict[str, str],
        jobs: Iterable[Job],
    ) -> tuple[Book, list[str]]:
        wanted = {n.lower() for n in where.get("name", "").split(",") if n}
        if verb == "add":
            table, lines = qosops.add(self.book.qos, names, settings)
        elif verb == "modify":
            table, lines = qosops.modify(self.book.qos, wanted, settings)
        elif verb == "delete":
            busy = {j.qos for j in jobs if j.state not in TERMINAL_JOB_STATES}
            table, lines = qosops.delete(self.book.qos, wanted, busy)
        else:
            raise AcctError(f" Unknown request: {verb} qos")
        return replace(self.book, qos=table), lines

    # ------------------------------------------------------------ usage and fair share

    def charge(self, now: float, jobs: Iterable[Job]) -> None:
        """Decay usage to ``now`` and charge what jobs held since the last charge.

        Args:
            now: the time.
            jobs: jobs that may have held resources since then (running, or ended since).
        """
        since = self.usage_time
        if now <= since:
            return
        factor = decayed(1.0, now - since, self.half_life)
        usage = {k: v * factor for k, v in self.usage.items()}
        for job in jobs:
            alloc = job.allocation
            if alloc is None or not job.start_time:
                continue
            end = now if job.state in _HOLDING or not job.end_time else min(job.end_time, now)
            seconds = end - max(job.start_time, since)
            key = (job.account, job.user)
            if seconds <= 0 or key not in self.book.assocs:
                continue
            weights = self._weights.get(job.partition, {})
            rate = billing(alloc.cpus, alloc.mem, alloc.gpus, len(alloc.nodes), weights)
            usage[key] = usage.get(key, 0.0) + rate * seconds
        with self._transaction() as s:
            assocrepo.save_usage(s, usage, now)
        self.usage, self.usage_time = usage, now
        self._refresh()

    def _refresh(self) -> None:
        self._factors = {
            row.assoc.key: row.fairshare
            for row in fair_tree(self.book, self.usage)
            if row.assoc.user
        }
        # What each pass asks per job, worked out once per change of the tree.
        self._chains = {k: (a, *self.book.ancestors(a)) for k, a in self.book.assocs.items()}
        self._max_jobs = {k: self.limit(a, "max_jobs") for k, a in self.book.assocs.items()}
        self._top_qos = max((q.priority for q in self.book.qos.values()), default=0)

    def shares(self) -> list[ShareRow]:
        """sshare's rows, from the usage as last charged."""
        return fair_tree(self.book, self.usage)

    def fairshare(self, job: Job) -> float:
        """The Fair Tree factor of the job's association (0 when it has none)."""
        return self._factors.get((job.account, job.user), 0.0)

    # ------------------------------------------------------------ submission and limits

    def admit(self, job: Job, jobs: Iterable[Job]) -> Job:
        """Give a new job its account, and check it against the associations.

        Args:
            job: the new job (its account as submitted, maybe "").
            jobs: the jobs the controller knows (for MaxSubmitJobs).

        Returns:
            The job with its account filled in (the user's default account).

        Raises:
            InvalidRequest: Slurm's message, when enforcement rejects it.
        """
        job, found = self._association(job)
        if found is None or "associations" not in self.enforce or "limits" not in self.enforce:
            return job
        live = [j for j in jobs if j.user == job.user and j.state not in TERMINAL_JOB_STATES]
        adding = _job_count(job)
        qos = self.book.qos.get(job.qos)
        if qos is not None and qos.max_submit_pu != UNSET:
            queued = sum(_job_count(j) for j in live if j.qos == job.qos)
            if queued + adding > qos.max_submit_pu:
                raise InvalidRequest(f"QOSMaxSubmitJobPerUserLimit\n{SUBMIT_LIMIT}")
        limit = self.limit(found, "max_submit")
        if limit != UNSET:
            if sum(_job_count(j) for j in live if j.account == found.account) + adding > limit:
                raise InvalidRequest(f"AssocMaxSubmitJobLimit\n{SUBMIT_LIMIT}")
        return job

    def reassign(self, job: Job) -> Job:
        """A job given another account or QOS (scontrol update), checked as a submission is.

        Args:
            job: the job with its new account and QOS.

        Returns:
            The job with its account as the association names it.

        Raises:
            InvalidRequest: Slurm's message, when enforcement rejects it.
        """
        return self._association(job)[0]

    def _association(self, job: Job) -> tuple[Job, Assoc | None]:
        """The job's account filled in and its association, checked as enforcement says."""
        found = self.book.user_assoc(job.user, job.account.lower())
        if found is not None:
            job = replace(job, account=found.account)
        elif not job.account and job.user in self.book.users:
            job = replace(job, account=self.book.users[job.user].default_account)
        if "qos" in self.enforce and job.qos not in self.book.qos:
            raise InvalidRequest(INVALID_QOS)
        if "associations" in self.enforce and found is None:
            raise InvalidRequest(INVALID_ACCOUNT)
        return job, found

    def qos_factor(self, job: Job) -> float:
        """The QOS priority factor: the job's QOS's Priority over the largest (0 when all are 0).

        Args:
            job: the job.

        Returns:
            The factor in [0, 1].
        """
        qos = self.book.qos.get(job.qos)
        return qos.priority / self._top_qos if qos is not None and self._top_qos else 0.0

    def limit(self, assoc: Assoc, name: str) -> int:
        """A per-user limit as it applies: the association's, or else the nearest account's above.

        Args:
            assoc: the user's association.
            name: ``max_jobs`` or ``max_submit``.

        Returns:
            The limit, or UNSET.
        """
        for holder in [assoc, *self.book.ancestors(assoc)]:
            value = int(getattr(holder, name))
            if value != UNSET:
                return value
        return UNSET

    def hold_back(
        self, pending: list[PendingJob], jobs: dict[int, Job], running: list[Job]
    ) -> list[PendingJob]:
        """Block the pending entries that association limits keep from starting in this pass.

        Entries are taken in priority order, each as if it started: an
        association's ``MaxJobs`` (or the nearest account's above) lets at most
        that many jobs run, and ``GrpTRES=gres/gpu=N`` of any association on
        the way to root caps the GPUs of the jobs under it. So one pass never
        starts more than a limit allows; a job held back says
        ``AssocMaxJobsLimit`` or ``AssocGrpGRES``.

        Args:
            pending: the pass's entries.
            jobs: the job records by id.
            running: jobs holding resources now.

        Returns:
            The entries, the held-back ones blocked.
        """
        if "limits" not in self.enforce:
            return pending
        counts: dict[tuple[str, ...], int] = {}  # running jobs per association, per QOS and user
        gpus: dict[tuple[str, ...], int] = {}  # GPUs per association and the accounts above
        for job in running:
            if job.allocation is not None:
                self._count(job, job.allocation.gpus, counts, gpus)
        out: dict[int, PendingJob] = {}
        order = sorted(
            enumerate(pending), key=lambda p: (-p[1].priority, p[1].submit_time, p[1].key)
        )
        for index, entry in order:
            job = jobs[entry.job_id]
            reason = "" if entry.blocked or entry.held else self._reason(job, entry, counts, gpus)
            if not reason and not entry.blocked and not entry.held:
                self._count(job, entry.request.min_gpus, counts, gpus)
            out[index] = replace(entry, blocked=reason) if reason else entry
        return [out[i] for i in range(len(pending))]

    def _count(
        self,
        job: Job,
        gpu_count: int,
        counts: dict[tuple[str, ...], int],
        gpus: dict[tuple[str, ...], int],
    ) -> None:
        key = ("qos", job.qos, job.user)
        counts[key] = counts.get(key, 0) + 1
        chain = self._chains.get((job.account, job.user))
        if chain is None:
            return
        counts[chain[0].key] = counts.get(chain[0].key, 0) + 1
        for holder in chain:
            gpus[holder.key] = gpus.get(holder.key, 0) + gpu_count

    def _reason(
        self,
        job: Job,
        entry: PendingJob,
        counts: dict[tuple[str, ...], int],
        gpus: dict[tuple[str, ...], int],
    ) -> str:
        qos = self.book.qos.get(job.qos)
        if qos is not None and qos.max_jobs_pu != UNSET:
            if counts.get(("qos", job.qos, job.user), 0) >= qos.max_jobs_pu:
                return REASON_QOS_MAX_JOBS
        chain = self._chains.get((job.account, job.user))
        if chain is None:
            return ""
        max_jobs = self._max_jobs[chain[0].key]
        if max_jobs != UNSET and counts.get(chain[0].key, 0) >= max_jobs:
            return REASON_MAX_JOBS
        for holder in chain:
            cap = holder.grp_gpus
            if cap != UNSET and gpus.get(holder.key, 0) + entry.request.min_gpus > cap:
                return REASON_GRP_GPUS
        return ""


def _job_count(job: Job) -> int:
    """How many jobs a record stands for in submit limits: each array task counts."""
    if job.array_job_id and job.array_task_id is None:
        return max(len(TaskSet.parse(job.array_tasks)), 1)
    return 1
