"""The resource-time map of one pass (Slurm's ``node_space_map_t``), immutable.

Time is cut into slots: the first begins now, the others where a running
job ends or a reservation begins or ends, rounded to ``bf_resolution`` (a
start rounds down, an end up, as Slurm's ``_set_slot_time``). Each slot
holds two bitmasks over the snapshot's nodes (bit ``i`` is
``snapshot.nodes[i]``): ``idle`` (usable, nothing allocated) and ``avail``
(usable, at least one CPU free). Aggregate tests of a window of slots are
then a few integer ANDs and popcounts, and a node that is only ever idle or
full (whole-node jobs, the trace simulator's one-CPU nodes) costs nothing
more. Nodes that are partly used also have a profile of their free CPUs,
memory and GPU indices over time, read only where they are ``avail`` but
not ``idle``, and then per group of nodes alike in what a window leaves
them (:mod:`ctld.sched.windows`).

:meth:`Timeline.reserve` returns a new map with an allocation taken over
``[start, end)``; the map it was called on is unchanged, so a caller may
keep it (Flux's ``_shadow_time`` works on a copy for the same reason).
A running job whose end has passed (still completing) is taken to free its
resources at the next tick; one without a time limit never does.

Imports minislurm.model, ctld.sched.nodetable, ctld.sched.select and ctld.sched.windows.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from ctld.sched.nodetable import (
    INF,
    NodeTable,
    Step,
    bit_indices,
    gpu_tuple_mask,
    lowest_bits,
    renewed,
    table_of,
)
from ctld.sched.select import select_alike, select_groups, select_nodes
from ctld.sched.windows import Profile, WindowStates, node_steps, subtract
from minislurm.model import Allocation, NodeView, ResourceRequest, RunningJob

_RESERVATIONS = itertools.count(1)  # ids of the reservations that change profiles
# Nodes alike in what they have free: (free resources, nameless; the bitmask of those nodes).
Groups = list[tuple[NodeView, int]]


@dataclass(frozen=True)
class Timeline:
    """Free resources over time: slots with node bitmasks, and profiles of partly used nodes."""

    table: NodeTable
    resolution: int  # seconds
    begins: tuple[float, ...]  # slot i is [begins[i], begins[i + 1]); the last is unbounded
    idle: tuple[int, ...]
    avail: tuple[int, ...]
    profiles: tuple[Profile, ...]  # per node; exact wherever the node is avail
    # Partly used nodes as windows find them: the jobs of one pass try the same few
    # windows. Maps derived from one another share it.
    windows: WindowStates = field(compare=False, repr=False)
    lineage: tuple[int, ...] = field(default=(), compare=False, repr=False)

    @property
    def now(self) -> float:
        """When the map begins."""
        return self.begins[0]

    def end_of(self, start: float, duration: float) -> float:
        """When a job started at ``start`` releases its resources in the map (rounded up).

        Args:
            start: a slot's beginning.
            duration: the job's time limit in seconds (inf: none).

        Returns:
            The end, on the resolution's grid.
        """
        return slot_end(start, duration, self.resolution)

    def free_until(self, end: float) -> int:
        """The nodes with a CPU free from now until ``end``.

        Args:
            end: a time after now.

        Returns:
            A bitmask.
        """
        return self._free_from_now[max(self.slot_at(end) - 1, 0)]

    @functools.cached_property
    def _free_from_now(self) -> list[int]:
        """The nodes with a CPU free in every slot from the first to each."""
        return list(itertools.accumulate(self.avail, operator.and_))

    def slot_at(self, when: float) -> int:
        """The first slot that begins at or after ``when``.

        Args:
            when: a time.

        Returns:
            A slot index (``len(begins)`` when none).
        """
        return bisect_left(self.begins, when)

    def views(
        self, start: float, end: float, idle: int, partial: int, limit: int
    ) -> list[NodeView]:
        """The nodes as a job placed over ``[start, end)`` would find them.

        In node order for a start now. A later start lists first the nodes
        busy now (in node order, then the rest): the job's reservation then
        goes to the nodes that free up for it, and the nodes idle now stay
        for jobs that can start in the meantime.

        Args:
            start: the window's beginning.
            end: its end.
            idle: the nodes idle throughout the window.
            partial: the nodes with a CPU free throughout but not idle throughout.
            limit: at most this many idle nodes of each class (-1: all); the job
                cannot use more than its maximum node count of alike nodes.

        Returns:
            NodeViews whose free resources are the least over the window.
        """
        first, names = self._first(start), self.table.names
        found = [
            ((not first >> i & 1, i), view, names[i])
            for view, members in itertools.chain(*self.groups(start, end, idle, partial, limit))
            for i in bit_indices(members)
        ]
        found.sort(key=lambda f: f[0])
        return [replace(view, name=name) for _, view, name in found]

    def place(
        self, req: ResourceRequest, start: float, end: float, idle: int, partial: int, limit: int
    ) -> Allocation | None:
        """Where ``select_nodes`` puts the job among the nodes of :meth:`views`, or None.

        Without required nodes the choice is made per group of nodes alike
        in what they have free (:func:`~ctld.sched.select.select_groups`);
        when they are all idle and alike, it is a cached pattern
        (:func:`~ctld.sched.select.select_alike`) named after them.

        Args:
            req: the job's request.
            start, end, idle, partial, limit: as for :meth:`views`.

        Returns:
            The allocation, or None when the job does not fit there.
        """
        if limit < 0:
            return select_nodes(req, self.views(start, end, idle, partial, limit))
        alike, partly = self.groups(start, end, idle, partial, limit)
        return self.place_groups(req, start, alike, partly)

    def place_groups(
        self, req: ResourceRequest, start: float, alike: Groups, partly: Groups
    ) -> Allocation | None:
        """:meth:`place` over nodes given as :meth:`groups` (a caller may narrow them).

        Args:
            req: the job's request, without required nodes.
            start: the window's beginning.
            alike: idle nodes by class.
            partly: partly used nodes by what the window leaves them.

        Returns:
            The allocation, or None when the job does not fit there.
        """
        if len(alike) == 1 and not partly:
            view, members = alike[0]
            pattern = select_alike(req, view, members.bit_count())
            if pattern is None:
                return None
            return self.table.named(pattern, members, members & self._first(start))
        return select_groups(req, alike + partly, self._first(start), self.table.names)

    def _first(self, start: float) -> int:
        """The nodes offered first to a job placed at ``start``: busy now, for a later start."""
        return ~self.idle[0] if start > self.begins[0] else 0

    def groups(
        self, start: float, end: float, idle: int, partial: int, limit: int
    ) -> tuple[Groups, Groups]:
        """The nodes of :meth:`views` as groups: (free resources, nameless; bitmask).

        Args:
            start, end, idle, partial, limit: as for :meth:`views`.

        Returns:
            The idle nodes by class, and the partly used ones by what the
            window leaves them.
        """
        first = self._first(start)
        groups = []
        for members, view in zip(self.table.class_masks, self.table.class_views, strict=True):
            pool = idle & members
            if pool and limit >= 0:
                ahead = lowest_bits(pool & first, limit)
                pool = ahead | lowest_bits(pool & ~first, limit - ahead.bit_count())
            if pool:
                groups.append((view, pool))
        if not partial:
            return groups, []
        return groups, self.windows.groups(self.profiles, self.lineage, start, end, partial)

    def reserve(self, alloc: Allocation, start: float, end: float) -> Timeline:
        """The map with ``alloc`` taken from ``start`` until ``end``.

        Args:
            alloc: what the job holds (its nodes must have it free throughout).
            start: a slot's beginning (now for a job that starts).
            end: from :meth:`end_of`.

        Returns:
            A new map; this one is unchanged.
        """
        begins, idle, avail = list(self.begins), list(self.idle), list(self.avail)
        first = _boundary(begins, idle, avail, start)
        stop = len(begins) if end == INF else _boundary(begins, idle, avail, end)
        idle_all = -1
        for k in range(first, stop):
            idle_all &= idle[k]
        taken, all_cpus, _ = self.table.indexed(alloc)
        whole = all_cpus & idle_all  # full throughout: masks alone say so
        changed = taken & ~whole  # the others' profiles change
        cleared: dict[int, int] = {}
        profiles: list[Profile] | None = None
        for i, cpus, mem, gpus in self.table.entries(alloc) if changed else ():
            if not changed >> i & 1:
                continue
            if profiles is None:
                profiles = list(self.profiles)
            profiles[i], empty = subtract(profiles[i], start, end, (cpus, mem, gpus))
            for t0, t1 in empty:
                for k in range(bisect_left(begins, t0), bisect_left(begins, t1)):
                    cleared[k] = cleared.get(k, 0) | 1 << i
        for k in range(first, stop):
            idle[k] &= ~taken
            avail[k] &= ~(whole | cleared.get(k, 0))
        lineage = self.lineage
        if changed:
            uid = next(_RESERVATIONS)
            self.windows.changes[uid] = changed
            lineage = (*lineage, uid)
        return Timeline(
            self.table,
            self.resolution,
            tuple(begins),
            tuple(idle),
            tuple(avail),
            self.profiles if profiles is None else tuple(profiles),
            self.windows,
            lineage,
        )


def slot_end(start: float, duration: float, resolution: int) -> float:
    """When a job started at ``start`` ends on the map's grid: its limit's end, rounded up.

    Args:
        start: the start.
        duration: the time limit, seconds (inf: none).
        resolution: bf_resolution, seconds.

    Returns:
        The end (inf without a limit).
    """
    if duration == INF:
        return INF
    return float(math.ceil((start + duration) / resolution) * resolution)


def _boundary(begins: list[float], idle: list[int], avail: list[int], when: float) -> int:
    """The index of the slot beginning at ``when``, splitting the slot around it if needed."""
    k = bisect_left(begins, when)
    if k < len(begins) and begins[k] == when:
        return k
    begins.insert(k, when)
    idle.insert(k, idle[k - 1])
    avail.insert(k, avail[k - 1])
    return k


def build_timeline(
    nodes: Sequence[NodeView],
    running: Iterable[RunningJob],
    now: float,
    resolution: int,
    horizon: float,
) -> Timeline:
    """The map of a snapshot: the nodes as they are now, freed as the running jobs end.

    Args:
        nodes: the snapshot's nodes (free resources now).
        running: the jobs holding resources, with their expected ends.
        now: the time of the pass.
        resolution: bf_resolution, seconds.
        horizon: ends after this are not tracked (the resources stay taken).

    Returns:
        The map.
    """
    table = table_of(nodes)
    capacity = table.capacity
    usable = table.usable
    kinds = "".join(_kinds(nodes, capacity))[::-1]  # the last node's letter first
    idle_now = usable & _mask_of(kinds, "i")
    avail_now = usable & (idle_now | _mask_of(kinds, "a"))
    # A node without a free CPU or any memory taken, that one job holds all of (its
    # every CPU and GPU) and frees within the horizon, is idle from then on: masks
    # alone say so. The others are looked at one by one.
    holds = 0  # nodes so held
    seen = shared = 0  # nodes of jobs ending within the horizon, of more than one
    ending = []
    kept: dict[float, int] = {}  # idle nodes a job keeps others off, by when it frees them
    for job in running:
        if job.kept:
            mask = idle_now & table.mask(job.kept)
            when = _release_time(job.end_time, now, resolution)
            kept[when] = kept.get(when, 0) | mask
    for mask in kept.values():
        idle_now &= ~mask
        avail_now &= ~mask
    for job in running if horizon > now else ():  # a map of now only tracks no end
        when = _release_time(job.end_time, now, resolution)
        if when <= horizon:
            members, _, whole = table.indexed(job.allocation)
            shared |= seen & members
            seen |= members
            holds |= whole
            ending.append((when, members, whole, job.allocation))
    full = usable & _mask_of(kinds, "f")
    alone = holds & full & ~shared
    gains: dict[float, list[int]] = {}  # time -> [idle bits, avail bits] gained then
    releases: dict[int, list[Step]] = {}
    slow = usable & ~idle_now & ~alone
    released = 0  # the slow nodes that a job ending within the horizon frees
    for when, members, whole, alloc in ending:
        if whole & alone:
            became = gains.setdefault(when, [0, 0])
            became[0] |= whole & alone
        if members & slow:
            released |= members & slow
            for i, c, m, g in table.entries(alloc):
                if slow >> i & 1:
                    releases.setdefault(i, []).append((when, c, m, g))
    profiles: list[Profile] = list(table.idle_profiles)
    # Partly used nodes that nothing frees within the horizon stay as they are now.
    for i in bit_indices(slow & avail_now & ~released):
        n = nodes[i]
        free_gpus = gpu_tuple_mask(n.free_gpus) if n.free_gpus else 0
        profiles[i] = ((-INF, n.free_cpus, n.free_mem, free_gpus),)
    for i in bit_indices(slow & released):
        n, cap = nodes[i], capacity[i]
        cpus, mem = n.free_cpus, n.free_mem
        gpus = gpu_tuple_mask(n.free_gpus) if n.free_gpus else 0
        freed = releases.get(i, ())
        if len(freed) == 1 and cpus <= 0:
            when, c, m, g = freed[0]
            if cpus + c >= cap[1] and mem + m >= cap[2] and (gpus | g) & cap[3] == cap[3]:
                became = gains.setdefault(when, [0, 0])  # one job holds all of it
                became[0] |= 1 << i
                continue
        steps = node_steps((-INF, cpus, mem, gpus), cap, freed)
        for k in range(1, len(steps)):
            when, c, m, g = steps[k]
            became = gains.setdefault(when, [0, 0])
            if c > 0 and steps[k - 1][1] <= 0:
                became[1] |= 1 << i
            if (c, m, g) == cap[1:]:
                became[0] |= 1 << i
        if any(0 < c and (c, m, g) != cap[1:] for _, c, m, g in steps):
            profiles[i] = steps  # partly used at some time: keep it exact
    for when, mask in kept.items():
        if when <= horizon and horizon > now:
            became = gains.setdefault(when, [0, 0])
            became[0] |= mask
    begins, idle, avail = [now], [idle_now], [avail_now]
    for when in sorted(gains):
        gained_idle, gained_avail = gains[when]
        begins.append(when)
        idle.append(idle[-1] | gained_idle)
        avail.append(avail[-1] | gained_avail | gained_idle)
    return Timeline(
        table,
        resolution,
        tuple(begins),
        tuple(idle),
        tuple(avail),
        tuple(profiles),
        WindowStates(table),
    )


_LAST: list[tuple[Sequence[NodeView], tuple[Step, ...], list[str]]] = []  # the last kinds


def _kinds(nodes: Sequence[NodeView], capacity: tuple[Step, ...]) -> list[str]:
    """Each node in a letter (:func:`_kind`); only nodes that are new objects since the last call
    are looked at (a simulation's passes change a few nodes each)."""
    if _LAST and len(_LAST[0][0]) == len(nodes) and _LAST[0][1] is capacity:
        last, _, kinds = _LAST[0]
        kinds = kinds.copy()
        for i in renewed(last, nodes):
            kinds[i] = _kind(nodes[i], capacity[i])
    else:
        kinds = list(map(_kind, nodes, capacity))
    _LAST[:] = [(nodes, capacity, kinds)]
    return kinds


def _kind(node: NodeView, cap: Step) -> str:
    """Idle ("i"), avail but not idle ("a"), full ("f": no CPU free, no memory taken) or other."""
    if node.free_cpus > 0:
        free = (node.free_cpus, node.free_mem, gpu_tuple_mask(node.free_gpus))
        return "i" if free == cap[1:] else "a"
    return "f" if node.free_cpus == 0 and node.free_mem == node.mem else "o"


_DIGITS = {kind: str.maketrans({k: "1" if k == kind else "0" for k in "iafo"}) for kind in "iafo"}


def _mask_of(kinds: str, kind: str) -> int:
    """The bitmask of the nodes of one kind, from their letters (the last node's first)."""
    return int(kinds.translate(_DIGITS[kind]), 2) if kinds else 0


def _release_time(end: float, now: float, resolution: int) -> float:
    """When a running job's resources come back in the map: its end rounded up, after now."""
    if end == INF:
        return INF
    when = math.ceil(end / resolution) * resolution
    if when <= now:
        when = (math.floor(now / resolution) + 1) * resolution
    return float(when)
