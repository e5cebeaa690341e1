"""The controller's in-memory view of the cluster, mirroring the database.

The controller is the database's only writer, so after each commit it puts
the same records here; queries and scheduling read this view instead of
the database. Records are frozen dataclasses, replaced whole. A node's
change an operator acts on is logged as it is put (ctld.events).

Imports ctld.events, ctld.sched.knobs and minislurm.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ctld import events
from ctld.sched.knobs import DEFAULT_MAX_SWITCH_WAIT
from minislurm.config import PartitionConfig
from minislurm.model import Allocation, Job, Node, Resv, Step
from minislurm.states import ACTIVE_JOB_STATES, TERMINAL_JOB_STATES, JobState
from minislurm.stepids import MAX_NORMAL_STEP
from minislurm.topology import Topology


@dataclass(frozen=True)
class NodeUsage:
    """What jobs hold on one node."""

    cpus: int = 0
    mem: int = 0
    gpus: frozenset[int] = frozenset()


class _Holdings:
    """What the active jobs' allocations hold, node by node, counted as jobs change.

    Each node counts the parts of allocations on it, their CPUs and memory,
    and each GPU by how many parts name it; its :class:`NodeUsage` is made
    again only after one of them changed, so a scheduling pass does not add
    up every running job again.
    """

    def __init__(self) -> None:
        self._parts: Counter[str] = Counter()
        self._cpus: Counter[str] = Counter()
        self._mem: Counter[str] = Counter()
        self._gpus: dict[str, Counter[int]] = {}
        self._usage: dict[str, NodeUsage] = {}
        self._changed: set[str] = set()

    def change(self, alloc: Allocation, sign: int) -> None:
        """Count an allocation in (sign 1) or out (sign -1)."""
        for part in alloc.nodes:
            node = part.node
            self._parts[node] += sign
            self._cpus[node] += sign * part.cpus
            self._mem[node] += sign * part.mem
            gpus = self._gpus.get(node)
            if gpus is None:
                gpus = self._gpus[node] = Counter()
            for gpu in part.gpus:
                gpus[gpu] += sign
            self._changed.add(node)

    def usage(self) -> dict[str, NodeUsage]:
        """The usage of every node that some part is on."""
        for node in self._changed:
            if self._parts[node] > 0:
                gpus = frozenset(g for g, count in self._gpus[node].items() if count > 0)
                self._usage[node] = NodeUsage(self._cpus[node], self._mem[node], gpus)
            else:
                self._usage.pop(node, None)
        self._changed.clear()
        return dict(self._usage)


class ClusterState:
    """Jobs, nodes and partitions, with indexes for the scheduler's questions."""

    def __init__(
        self,
        nodes: Iterable[Node],
        partitions: Iterable[PartitionConfig],
        memory_consumable: bool = True,
        gres_types: tuple[str, ...] = ("gpu",),
        max_switch_wait: int = DEFAULT_MAX_SWITCH_WAIT,
        topology: Topology | None = None,
    ) -> None:
        self.jobs: dict[int, Job] = {}
        # Jobs hold memory (SelectTypeParameters CR_*_Memory); otherwise a job's memory only
        # rules out nodes with less RealMemory, and allocations hold none.
        self.memory_consumable = memory_consumable
        self.gres_types = gres_types  # GresTypes: the generic resources a job may ask for
        # SchedulerParameters=max_switch_wait: the longest a job waits for its --switches, s
        self.max_switch_wait = max_switch_wait
        self.topology = topology  # topology.conf: blocks keep --exclusive=topo jobs' neighbours off
        self.nodes: dict[str, Node] = {n.name: n for n in nodes}
        self.partitions: dict[str, PartitionConfig] = {p.name: p for p in partitions}
        self.reservations: dict[str, Resv] = {}  # advance reservations by name
        self._queued: set[int] = set()  # pending and not held: what the scheduler considers
        self._active: set[int] = set()
        self._settling: set[int] = set()  # pending with a dependency or a deadline
        self._holdings = _Holdings()  # what the active jobs' allocations hold
        self._unallocated: set[int] = set()  # active jobs without an allocation (a bug)
        # Each node's record or usage changes are counted: node -> the count at its last
        # change, the least recently changed first, so a pass finds what changed since its last.
        self.node_changes = 0
        self._node_changed: dict[str, int] = {}
        self.last_job_id = 0
        self.arrays: dict[int, set[int]] = {}  # array job id -> ids of its records
        self.steps: dict[int, dict[int, Step]] = {}  # job id -> step id -> step

    def put_job(self, job: Job) -> None:
        """Record a job as it now is (after its change was committed).

        Args:
            job: the new record.
        """
        old = self.jobs.get(job.job_id)
        if old is not None and job.job_id in self._active:
            self._hold(old, -1)
        self.jobs[job.job_id] = job
        self.last_job_id = max(self.last_job_id, job.job_id)
        if job.array_job_id:
            self.arrays.setdefault(job.array_job_id, set()).add(job.job_id)
        for index in (self._queued, self._active, self._settling):
            index.discard(job.job_id)
        if job.state is JobState.PENDING:
            if not job.held:
                self._queued.add(job.job_id)
            if job.dependency or job.deadline:
                self._settling.add(job.job_id)
        elif job.state in ACTIVE_JOB_STATES:
            self._active.add(job.job_id)
            self._hold(job, 1)

    def _hold(self, job: Job, sign: int) -> None:
        """Count an active job's allocation in (sign 1) or out (sign -1)."""
        if job.allocation is not None:
            self._holdings.change(job.allocation, sign)
            for part in job.allocation.nodes:
                self._node_touched(part.node)
        elif sign > 0:
            self._unallocated.add(job.job_id)
        else:
            self._unallocated.discard(job.job_id)

    def put_node(self, node: Node) -> None:
        """Record a node as it now is.

        Args:
            node: the new record.
        """
        said = events.node_event(self.nodes.get(node.name), node)
        if said:
            events.log.info("%s", said)
        self.nodes[node.name] = node
        self._node_touched(node.name)

    def _node_touched(self, name: str) -> None:
        """Count a change of a node's record or usage."""
        self.node_changes += 1
        self._node_changed.pop(name, None)
        self._node_changed[name] = self.node_changes

    def nodes_changed_since(self, count: int) -> list[str]:
        """The nodes whose record or usage changed after a count of :attr:`node_changes`.

        Args:
            count: what :attr:`node_changes` was.

        Returns:
            Their names, the most recently changed first.
        """
        changed = []
        for name in reversed(self._node_changed):
            if self._node_changed[name] <= count:
                break
            changed.append(name)
        return changed

    def queued_jobs(self) -> Iterator[Job]:
        """Jobs waiting to start that are not held: what the scheduler considers."""
        return (self.jobs[i] for i in self._queued)

    def array_records(self, array_job_id: int) -> list[Job]:
        """The records of an array: its tasks that were split off and its pending tasks' record.

        Args:
            array_job_id: the array's job id.

        Returns:
            The records, by job id (empty when no such array is remembered).
        """
        return [self.jobs[i] for i in sorted(self.arrays.get(array_job_id, ()))]

    def settling_jobs(self) -> list[Job]:
        """PENDING jobs with a dependency or a deadline to settle before a pass, by job id."""
        return [self.jobs[i] for i in sorted(self._settling)]

    def active_jobs(self) -> Iterator[Job]:
        """Jobs holding resources (RUNNING, COMPLETING...)."""
        return (self.jobs[i] for i in sorted(self._active))

    def put_step(self, step: Step) -> None:
        """Record a step as it now is (after its change was committed).

        Args:
            step: the new record.
        """
        self.steps.setdefault(step.job_id, {})[step.step_id] = step

    def running_steps(self, job_id: int) -> list[Step]:
        """A job's steps that have not ended.

        Args:
            job_id: the job.

        Returns:
            The steps, by id.
        """
        steps = self.steps.get(job_id, {})
        return [steps[i] for i in sorted(steps) if steps[i].state is JobState.RUNNING]

    def next_step_id(self, job_id: int) -> int:
        """The id a job's next step gets: 0, 1, 2, ...

        Args:
            job_id: the job.

        Returns:
            One more than the highest step id so far (special steps apart).
        """
        ids = [i for i in self.steps.get(job_id, {}) if i <= MAX_NORMAL_STEP]
        return max(ids) + 1 if ids else 0

    def usage(self) -> dict[str, NodeUsage]:
        """What the active jobs hold, node by node.

        Returns:
            Usage for every node that has something allocated.
        """
        assert not self._unallocated, f"active job {min(self._unallocated)} without allocation"
        return self._holdings.usage()

    def forget_finished(self, ended_before: float) -> int:
        """Drop finished jobs that ended before a time (they stay in the database).

        Args:
            ended_before: epoch seconds (now - MinJobAge).

        Returns:
            How many were dropped.
        """
        old = [
            j.job_id
            for j in self.jobs.values()
            if j.state in TERMINAL_JOB_STATES and j.end_time < ended_before
        ]
        for job_id in old:
            job = self.jobs.pop(job_id)
            self.steps.pop(job_id, None)
            members = self.arrays.get(job.array_job_id)
            if members is not None:
                members.discard(job_id)
                if not members:
                    del self.arrays[job.array_job_id]
        return len(old)
