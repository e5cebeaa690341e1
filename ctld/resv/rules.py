"""Advance reservations: nodes set aside for some users or accounts over a window of time.

What ``scontrol create|update|delete reservation`` decides, and what a
reservation means to a pending job, as pure functions:

* a job outside a reservation may not start on its nodes if the job could
  still be running when the window opens (its time limit reaches it; an
  unlimited job always does) or while the window is open;
* a job inside a reservation (``--reservation``) runs only on its nodes,
  only once the window is open, and like any job stays out of the other
  reservations' windows.

So a reservation is never violated by a start, whatever the planner
decides: :func:`job_limits` turns reservations into the nodes a job must
avoid in this pass, or into a reason to wait. Flags: ``MAINT`` (reported as
"Reserved for maintenance"), ``IGNORE_JOBS`` (running jobs do not stop the
creation), ``OVERLAP`` (may share nodes with other reservations);
``SPEC_NODES`` is set when the nodes were named.

Imports only minislurm.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

from minislurm.errors import InvalidRequest
from minislurm.model import Resv

FLAG_ORDER = ("MAINT", "OVERLAP", "IGNORE_JOBS", "SPEC_NODES")
REASON_WAIT = "Reservation"
REASON_OTHER = "ReqNodeNotAvail, May be reserved for other job"
REASON_MAINT = "ReqNodeNotAvail, Reserved for maintenance"
REASON_DELETED = "ReservationDeleted"
INVALID = "Requested reservation is invalid"
ACCESS_DENIED = "Access denied to requested reservation"


class ResvError(InvalidRequest):
    """A refused reservation request: the message is Slurm's."""


@dataclass(frozen=True)
class Request:
    """What create or update asked for; None: not given (update keeps the value)."""

    name: str
    start: float | None = None
    end: float | None = None
    duration: float | None = None  # seconds; inf: UNLIMITED
    nodes: tuple[str, ...] | None = None
    node_count: int | None = None
    users: tuple[str, ...] | None = None
    accounts: tuple[str, ...] | None = None
    flags: tuple[str, ...] | None = None
    partition: str | None = None


@dataclass(frozen=True)
class Cluster:
    """What creation checks against: nodes, partitions, users, accounts and busy nodes."""

    nodes: tuple[str, ...]
    partitions: dict[str, tuple[str, ...]]
    default_partition: str
    accounts: Collection[str]
    busy_until: dict[str, float]  # node -> when its running jobs may end at the latest


def parse_flags(text: str) -> tuple[str, ...]:
    """Flags as given ("maint,ignore_jobs") in Slurm's order.

    Args:
        text: comma-separated flags.

    Returns:
        The flags.

    Raises:
        ResvError: an unknown flag.
    """
    given = {f.strip().upper() for f in text.split(",") if f.strip()}
    unknown = given - set(FLAG_ORDER)
    if unknown:
        raise ResvError(f"Error parsing flags {text}.  No reservation created.")
    return tuple(f for f in FLAG_ORDER if f in given)


def create(req: Request, existing: dict[str, Resv], cluster: Cluster, now: float, seq: int) -> Resv:
    """A new reservation, checked as Slurm checks it.

    Args:
        req: the request.
        existing: the reservations by name.
        cluster: nodes, partitions, accounts and busy nodes.
        now: the time.
        seq: a number for a made-up name (``<user>_<seq>``).

    Returns:
        The reservation.

    Raises:
        ResvError: Slurm's reason.
    """
    users, accounts = req.users or (), req.accounts or ()
    if not users and not accounts:
        raise ResvError("Either Users/Groups and/or Accounts must be specified.")
    if req.nodes is None and not req.node_count:
        raise ResvError(
            "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified."
        )
    if req.end is None and req.duration is None:
        raise ResvError("An end time or duration must be given.")
    name = req.name or f"{(users or accounts)[0]}_{seq}"
    if name in existing:
        raise ResvError("Duplicate reservation name")
    start = now if req.start is None else max(req.start, now)
    end = req.end if req.end is not None else start + (req.duration or 0.0)
    flags = req.flags or ()
    resv = Resv(name, start, end, (), users, accounts, flags, "")
    if req.nodes is not None:
        resv = replace(
            resv, nodes=_named_nodes(req.nodes, cluster), flags=_with(flags, "SPEC_NODES")
        )
    else:
        partition = req.partition or cluster.default_partition
        if partition not in cluster.partitions:
            raise ResvError("Invalid partition name specified")
        resv = replace(resv, partition=partition)
        resv = replace(resv, nodes=_pick(resv, req.node_count or 0, existing, cluster))
    check(resv, existing, cluster)
    return resv


