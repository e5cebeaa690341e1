"""The controller's OpenMetrics endpoints (Slurm 25.11's ``MetricsType=metrics/openmetrics``).

``GET /metrics`` lists the endpoints; ``/metrics/jobs``, ``/metrics/jobs-users-accts``,
``/metrics/nodes``, ``/metrics/partitions`` and ``/metrics/scheduler`` serve gauges
under Slurm's names (``slurm_jobs_running``, ``slurm_nodes_idle``,
``slurm_node_cpus{node="n1"}``, ``slurm_partition_jobs{partition="gpu"}``,
``slurm_bf_cycle_cnt``...) in OpenMetrics text, written by prometheus-client from
the controller's memory at each request. Cycle times are in microseconds, as
Slurm's; memory in bytes.

Slurm answers on slurmctld's own port; gRPC's listener cannot also speak
HTTP/1.1, so the endpoints have a port of their own on the controller's
address: ``MetricsPort`` (ours; any free port when unset), which ``scontrol
show config`` shows. Every user may read them (Slurm without ``PrivateData``);
``MetricsAuthUsers`` is not implemented.

Imports ctld.controller (its state, node usage and scheduler figures),
minislurm, prometheus-client and the standard library.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST, generate_latest

from ctld.controller import Controller
from ctld.scheduling import PassStats
from ctld.state import NodeUsage
from ctld.tokens import MetricsAccess
from minislurm.model import Job
from minislurm.states import JobState, NodeFlag, NodeState, node_base_shown

log = logging.getLogger(__name__)

MIB = 1024 * 1024
REQUEST_TIMEOUT = 5.0  # seconds a client has to send its request's head
MAX_HEAD = 8192  # bytes of request line and headers read

# The jobs counted by state, under Slurm's name for each.
JOB_STATES = {
    JobState.PENDING: "pending",
    JobState.RUNNING: "running",
    JobState.SUSPENDED: "suspended",
    JobState.COMPLETING: "completing",
    JobState.COMPLETED: "completed",
    JobState.CANCELLED: "cancelled",
    JobState.FAILED: "failed",
    JobState.TIMEOUT: "timeout",
    JobState.NODE_FAIL: "node_failed",
    JobState.PREEMPTED: "preempted",
    JobState.BOOT_FAIL: "bootfail",
    JobState.DEADLINE: "deadline",
    JobState.OUT_OF_MEMORY: "outofmemory",
}
HOLDING = frozenset({JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING})


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _labelled(name: str, doc: str, label: str, values: Iterable[tuple[str, float]]) -> Metric:
    family = GaugeMetricFamily(name, doc, labels=[label])
    for key, value in values:
        family.add_metric([key], value)
    return family


JOB_DOCS = {
    "jobs": "Number of jobs",
    **{
        f"jobs_{name}": f"Number of jobs in {state.value} state"
        for state, name in JOB_STATES.items()
    },
    "jobs_hold": "Number of pending jobs held",
    "jobs_finished": "Number of finished jobs",
    "jobs_cpus_alloc": "CPUs allocated to jobs",
    "jobs_memory_alloc": "Memory allocated to jobs (bytes)",
    "jobs_gpus_alloc": "GPUs allocated to jobs",
    "jobs_nodes_alloc": "Nodes allocated to jobs",
}


def job_counts(jobs: Iterable[Job]) -> dict[str, int]:
    """Slurm's job gauges of a set of jobs, by their names after ``slurm_`` (JOB_DOCS's).

    Args:
        jobs: the jobs.

    Returns:
        ``jobs`` (all), ``jobs_<state>`` for each state, ``jobs_hold`` (pending and
        held), ``jobs_finished``, and what the jobs holding resources hold:
        ``jobs_cpus_alloc``, ``jobs_memory_alloc`` (bytes), ``jobs_gpus_alloc``,
        ``jobs_nodes_alloc``.
    """
    states: Counter[JobState] = Counter()
    held = cpus = mem = gpus = nodes = 0
    for job in jobs:
        states[job.state] += 1
        if job.state is JobState.PENDING and job.held:
            held += 1
        alloc = job.allocation
        if job.state in HOLDING and alloc is not None:
            cpus += alloc.cpus
            mem += alloc.mem * MIB
            gpus += alloc.gpus
            nodes += len(alloc.nodes)
    total = sum(states.values())
    return {
        "jobs": total,
        **{f"jobs_{name}": states[state] for state, name in JOB_STATES.items()},
        "jobs_hold": held,
        "jobs_finished": total - sum(states[s] for s in (JobState.PENDING, *HOLDING)),
        "jobs_cpus_alloc": cpus,
        "jobs_memory_alloc": mem,
        "jobs_gpus_alloc": gpus,
        "jobs_nodes_alloc": nodes,
    }


def node_class(
    node_state: NodeState, flags: frozenset[NodeFlag], usage: NodeUsage, cpus: int
) -> list[str]:
    """The node gauges a node counts in (``nodes_idle``, ``nodes_drain``...), as Slurm's.

    Args:
        node_state: its stored base state.
        flags: its flags.
        usage: what jobs hold on it.
        cpus: its CPUs.

    Returns:
        The names, after ``slurm_``.
    """
    shown = node_base_shown(node_state, usage.cpus, cpus)
    names = {
        NodeState.IDLE: ["nodes_idle"],
        NodeState.MIXED: ["nodes_mixed"],
        NodeState.ALLOCATED: ["nodes_alloc"],
        NodeState.DOWN: ["nodes_down"],
    }.get(shown, ["nodes_unknown"])
    if NodeFlag.DRAIN in flags:
        names.append("nodes_drain")
        names.append("nodes_draining" if usage.cpus else "nodes_drained")
    if NodeFlag.NOT_RESPONDING in flags:
        names.append("nodes_noresp")
    return names


NODE_COUNTS = (
    "nodes_alloc",
    "nodes_down",
    "nodes_drain",
    "nodes_drained",
    "nodes_draining",
    "nodes_idle",
    "nodes_mixed",
    "nodes_noresp",
    "nodes_unknown",
)


class Metrics:
    """The endpoints' gauges, from one controller.

    Args:
        controller: the controller shown.
    """

    def __init__(self, controller: Controller) -> None:
        self._ctl = controller
        self.endpoints: dict[str, Callable[[], Iterable[Metric]]] = {
            "jobs": self.jobs,
            "jobs-users-accts": self.users_accounts,
            "nodes": self.nodes,
            "partitions": self.partitions,
            "scheduler": self.scheduler,
        }

    def text(self, endpoint: str) -> bytes:
        """One endpoint's page in OpenMetrics text.

        Args:
            endpoint: a key of :attr:`endpoints`.

        Returns:
            The page.
        """
        families = list(self.endpoints[endpoint]())
        return bytes(generate_latest(_Families(families)))  # type: ignore[no-untyped-call]

    def jobs(self) -> Iterator[Metric]:
        """``/metrics/jobs``: every job the controller knows, by state, and what they hold."""
        for name, value in job_counts(self._ctl.state.jobs.values()).items():
            yield _gauge(f"slurm_{name}", JOB_DOCS[name], value)

    def users_accounts(self) -> Iterator[Metric]:
        """``/metrics/jobs-users-accts``: jobs by state for each user and account."""
        by_user: dict[str, list[Job]] = {}
        by_account: dict[str, list[Job]] = {}
        for job in self._ctl.state.jobs.values():
            by_user.setdefault(job.user, []).append(job)
            by_account.setdefault(job.account, []).append(job)
        for kind, label, groups in (
            ("user", "username", by_user),
            ("account", "account", by_account),
        ):
            counts = {key: job_counts(jobs) for key, jobs in sorted(groups.items())}
            for name in JOB_DOCS:  # described even with no user yet
                yield _labelled(
                    f"slurm_{kind}_{name}",
                    f"{JOB_DOCS[name]}, per {kind}",
                    label,
                    ((key, c[name]) for key, c in counts.items()),
                )

    def nodes(self) -> Iterator[Metric]:
        """``/metrics/nodes``: nodes by state, and each node's resources and allocations."""
        state = self._ctl.state
        usage = self._ctl.nodes.node_usage()
        empty = NodeUsage()
        counts: Counter[str] = Counter()
        per_node = []
        for node in state.nodes.values():
            used = usage.get(node.name, empty)
            counts.update(node_class(node.state, node.flags, used, node.cpus))
            per_node.append((node, used))
        yield _gauge("slurm_nodes", "Number of nodes", len(per_node))
        for name in NODE_COUNTS:
            yield _gauge(f"slurm_{name}", f"Number of nodes {name[6:]}", counts[name])
        columns: tuple[tuple[str, str, Callable[..., float]], ...] = (
            ("node_cpus", "CPUs of the node", lambda n, u: n.cpus),
            ("node_cpus_alloc", "CPUs allocated on the node", lambda n, u: u.cpus),
            ("node_cpus_idle", "CPUs idle on the node", lambda n, u: n.cpus - u.cpus),
            ("node_gpus", "GPUs of the node", lambda n, u: len(n.gpus)),
            ("node_gpus_alloc", "GPUs allocated on the node", lambda n, u: len(u.gpus)),
            ("node_memory_bytes", "Memory of the node (bytes)", lambda n, u: n.real_memory * MIB),
            (
                "node_memory_alloc_bytes",
                "Memory allocated on the node (bytes)",
                lambda n, u: u.mem * MIB,
            ),
            (
                "node_memory_free_bytes",
                "Free memory the node last reported (bytes)",
                lambda n, u: n.free_memory * MIB,
            ),
        )
        for name, doc, value in columns:
            yield _labelled(
                f"slurm_{name}", doc, "node", ((n.name, value(n, u)) for n, u in per_node)
            )
        measured = [n for n, _ in per_node if n.gpu_util is not None]
        yield _labelled(
            "slurm_node_gpu_util",
            "Mean utilization of the node's GPUs, percent (nodes whose GPUs are measured)",
            "node",
            ((n.name, n.gpu_util or 0.0) for n in measured),
        )
        yield _labelled(
            "slurm_node_gpu_memory_used_bytes",
            "GPU memory in use on the node (bytes; nodes whose GPUs are measured)",
            "node",
            ((n.name, n.gpu_memory_used * MIB) for n in measured),
        )

    def partitions(self) -> Iterator[Metric]:
        """``/metrics/partitions``: each partition's jobs by state, nodes, CPUs and GPUs."""
        state = self._ctl.state
        names = list(state.partitions)
        jobs: dict[str, list[Job]] = {name: [] for name in names}
        for job in state.jobs.values():
            for name in job.partition.split(","):
                if name in jobs:
                    jobs[name].append(job)
        yield _gauge("slurm_partitions", "Number of partitions", len(names))
        counts = {name: job_counts(jobs[name]) for name in names}
        for key in ("jobs", *(f"jobs_{s}" for s in JOB_STATES.values()), "jobs_hold"):
            yield _labelled(
                f"slurm_partition_{key}",
                f"{JOB_DOCS[key]} in the partition",
                "partition",
                ((name, counts[name][key]) for name in names),
            )
        nodes = {
            name: [state.nodes[n] for n in part.nodes if n in state.nodes]
            for name, part in state.partitions.items()
        }
        for key, doc, value in (
            ("nodes", "Nodes in the partition", lambda ns: len(ns)),
            ("cpus", "CPUs in the partition", lambda ns: sum(n.cpus for n in ns)),
            ("gpus", "GPUs in the partition", lambda ns: sum(len(n.gpus) for n in ns)),
        ):
            yield _labelled(
                f"slurm_partition_{key}",
                doc,
                "partition",
                ((k, value(v)) for k, v in nodes.items()),
            )

    def scheduler(self) -> Iterator[Metric]:
        """``/metrics/scheduler``: main (event) and backfill (full) passes, and the queue."""
        loop = self._ctl.scheduler
        for prefix, stats in (("schedule_cycle", loop.event_stats), ("bf_cycle", loop.full_stats)):
            yield from _cycle_families(prefix, stats)
        yield _gauge(
            "slurm_sched_mean_cycle", "Mean scheduling cycle time (us)", _mean_us(loop.event_stats)
        )
        yield _gauge(
            "slurm_bf_mean_cycle", "Mean backfill cycle time (us)", _mean_us(loop.full_stats)
        )
        pending = sum(1 for j in self._ctl.state.jobs.values() if j.state is JobState.PENDING)
        running = sum(1 for j in self._ctl.state.jobs.values() if j.state is JobState.RUNNING)
        yield _gauge("slurm_schedule_queue_len", "Jobs pending queue length", pending)
        tally = self._ctl.ledger.tally
        for name, value in (
            ("submitted", tally.submitted),
            ("started", tally.started),
            ("completed", tally.completed),
            ("canceled", tally.canceled),
            ("failed", tally.failed),
        ):
            yield _gauge(f"slurm_sdiag_jobs_{name}", f"Jobs {name} since reset", value)
        yield _gauge("slurm_sdiag_jobs_pending", "Jobs pending at timestamp", pending)
        yield _gauge("slurm_sdiag_jobs_running", "Jobs running at timestamp", running)
        yield _gauge(
            "slurm_sched_stats_timestamp", "Statistics snapshot timestamp", int(time.time())
        )


