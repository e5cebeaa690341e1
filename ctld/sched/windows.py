"""Partly used nodes over time: their profiles, and as a window finds them, in groups.

A node's profile is its free CPUs, memory and GPUs over time (steps:
:func:`node_steps` builds one, :func:`subtract` takes a job's share). A job
placed over ``[start, end)`` sees the least of each over that window
(:func:`window_free`). On a large cluster most partly used nodes look alike
in a window (the same few job shapes hold them), so a pass keeps, per
window, the groups of nodes with equal free resources as bitmasks
(:class:`WindowStates`): a job's placement then works per group, not per
node. The maps of a pass derive from one another by reservations; each one
that changes profiles gets an id, a map carries the ids of its lineage,
and a window's groups are brought up to date by recomputing only the nodes
changed since it was last read along that lineage. The nodes read are also
kept by shape (node class and profile) along the latest lineage, so that a
window works out the free resources of each shape once, not of each node.

Imports only ctld.sched.nodetable and minislurm.model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctld.sched.nodetable import INF, NodeTable, Step, bit_indices, gpu_tuple
from minislurm.model import NodeView

Profile = tuple[Step, ...]
State = tuple[int, int, int, int]  # node class, free CPUs, free memory, free GPU mask
Shape = tuple[int, Profile]  # node class, profile


def window_free(profile: Profile, start: float, end: float) -> tuple[int, int, int]:
    """The least free CPUs and memory, and the GPUs free throughout, over ``[start, end)``.

    Args:
        profile: a node's steps.
        start: the window's beginning.
        end: its end.

    Returns:
        ``(cpus, mem, gpu mask)``.
    """
    if len(profile) == 1:
        return profile[0][1:]
    cpus = mem = 1 << 62
    gpus = -1
    last = len(profile) - 1
    for k, (begin, c, m, g) in enumerate(profile):
        if begin >= end:
            break
        if k < last and profile[k + 1][0] <= start:
            continue
        cpus, mem, gpus = min(cpus, c), min(mem, m), gpus & g
    return cpus, mem, gpus


def subtract(
    profile: Profile, start: float, end: float, take: tuple[int, int, int]
) -> tuple[Profile, list[tuple[float, float]]]:
    """A profile with ``take`` held over ``[start, end)``, and the spans left without a free CPU.

    Args:
        profile: a node's steps.
        start: from when.
        end: until when.
        take: (CPUs, memory, GPU mask) held.

    Returns:
        The new profile, and the spans where no CPU is left free.
    """
    cpus, mem, gpus = take
    out: list[Step] = []
    empty: list[tuple[float, float]] = []
    last = len(profile) - 1
    for k, step in enumerate(profile):
        begin, c, m, g = step
        after = profile[k + 1][0] if k < last else INF
        if after <= start or begin >= end:
            out.append(step)
            continue
        if begin < start:
            out.append(step)
        lo = max(begin, start)
        out.append((lo, c - cpus, m - mem, g & ~gpus))
        if c - cpus <= 0:
            empty.append((lo, min(after, end)))
        if after > end:
            out.append((end, c, m, g))
    return tuple(out), empty


def node_steps(state: Step, cap: Step, releases: Sequence[Step]) -> Profile:
    """A node's free resources from now on, as its running jobs end (never above capacity).

    Args:
        state: (-inf, free CPUs, memory, GPU mask) now.
        cap: the node's capacity, alike.
        releases: (when, CPUs, memory, GPU mask) each running job frees.

    Returns:
        The profile.
    """
    if not releases:
        return (state,)
    steps = [state]
    _, c, m, g = state
    for when, cpus, mem, gpus in sorted(releases):
        c, m, g = min(c + cpus, cap[1]), min(m + mem, cap[2]), (g | gpus) & cap[3]
        if steps[-1][0] == when:
            steps[-1] = (when, c, m, g)
        else:
            steps.append((when, c, m, g))
    return tuple(steps)


@dataclass
class _Window:
    """The groups of one window, as of the map whose lineage it names."""

    lineage: tuple[int, ...]
    covered: int = 0  # the nodes whose state is known
    states: dict[State, int] = field(default_factory=dict)  # state -> its nodes
    # state by node class and profile: partly used nodes share a few profiles
    known: dict[Shape, State] = field(default_factory=dict)


@dataclass
class _Shapes:
    """The nodes read so far by node class and profile, as of the map whose lineage it names."""

    lineage: tuple[int, ...] = ()
    seen: int = 0  # the nodes grouped
    members: dict[Shape, int] = field(default_factory=dict)  # shape -> its nodes, none empty
    shape_of: dict[int, Shape] = field(default_factory=dict)  # node -> its shape


@dataclass
class WindowStates:
    """The groups of every window a pass has read, shared by the maps derived from one map."""

    table: NodeTable
    changes: dict[int, int] = field(default_factory=dict)  # reservation id -> nodes it changed
    _windows: dict[tuple[float, float], _Window] = field(default_factory=dict)
    _views: dict[State, NodeView] = field(default_factory=dict)
    _shapes: _Shapes = field(default_factory=_Shapes)

    def groups(
        self,
        profiles: Sequence[Profile],
        lineage: tuple[int, ...],
        start: float,
        end: float,
        nodes: int,
    ) -> list[tuple[NodeView, int]]:
        """The nodes of ``nodes`` by their free resources over ``[start, end)``.

        Args:
            profiles: the map's profiles (exact over the window for ``nodes``).
            lineage: the ids of the reservations the map was derived by.
            start: the window's beginning.
            end: its end.
            nodes: a bitmask of nodes with a CPU free throughout.

        Returns:
            (free resources as a nameless NodeView, bitmask of its nodes), non-empty.
        """
        win = self._windows.get((start, end))
        if win is None:
            win = self._windows[(start, end)] = _Window(lineage)
        elif win.lineage is not lineage:
            self._catch_up(win, lineage)
        missing = nodes & ~win.covered
        if missing:
            states, known, capacity = win.states, win.known, self.table.capacity
            shapes = self._grouped(profiles, lineage, missing)
            if missing.bit_count() < len(shapes.members):  # a few nodes: one by one
                shape_of = shapes.shape_of
                pieces = [(shape_of[i], 1 << i) for i in bit_indices(missing)]
            else:
                pieces = list(shapes.members.items())
            for shape, members in pieces:
                part = members & missing
                if part:
                    key = known.get(shape)
                    if key is None:
                        cpus, mem, gpus = window_free(shape[1], start, end)
                        gpus &= capacity[(part & -part).bit_length() - 1][3]
                        key = known[shape] = (shape[0], cpus, mem, gpus)
                    states[key] = states.get(key, 0) | part
            win.covered |= missing
        return [(self._view(key), m & nodes) for key, m in win.states.items() if m & nodes]

    def _grouped(
        self, profiles: Sequence[Profile], lineage: tuple[int, ...], nodes: int
    ) -> _Shapes:
        """The nodes read so far and those of ``nodes`` by shape, as of the map of ``lineage``."""
        shapes = self._shapes
        if shapes.lineage is not lineage:
            stale = self._stale(shapes.lineage, lineage)
            if stale == -1:
                shapes = self._shapes = _Shapes()
            stale &= shapes.seen
            members, shape_of = shapes.members, shapes.shape_of
            for i in bit_indices(stale):
                shape = shape_of.pop(i)
                left = members[shape] & ~(1 << i)
                if left:
                    members[shape] = left
                else:
                    del members[shape]
            shapes.seen &= ~stale
            shapes.lineage = lineage
        new = nodes & ~shapes.seen
        if new:
            members, shape_of, classes = shapes.members, shapes.shape_of, self.table.classes
            for i in bit_indices(new):
                shape = shape_of[i] = (classes[i], profiles[i])
                members[shape] = members.get(shape, 0) | 1 << i
            shapes.seen |= new
        return shapes

    def _stale(self, known: tuple[int, ...], lineage: tuple[int, ...]) -> int:
        """The nodes changed from the map of lineage ``known`` to that of ``lineage`` (-1: all)."""
        count = len(known)
        if count <= len(lineage) and (not count or lineage[count - 1] == known[-1]):
            stale = 0
            for uid in lineage[count:]:
                stale |= self.changes[uid]
            return stale
        return -1  # another branch: start over

    def _catch_up(self, win: _Window, lineage: tuple[int, ...]) -> None:
        """Forget the nodes changed between the window's map and this one."""
        stale = self._stale(win.lineage, lineage)
        win.lineage = lineage
        if stale & win.covered:
            win.covered &= ~stale
            win.states = {k: m & ~stale for k, m in win.states.items() if m & ~stale}

    def _view(self, key: State) -> NodeView:
        view = self._views.get(key)
        if view is None:
            k, cpus, mem, gpus = key
            n = self.table.class_views[k]
            view = NodeView(
                "", n.cpus, n.mem, n.gpus, cpus, mem, gpu_tuple(gpus), True, n.weight, n.gpu_links
            )
            self._views[key] = view
        return view