def update(
    resv: Resv, req: Request, existing: dict[str, Resv], cluster: Cluster, now: float
) -> Resv:
    """A reservation changed by ``scontrol update ReservationName=...``.

    Args:
        resv: the reservation.
        req: what to change.
        existing: every reservation by name.
        cluster: as for :func:`create`.
        now: the time.

    Returns:
        The changed reservation.

    Raises:
        ResvError: Slurm's reason; nothing changed.
    """
    start = resv.start if req.start is None else max(req.start, now)
    length = resv.end - resv.start
    end = (
        req.end
        if req.end is not None
        else start + (req.duration if req.duration is not None else length)
    )
    changed = replace(
        resv,
        start=start,
        end=end,
        users=resv.users if req.users is None else req.users,
        accounts=resv.accounts if req.accounts is None else req.accounts,
        flags=resv.flags if req.flags is None else req.flags,
    )
    if req.nodes is not None:
        changed = replace(changed, nodes=_named_nodes(req.nodes, cluster))
    if not changed.users and not changed.accounts:
        raise ResvError("Either Users/Groups and/or Accounts must be specified.")
    others = {n: r for n, r in existing.items() if n != resv.name}
    check(changed, others, cluster)
    return changed


def _with(flags: tuple[str, ...], flag: str) -> tuple[str, ...]:
    return tuple(f for f in FLAG_ORDER if f in flags or f == flag)


def _named_nodes(names: tuple[str, ...], cluster: Cluster) -> tuple[str, ...]:
    if names == ("ALL",):
        return cluster.nodes
    if not names or any(n not in cluster.nodes for n in names):
        raise ResvError("Invalid node name specified")
    return tuple(sorted(set(names), key=cluster.nodes.index))


def _pick(resv: Resv, count: int, existing: dict[str, Resv], cluster: Cluster) -> tuple[str, ...]:
    """The first ``count`` nodes of the partition that are free over the window."""
    free = [
        n
        for n in cluster.partitions[resv.partition]
        if not _busy(n, resv, cluster) and not _taken(n, resv, existing)
    ]
    if len(free) < count:
        raise ResvError("Requested nodes are busy")
    return tuple(free[:count])


def _busy(node: str, resv: Resv, cluster: Cluster) -> bool:
    return "IGNORE_JOBS" not in resv.flags and cluster.busy_until.get(node, -math.inf) > resv.start


def _taken(node: str, resv: Resv, existing: dict[str, Resv]) -> bool:
    if "OVERLAP" in resv.flags:
        return False
    return any(
        node in other.nodes and other.overlaps(resv.start, resv.end) and "MAINT" not in other.flags
        for other in existing.values()
    )


def check(resv: Resv, existing: dict[str, Resv], cluster: Cluster) -> None:
    """Refuse a reservation that Slurm would refuse.

    Args:
        resv: the new or changed reservation.
        existing: the other reservations.
        cluster: accounts and busy nodes.

    Raises:
        ResvError: bad times or accounts, nodes in another reservation's window, busy nodes.
    """
    if resv.end <= resv.start:
        raise ResvError("Invalid time specification")
    if any(a not in cluster.accounts for a in resv.accounts):
        raise ResvError("Invalid account or account/partition combination specified")
    if any(_taken(n, resv, existing) for n in resv.nodes):
        raise ResvError("Requested reservation overlaps with another reservation")
    if any(_busy(n, resv, cluster) for n in resv.nodes):
        raise ResvError("Requested nodes are busy")


@dataclass(frozen=True)
class JobLimits:
    """What reservations mean for one pending job in one pass."""

    avoid: frozenset[str]  # nodes it may not start on now
    blocked: str  # why it may not start at all ("": it may)
    crowded: str  # the reason to show when ``avoid`` leaves it too few nodes


def job_limits(
    reservation: str,
    duration: float,
    now: float,
    resvs: Iterable[Resv],
    nodes: Collection[str],
) -> JobLimits:
    """What reservations mean for a pending job in this pass.

    Args:
        reservation: the job's reservation ("" for none).
        duration: its time limit in seconds (inf: unlimited).
        now: the time of the pass.
        resvs: every reservation.
        nodes: every node of the cluster.

    Returns:
        The nodes to avoid: those of every other reservation whose window
        meets ``[now, now + duration)`` and, in a reservation, every node
        outside it. Blocked with ``Reservation`` before its own window opens
        and ``ReservationDeleted`` when it is gone.
    """
    avoid: set[str] = set()
    maint = False
    own = None
    for resv in resvs:
        if resv.name == reservation:
            own = resv
            continue
        if resv.overlaps(now, now + duration):
            avoid.update(resv.nodes)
            maint = maint or "MAINT" in resv.flags
    crowded = REASON_MAINT if maint else REASON_OTHER
    if reservation:
        if own is None:
            return JobLimits(frozenset(nodes), REASON_DELETED, crowded)
        if not own.active(now):
            return JobLimits(frozenset(nodes), REASON_WAIT, crowded)
        avoid.update(n for n in nodes if n not in own.nodes)
    return JobLimits(frozenset(avoid), "", crowded)


def check_job(reservation: str, user: str, account: str, resvs: dict[str, Resv]) -> None:
    """Refuse a submission to a reservation that does not exist or does not admit the job.

    Args:
        reservation: ``--reservation`` ("" for none).
        user: the job's user.
        account: its account.
        resvs: the reservations by name.

    Raises:
        ResvError: Slurm's message.
    """
    if not reservation:
        return
    resv = resvs.get(reservation)
    if resv is None:
        raise ResvError(INVALID)
    if not resv.admits(user, account):
        raise ResvError(ACCESS_DENIED)