def _cycle_families(prefix: str, stats: PassStats) -> Iterator[Metric]:
    what = "scheduling" if prefix.startswith("schedule") else "backfill"
    yield _gauge(f"slurm_{prefix}_cnt", f"{what.capitalize()} cycle count", stats.count)
    yield _gauge(f"slurm_{prefix}_last", f"Last {what} cycle time (us)", _us(stats.last))
    yield _gauge(f"slurm_{prefix}_max", f"Max {what} cycle time (us)", _us(stats.longest))
    yield _gauge(f"slurm_{prefix}_tot", f"Sum of {what} cycle times (us)", _us(stats.total))


def _us(seconds: float) -> int:
    return round(seconds * 1_000_000)


def _mean_us(stats: PassStats) -> int:
    return _us(stats.total / stats.count) if stats.count else 0


class _Families:
    """What generate_latest reads: a ``collect()`` of the families made."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families


def _header(head: bytes, name: bytes) -> str | None:
    """A request header's value (``name`` in lower case), None when absent."""
    for line in head.split(b"\r\n")[1:]:
        key, colon, value = line.partition(b":")
        if colon and key.strip().lower() == name:
            return value.strip().decode("latin-1")
    return None


class MetricsServer:
    """Serves :class:`Metrics` over HTTP/1.1, one request per connection.

    Args:
        metrics: the gauges.
        access: who may read them (asked at each request: scontrol reconfigure changes it).
    """

    def __init__(self, metrics: Metrics, access: Callable[[], MetricsAccess]) -> None:
        self._metrics = metrics
        self._access = access
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen.

        Args:
            host: the address.
            port: the port; 0 for any free one.

        Returns:
            The port bound.
        """
        self._server = await asyncio.start_server(self._serve, host, port, limit=MAX_HEAD)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, kind, body = await self._answer(reader)
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[str, str, bytes]:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
        except (TimeoutError, asyncio.LimitOverrunError, asyncio.IncompleteReadError):
            return "400 Bad Request", "text/plain", b"malformed request\n"
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return "400 Bad Request", "text/plain", b"malformed request\n"
        method, target = parts[0], parts[1].split("?", 1)[0]
        if method != "GET":
            return "405 Method Not Allowed", "text/plain", b"only GET\n"
        refused = self._access().check(_header(head, b"x-slurm-user-token"), time.time())
        if refused:
            return refused, "text/plain", b"a token of a user MetricsAuthUsers names is needed\n"
        if target in ("/metrics", "/metrics/"):
            listing = "".join(f"/metrics/{name}\n" for name in self._metrics.endpoints)
            return "200 OK", "text/plain; charset=utf-8", listing.encode()
        endpoint = target.removeprefix("/metrics/")
        if not target.startswith("/metrics/") or endpoint not in self._metrics.endpoints:
            return "404 Not Found", "text/plain", f"no endpoint {target}\n".encode()
        return "200 OK", CONTENT_TYPE_LATEST, self._metrics.text(endpoint)
