"""Job steps: placing an srun's tasks inside its job's allocation, and a step's end.

Slurm's rules (since 21.08): steps do not share CPUs unless ``--overlap``;
without ``--exact`` a step is given every CPU of the job on the nodes it
uses; a step that asks for no GPUs is given all of the job's GPUs on its
nodes, otherwise exactly those it asks for (on a node whose GPUs have a
link map, the best-linked of the job's free ones). A step that does not fit now
but would fit in the whole allocation waits (``StepBusy``: srun retries);
one that can never fit is rejected. Task ranks go to nodes in block (by
default) or cyclic order. salloc's interactive step (``srun --interactive``,
id ``interactive``) is one task on the job's first node, given the job's
CPUs and GPUs there while holding none: other steps run beside it.

Pure functions; imports ctld.sched.select and minislurm.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ctld.sched.select import select_nodes
from minislurm import hostlist, units
from minislurm.errors import InvalidRequest, MinislurmError
from minislurm.gpulinks import GpuLinks
from minislurm.model import (
    Allocation,
    Job,
    Node,
    NodeView,
    ResourceRequest,
    Step,
    StepNodeAlloc,
)
from minislurm.requests import StepRequest
from minislurm.states import OOM_SIGNAL, JobEvent, JobState, next_step_state

NOT_AVAILABLE = "Requested node configuration is not available"
DUPLICATE = "Duplicate job step id"
INTERACTIVE_NAME = "interactive"
INVALID_NODE = "Invalid node name specified"
INVALID_GRES = "Invalid generic resource (gres) specification"
BUSY = "Requested nodes are busy"
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")  # srun's host, as it reports it
UNLIMITED_MEM = 1 << 40  # MiB: a job that asked for no memory does not limit its steps


class StepBusy(MinislurmError):
    """The step would fit in the allocation, but other steps hold the resources now."""


def _wants_gpus(spec: StepRequest) -> bool:
    return bool(spec.gres or spec.gpus or spec.gpus_per_node or spec.gpus_per_task)


def step_request(spec: StepRequest, job: Job) -> ResourceRequest:
    """The step's request, with Slurm's defaults inside an allocation.

    Args:
        spec: what srun asked for.
        job: the running job.

    Returns:
        The resolved request (GPUs as asked; none when the step takes the job's).

    Raises:
        InvalidRequest: malformed values or nodes outside the allocation.
    """
    assert job.allocation is not None
    job_nodes = job.allocation.node_names

    def names(expr: str, within: bool) -> tuple[str, ...]:
        try:
            found = hostlist.expand(expr)
        except ValueError:
            raise InvalidRequest(INVALID_NODE) from None
        if within and any(n not in job_nodes for n in found):
            raise InvalidRequest(NOT_AVAILABLE)
        return tuple(dict.fromkeys(n for n in found if n in job_nodes))

    try:
        gres = sum(c for name, _t, c in units.parse_gres(spec.gres) if name == "gpu")
    except ValueError:
        raise InvalidRequest(INVALID_GRES) from None
    if spec.srun_host and not HOST_NAME.fullmatch(spec.srun_host):
        raise InvalidRequest(f"Invalid srun host name: {spec.srun_host[:64]}")
    req_nodes = names(spec.nodelist, True) if spec.nodelist else ()
    tpn = spec.ntasks_per_node
    min_nodes = max(spec.min_nodes, len(req_nodes), 1)
    ntasks = spec.ntasks or (tpn * min_nodes if tpn else min_nodes)
    max_nodes = spec.max_nodes or (min_nodes if spec.min_nodes else len(job_nodes))
    if ntasks < min_nodes or max_nodes < min_nodes:
        raise InvalidRequest(f"can't run {ntasks} processes on {min_nodes} nodes")
    return ResourceRequest(
        min_nodes=min_nodes,
        max_nodes=min(max_nodes, ntasks, len(job_nodes)) or 1,
        ntasks=ntasks,
        ntasks_per_node=tpn,
        cpus_per_task=spec.cpus_per_task or 1,
        mem_per_node=spec.mem_per_node or 0,
        mem_per_cpu=spec.mem_per_cpu or 0,
        gpus_per_node=max(gres, spec.gpus_per_node),
        gpus_per_task=spec.gpus_per_task,
        gpus=spec.gpus,
        req_nodes=req_nodes,
        exc_nodes=names(spec.exclude, False) if spec.exclude else (),
    )


def interactive_spec(spec: StepRequest, job: Job) -> StepRequest:
    """What salloc's interactive step asks for, whatever its srun's geometry.

    Args:
        spec: srun's request (``interactive`` set).
        job: the running job.

    Returns:
        One task on the job's first node, overlapping the other steps, named
        ``interactive`` (as Slurm names it).
    """
    assert job.allocation is not None
    return replace(
        spec,
        gres="",
        exclude="",
        gpus=0,
        gpus_per_node=0,
        gpus_per_task=0,
        ntasks_per_node=0,
        cpus_per_task=0,
        mem_per_node=None,
        mem_per_cpu=None,
        exclusive=False,
        exact=False,
        distribution="",
        nodelist=job.allocation.node_names[0],
        min_nodes=1,
        max_nodes=1,
        ntasks=1,
        overlap=True,
        name=INTERACTIVE_NAME,
    )


def step_views(
    alloc: Allocation, holding: list[Step], links: Mapping[str, GpuLinks | None] | None = None
) -> list[NodeView]:
    """The job's nodes as a step sees them: the job's share minus what steps hold.

    Args:
        alloc: the job's allocation.
        holding: running steps that do not overlap.
        links: the GPU links of the job's nodes, by name (a step takes the
            best-linked of the job's GPUs; none: the lowest).

    Returns:
        One view per node of the allocation, in allocation order.
    """
    views = []
    for part in alloc.nodes:
        cpus, mem, gpus = part.cpus, part.mem or UNLIMITED_MEM, set(part.gpus)
        for step in holding:
            for used in step.nodes:
                if used.node == part.node:
                    cpus -= used.cpus
                    mem -= used.mem
                    gpus -= set(used.gpus)
        views.append(
            NodeView(
                name=part.node,
                cpus=part.cpus,
                mem=part.mem or UNLIMITED_MEM,
                gpus=part.gpus,
                free_cpus=cpus,
                free_mem=mem,
                free_gpus=tuple(sorted(gpus)),
                usable=True,
                gpu_links=links.get(part.node) if links else None,
            )
        )
    return views


def assign_tasks(counts: list[int], distribution: str = "block") -> list[tuple[int, ...]]:
    """Global task ranks per node, by the step's distribution.

    ``block``: consecutive ranks; ``cyclic``: dealt one at a time round-robin;
    ``plane=N``: dealt N at a time. A node takes no more than its count.

    Args:
        counts: tasks per node, in node order.
        distribution: block, cyclic or plane=N.

    Returns:
        The ranks of each node, ascending.
    """
    kind, _, size = distribution.partition("=")
    if kind not in ("cyclic", "plane"):
        ranks, first = [], 0
        for count in counts:
            ranks.append(tuple(range(first, first + count)))
            first += count
        return ranks
    block = int(size) if kind == "plane" and size.isdigit() and int(size) > 0 else 1
    dealt: list[list[int]] = [[] for _ in counts]
    rank, total = 0, sum(counts)
    while rank < total:
        for i, count in enumerate(counts):
            take = min(block, count - len(dealt[i]), total - rank)
            dealt[i].extend(range(rank, rank + take))
            rank += take
    return [tuple(d) for d in dealt]


def arbitrary_ranks(nodelist: str, nodes: list[str]) -> list[tuple[int, ...]]:
    """``--distribution=arbitrary``: task i runs on the i-th node of the ``-w`` list.

    Args:
        nodelist: the step's ``-w`` list, repeats included (``n1,n2,n1``).
        nodes: the step's nodes, in order.

    Returns:
        The ranks of each node.
    """
    order = hostlist.expand(nodelist)
    return [tuple(i for i, name in enumerate(order) if name == node) for node in nodes]


def _why_never(spec: StepRequest, req: ResourceRequest, alloc: Allocation) -> str:
    """Slurm's words for a step its job's allocation can never hold."""
    if _wants_gpus(spec) and not alloc.gpus:
        return "Step requested GRES but job doesn't have GRES\n" + INVALID_GRES
    if req.ntasks * req.cpus_per_task > alloc.cpus:
        return "More processors requested than permitted"
    return NOT_AVAILABLE


def check_gpu_type(spec: StepRequest, nodes: list[Node]) -> None:
    """A step naming a GPU type (``--gpus=a100:1``, ``--gres=gpu:a100:1``) needs its job's
    nodes to have GPUs of that type only.

    Args:
        spec: what srun asked for.
        nodes: the job's nodes.

    Raises:
        InvalidRequest: another type, or GPUs of two types asked.
    """
    try:
        kinds = {kind for name, kind, _ in units.parse_gres(spec.gres) if name == "gpu" and kind}
    except ValueError:
        raise InvalidRequest(INVALID_GRES) from None
    kinds |= {spec.gpu_type} - {""}
    if len(kinds) > 1:
        raise InvalidRequest(INVALID_GRES)
    if kinds and any(set(node.gpu_types) != kinds for node in nodes):
        raise InvalidRequest(NOT_AVAILABLE)


def check_distribution(spec: StepRequest) -> None:
    """A step's distribution is block, cyclic, plane=N or arbitrary (with a node list).

    Args:
        spec: what srun asked for.

    Raises:
        InvalidRequest: anything else.
    """
    kind, eq, size = spec.distribution.partition("=")
    plane = kind == "plane" and size.isdigit() and int(size) > 0
    known = (kind in ("", "block", "cyclic") and not eq) or plane
    if not (known or (spec.distribution == "arbitrary" and spec.nodelist)):
        raise InvalidRequest("Invalid --distribution specification")


def place_step(
    spec: StepRequest,
    job: Job,
    running: list[Step],
    step_id: int,
    now: float,
    links: Mapping[str, GpuLinks | None] | None = None,
) -> Step:
    """Choose where a new step runs inside its job.

    Args:
        spec: what srun asked for.
        job: the running job.
        running: the job's running steps.
        step_id: the id the step gets.
        now: the time.
        links: the GPU links of the job's nodes, by name (see :func:`step_views`).

    Returns:
        The RUNNING step.

    Raises:
        InvalidRequest: it can never fit in the allocation.
        StepBusy: it fits, but not while the running steps hold their resources.
    """
    assert job.allocation is not None
    check_distribution(spec)
    req = step_request(spec, job)
    if spec.distribution == "arbitrary":
        req = replace(req, ntasks=len(hostlist.expand(spec.nodelist)), max_nodes=req.min_nodes)
    elif spec.distribution.startswith(("cyclic", "plane")) and not req.ntasks_per_node:
        # Dealt round-robin, tasks spread evenly over the nodes asked for, when
        # the allocation has room for that; else as it has room, as in Slurm.
        even = replace(req, ntasks_per_node=-(-req.ntasks // req.min_nodes))
        if select_nodes(even, step_views(job.allocation, [])) is not None:
            req = even
    exact = spec.exclusive or spec.exact
    holding = [] if spec.overlap else [s for s in running if not s.overlap]
    chosen = select_nodes(req, step_views(job.allocation, holding, links))
    if chosen is None:
        if select_nodes(req, step_views(job.allocation, [])) is None:
            raise InvalidRequest(_why_never(spec, req, job.allocation))
        raise StepBusy(BUSY)
    views = {v.name: v for v in step_views(job.allocation, holding, links)}
    if spec.distribution == "arbitrary":
        ranks = arbitrary_ranks(spec.nodelist, [p.node for p in chosen.nodes])
    else:
        ranks = assign_tasks([p.ntasks for p in chosen.nodes], spec.distribution or "block")
    nodes = []
    for part, task_ids in zip(chosen.nodes, ranks, strict=True):
        view = views[part.node]
        cpus = part.cpus if exact else max(view.free_cpus, part.cpus)
        gpus = part.gpus if _wants_gpus(spec) else view.free_gpus
        mem = part.mem if part.mem < UNLIMITED_MEM else 0
        nodes.append(StepNodeAlloc(part.node, cpus, mem, gpus, task_ids))
    return Step(
        job_id=job.job_id,
        step_id=step_id,
        name=spec.name or "bash",
        state=JobState.RUNNING,
        nodes=tuple(nodes),
        ntasks=req.ntasks,
        start_time=now,
        cpus_per_task=req.cpus_per_task,
        gpus_per_task=req.gpus_per_task,
        distribution=spec.distribution or "block",
        overlap=spec.overlap,
        argv=" ".join(spec.argv),
        uid=job.uid,
        gid=job.gid,
        srun_host=spec.srun_host,
        srun_pid=spec.srun_pid,
        tres_per_node=_tres_per_node(req, job),
    )


def _tres_per_node(req: ResourceRequest, job: Job) -> str:
    """The GPUs a step asked per node, or its job's when it asked none (as Slurm shows them)."""
    inherited = 0 if req.gpus or req.gpus_per_task else job.request.gpus_per_node
    per_node = req.gpus_per_node or inherited
    return f"gres:gpu:{per_node}" if per_node else ""


def node_reported(
    step: Step, node: str, exits: list[tuple[int, int]], now: float, out_of_memory: bool = False
) -> Step:
    """A step after one of its nodes reported its tasks' ends.

    The step ends when every node has reported: CANCELLED when scancel
    killed it, OUT_OF_MEMORY (``0:125``, as Slurm's) when a node killed it
    for its memory, COMPLETED when every task exited 0, else FAILED, with
    the highest exit code (and a signal, if one killed a task) as Slurm
    reports them.

    Args:
        step: a RUNNING step.
        node: the reporting node.
        exits: ``(exit_code, signal)`` of each task on that node.
        now: the time.
        out_of_memory: the node killed the step's tasks for their memory.

    Returns:
        The updated step.
    """
    code = max([step.exit_code, *(c for c, _ in exits)])
    sig = step.signal or next((s for _, s in exits if s), 0)
    if out_of_memory:
        code, sig = 0, OOM_SIGNAL
    reported = step.reported | {node}
    updated = replace(step, exit_code=code, signal=sig, reported=reported)
    if set(step.node_names) - reported:
        return updated
    if step.cancelled_by >= 0:
        event = JobEvent.KILLED
    elif sig == OOM_SIGNAL:
        event = JobEvent.OUT_OF_MEMORY
    else:
        event = JobEvent.EXIT_OK if code == 0 and sig == 0 else JobEvent.EXIT_FAIL
    state = next_step_state(step.job_id, step.step_id, step.state, event)
    return replace(updated, state=state, end_time=now)


def cancelled(step: Step, now: float) -> Step:
    """A running step ended because its job ended (or it was cancelled).

    Args:
        step: a RUNNING step.
        now: the time.

    Returns:
        The CANCELLED step.
    """
    state = next_step_state(step.job_id, step.step_id, step.state, JobEvent.KILLED)
    return replace(step, state=state, end_time=now)
