"""The controller's advance reservations: create, update, delete, show, and expiry.

Each change is checked by :mod:`ctld.resv.rules`, committed to the
database, then mirrored in ``state.reservations`` (which the scheduler
reads); a reservation whose window has closed is deleted, as Slurm does.

Imports ctld.resv.rules, ctld.state, ctld.store and minislurm.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Collection, Container
from contextlib import AbstractContextManager

from sqlalchemy.orm import Session

from ctld.resv import rules as resvops
from ctld.resv.rules import Cluster, Request, ResvError
from ctld.state import ClusterState
from ctld.store import resvrepo
from minislurm import hostlist
from minislurm.errors import PermissionDenied
from minislurm.model import Resv, time_limit_end
from minislurm.requests import ReservationInfo, ResvChange
from minislurm.states import JobState

log = logging.getLogger(__name__)

Transaction = Callable[[], AbstractContextManager[Session]]
_HOLDING = (JobState.RUNNING, JobState.COMPLETING, JobState.SUSPENDED)


def request_of(change: ResvChange) -> Request:
    """The change's fields as given (absent ones None).

    Args:
        change: what scontrol asked.

    Returns:
        The request.

    Raises:
        ResvError: a malformed node list or flag.
    """

    def names(text: str | None) -> tuple[str, ...] | None:
        if text is None:
            return None
        return tuple(n for n in text.split(",") if n)

    nodes = None
    if change.nodes is not None:
        try:
            nodes = (
                ("ALL",) if change.nodes.upper() == "ALL" else tuple(hostlist.expand(change.nodes))
            )
        except ValueError:
            raise ResvError("Invalid node name specified") from None
    duration = None
    if change.duration is not None:
        duration = math.inf if change.duration < 0 else change.duration * 60.0
    accounts = names(change.accounts)
    return Request(
        name=change.name,
        start=float(change.start_time) if change.start_time is not None else None,
        end=float(change.end_time) if change.end_time is not None else None,
        duration=duration,
        nodes=nodes,
        node_count=change.node_count,
        users=names(change.users),
        accounts=None if accounts is None else tuple(a.lower() for a in accounts),
        flags=resvops.parse_flags(change.flags) if change.flags is not None else None,
        partition=change.partition,
    )


def info(resv: Resv, cpus: dict[str, int]) -> ReservationInfo:
    """A reservation as scontrol shows it.

    Args:
        resv: the reservation.
        cpus: CPUs by node (for CoreCnt).

    Returns:
        The record.
    """
    return ReservationInfo(
        name=resv.name,
        start_time=int(resv.start),
        end_time=0 if math.isinf(resv.end) else int(resv.end),
        nodes=tuple(resv.nodes),
        core_count=sum(cpus.get(n, 0) for n in resv.nodes),
        partition=resv.partition,
        flags=",".join(resv.flags),
        users=",".join(resv.users),
        accounts=",".join(resv.accounts),
    )


class Reservations:
    """Advance reservations of one controller."""

    def __init__(
        self,
        state: ClusterState,
        transaction: Transaction,
        operators: Container[int],
        default_partition: str,
    ) -> None:
        self.state = state
        self._transaction = transaction
        self._operators = operators  # followed live: AdminLevel changes with sacctmgr
        self._default_partition = default_partition
        self._seq = 0

    def load(self) -> None:
        """Read the stored reservations."""
        with self._transaction() as s:
            for resv in resvrepo.load_reservations(s):
                self.state.reservations[resv.name] = resv
        self._seq = len(self.state.reservations)

    def _cluster(self, accounts: Collection[str]) -> Cluster:
        busy: dict[str, float] = {}
        for job in self.state.active_jobs():
            if job.allocation is None or job.state not in _HOLDING:
                continue
            until = time_limit_end(job)
            for node in job.allocation.node_names:
                busy[node] = max(busy.get(node, -math.inf), until)
        parts = {p.name: p.nodes for p in self.state.partitions.values()}
        return Cluster(tuple(self.state.nodes), parts, self._default_partition, accounts, busy)

    def manage(self, msg: ResvChange, accounts: Collection[str], now: float) -> str:
        """scontrol create|update|delete reservation.

        Args:
            msg: the change.
            accounts: the accounts that exist.
            now: the time.

        Returns:
            The reservation's name.

        Raises:
            PermissionDenied: not an operator.
            ResvError: Slurm's reason; nothing changed.
        """
        if msg.requester_uid != 0 and msg.requester_uid not in self._operators:
            raise PermissionDenied("Invalid user id")
        existing = self.state.reservations
        if msg.verb == "delete":
            if msg.name not in existing:
                raise ResvError(resvops.INVALID)
            with self._transaction() as s:
                resvrepo.delete_reservations(s, [msg.name])
            del existing[msg.name]
            log.info("reservation %s deleted", msg.name)
            return msg.name
        req = request_of(msg)
        cluster = self._cluster(accounts)
        if msg.verb == "create":
            self._seq += 1
            resv = resvops.create(req, existing, cluster, now, self._seq)
        elif msg.verb == "update" and msg.name in existing:
            resv = resvops.update(existing[msg.name], req, existing, cluster, now)
        else:
            raise ResvError(resvops.INVALID)
        with self._transaction() as s:
            resvrepo.save_reservation(s, resv)
        existing[resv.name] = resv
        log.info("reservation %s %sd: %s", resv.name, msg.verb, ",".join(resv.nodes))
        return resv.name

    def expire(self, now: float) -> bool:
        """Delete the reservations whose window has closed.

        Args:
            now: the time.

        Returns:
            Whether any went.
        """
        ended = [r.name for r in self.state.reservations.values() if r.end <= now]
        if not ended:
            return False
        with self._transaction() as s:
            resvrepo.delete_reservations(s, ended)
        for name in ended:
            del self.state.reservations[name]
        return True

    def infos(self, names: Collection[str]) -> list[ReservationInfo]:
        """The reservations by name (all when ``names`` is empty).

        Args:
            names: the names wanted.

        Returns:
            Their records, by start time.
        """
        cpus = {n.name: n.cpus for n in self.state.nodes.values()}
        chosen = [r for r in self.state.reservations.values() if not names or r.name in names]
        return [info(r, cpus) for r in sorted(chosen, key=lambda r: (r.start, r.name))]
