"""srun steps on this node: check the credential, start the tasks, stream them to srun.

A step runs under its own stepd (``SPOOL/step<job>.<step>/``, see
nodeagent/stepio.py). ``launch`` checks the controller's signature and
the credential's expiry, builds each task's environment and GPU binding
from the signed layout (never from what srun claims), starts the step and
turns stepd's events into the TaskEvent stream srun reads. When the tasks
have ended, the node reports the step to the controller through the
agent's outbox. If srun goes away mid-step, the step is killed, as Slurm
does when it loses its srun. A restarted slurmd adopts the steps that ran
on (:mod:`nodeagent.stepadopt`), reports their ends, and lets their sruns
attach again.

Imports nodeagent.spool, nodeagent.stepio, nodeagent.stepadopt and minislurm.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from minislurm import jobenv
from minislurm.errors import CredentialError, PrologFailed
from minislurm.gpulinks import GpuLinks
from minislurm.iopattern import output_path
from minislurm.model import Job
from minislurm.security import cred
from minislurm.stepids import INTERACTIVE_STEP, step_id_text
from minislurm.units import compress_counts
from minislurm.wire import convert
from minislurm.wire.rpc import minislurm_pb2 as pb
from nodeagent import spool, stepio
from nodeagent.cgroups import Confinement, NodeCgroups
from nodeagent.stepadopt import AdoptedStep
from nodeagent.stepdpool import Stepd
from nodeagent.stepstat import final_usage

log = logging.getLogger(__name__)

RECENT_STEPS = 1024  # ended steps remembered, so late input is dropped at once
ADOPTED_KEEP = 300.0  # seconds an adopted step's events wait for its srun to attach
Session = stepio.StepSession | AdoptedStep
_KINDS = {
    stepio.EventKind.STDOUT: pb.TaskEvent.STDOUT,
    stepio.EventKind.STDERR: pb.TaskEvent.STDERR,
    stepio.EventKind.EXITED: pb.TaskEvent.EXITED,
}


@dataclass(frozen=True)
class NodeFacts:
    """What the step manager needs to know of its node and cluster."""

    node_name: str
    hostname: str
    spool_dir: str
    cluster: str
    conf_path: str
    controller_host: str
    controller_port: int
    kill_wait: int
    key: bytes
    acct_freq: int = 30  # JobAcctGatherFrequency: seconds between usage samples
    hosts_file: str = ""  # the jobs' /etc/hosts (nodeagent.hostsfile); "" for the host's own
    topology_addr: tuple[str, str] = ("", "")  # SLURM_TOPOLOGY_ADDR and its pattern
    gpu_links: GpuLinks | None = None  # how its GPUs are linked (--gpu-bind=closest)
    task_prolog: str = ""  # TaskProlog, run as the user before each task
    task_epilog: str = ""  # TaskEpilog, after each task
    gpu_usage: str = ""  # where stepd reads its GPUs' usage (nodeagent.gpuusage)
    enforce_memory: bool = False  # sample and kill (OverMemoryKill, or cgroups that cannot)
    cgroups: NodeCgroups | None = None  # where its jobs' cgroups are (TaskPlugin=task/cgroup)


def check_credential(
    key: bytes, signed: pb.SignedCredential, job_id: int, step_id: int, node: str, now: float | None
) -> pb.StepCredential:
    """The credential's content, once its signature (and, at launch, its age) is checked.

    Args:
        key: the cluster key.
        signed: the credential as received.
        job_id: the job the request is about.
        step_id: the step the request is about.
        node: this node's name (it must be in the credential).
        now: the time, to check expiry; None for requests on a running step.

    Returns:
        The decoded credential.

    Raises:
        CredentialError: forged, expired, or for another step or node.
    """
    if not cred.verify(key, signed.payload, signed.signature):
        raise CredentialError("Invalid job credential")
    content: pb.StepCredential = pb.StepCredential.FromString(signed.payload)
    if (content.job_id, content.step_id) != (job_id, step_id):
        raise CredentialError("Job credential is for another step")
    if now is not None and content.expires < now:
        raise CredentialError("Job credential expired")
    if all(n.node != node for n in content.nodes):
        raise CredentialError(f"Job credential does not include node {node}")
    return content


def task_jobs(
    request: pb.LaunchTasksRequest, content: pb.StepCredential, job: Job, facts: NodeFacts
) -> tuple[spool.TaskJob, ...]:
    """The tasks of this node, each with its environment, binding and I/O.

    A task's stdin is srun's ``--input`` file, or a pipe slurmd feeds (every
    task's with ``stdin_all``, else task 0's; the others read /dev/null).

    Args:
        request: srun's launch request.
        content: the checked credential (the authoritative layout).
        job: the job, from ``request.job``.
        facts: this node.

    Returns:
        One per task placed here, as stepd reads them.
    """
    node_index, mine = next(
        (i, n) for i, n in enumerate(content.nodes) if n.node == facts.node_name
    )
    ctx = jobenv.NodeContext(
        facts.node_name,
        facts.hostname,
        facts.cluster,
        facts.conf_path,
        facts.controller_host,
        facts.controller_port,
        facts.topology_addr,
    )
    step = jobenv.StepContext(
        step_id=content.step_id,
        ntasks=content.ntasks,
        nodelist=request.step.nodelist,
        nnodes=len(content.nodes),
        tasks_per_node=compress_counts([len(n.task_ids) for n in content.nodes]),
        cpus_on_node=mine.cpus,
        gpus_on_node=tuple(mine.gpus),
        master_addr=content.nodes[0].node,
        master_port=jobenv.master_port(content.job_id),
        launch_host=request.launch_host,
        gpus_per_task=request.step.gpus_per_task,
        cpus_per_task=request.step.cpus_per_task if request.step.cpus_per_task > 1 else 0,
        preserve_env=request.preserve_env,
        interactive=content.step_id == INTERACTIVE_STEP,
    )
    job_vars = jobenv.job_node_variables(job, ctx)
    tasks = []
    for local_id, rank in enumerate(mine.task_ids):
        gpus = jobenv.bind_gpus(
            tuple(mine.gpus),
            local_id,
            request.gpu_bind,
            request.step.gpus_per_task,
            facts.gpu_links,
        )
        place = jobenv.TaskPlace(rank, local_id, node_index, gpus, tuple(mine.task_ids))
        env = jobenv.task_environment(
            dict(request.environment), job, ctx, step, place, request.umask, job_vars
        )
        if request.pty:  # as Slurm's srun sets them for a --pty step
            env["SLURM_PTY_WIN_ROW"] = str(request.window.rows)
            env["SLURM_PTY_WIN_COL"] = str(request.window.cols)
        values = {
            **convert.pattern_values(job, facts.node_name),
            "t": str(rank),
            "n": str(node_index),
            "s": str(content.step_id),
            "J": f"{content.job_id}.{content.step_id}",
        }

        def path(pattern: str, values: dict[str, str] = values) -> str | None:
            return output_path(pattern, request.cwd, values) if pattern else None

        stdout, stderr = path(request.stdout), path(request.stderr) or path(request.stdout)
        if request.pty and rank:  # --pty: every task but task 0 writes to /dev/null
            stdout = stderr = os.devnull
        piped = request.stdin_all or rank == 0
        tasks.append(
            spool.TaskJob(
                task_id=rank,
                local_id=local_id,
                argv=tuple(request.argv),
                env=env,
                stdout=stdout,
                stderr=stderr,
                stdin=path(request.stdin) or (None if piped else os.devnull),
                append=request.open_append,
                pty=request.pty and rank == 0,
            )
        )
    return tuple(tasks)


def job_memory(job: Job, node: str) -> int:
    """The memory a job may hold on a node, in KiB; 0: no limit.

    Its allocation's there; where memory is not a consumable resource
    (``SelectTypeParameters=CR_Core``), what it asked: ``--mem``, or
    ``--mem-per-cpu`` times its CPUs there.

    Args:
        job: the job, with its allocation.
        node: the node.

    Returns:
        KiB.
    """
    here = job.allocation.on(node) if job.allocation else None
    if here is None:
        return 0
    if here.mem:
        return here.mem * 1024
    if job.request.mem_per_cpu:
        return job.request.mem_per_cpu * here.cpus * 1024
    return job.request.mem_per_node * 1024


def confinement(
    facts: NodeFacts,
    job: Job,
    step: str,
    step_mem: int | None = None,
    step_gpus: tuple[int, ...] | None = None,
) -> Confinement | None:
    """A step's cgroups on this node (None: steps are not confined here).

    Args:
        facts: this node.
        job: the step's job, with its allocation.
        step: the step as Slurm writes it (0, batch...).
        step_mem: KiB the step may hold here (0: no limit; None: the job's, as a batch
            script may).
        step_gpus: the step's GPUs here (None: the job's, as a batch script has).

    Returns:
        What its stepd is to set up.
    """
    if facts.cgroups is None:
        return None
    here = job.allocation.on(facts.node_name) if job.allocation else None
    job_gpus = tuple(here.gpus) if here is not None else (step_gpus or ())
    job_mem = job_memory(job, facts.node_name)
    return facts.cgroups.confinement(
        job.uid,
        job.job_id,
        step,
        (job_mem, job_mem if step_mem is None else step_mem),
        (job_gpus, job_gpus if step_gpus is None else step_gpus),
    )


def step_memory(content: pb.StepCredential, job: Job, node: str) -> int:
    """The memory a step's tasks may hold on a node, in KiB: the step's, else its job's.

    Args:
        content: the checked credential.
        job: the step's job, with its allocation.
        node: the node.

    Returns:
        KiB; 0 for no limit.
    """
    mine = next(n for n in content.nodes if n.node == node)
    return int(mine.mem) * 1024 or job_memory(job, node)


def window_size(window: pb.WindowSize) -> tuple[int, int]:
    """A terminal's size as srun sent it, checked.

    Args:
        window: rows and columns.

    Returns:
        (rows, columns).

    Raises:
        ValueError: beyond what a terminal holds (65535).
    """
    if window.rows > 0xFFFF or window.cols > 0xFFFF:
        raise ValueError(f"no terminal has {window.rows} rows and {window.cols} columns")
    return window.rows, window.cols


class LaunchedJobs:
    """The job of the latest launch, converted once for every node of a slurmd process.

    A step's launch reaches each of its nodes with the same job, whose
    allocation names every node: a process serving 128 nodes of a 1,024-node
    step would otherwise convert 128 times a job of 1,024 allocations.
    """

    def __init__(self) -> None:
        self._last: tuple[bytes, Job] | None = None

    def job(self, info: pb.JobInfo) -> Job:
        """The job a launch request carries.

        Args:
            info: the request's job.

        Returns:
            The record (the same object as for the latest request with the same job).
        """
        raw = info.SerializeToString()
        if self._last is None or self._last[0] != raw:
            self._last = (raw, convert.job_from_info(info))
        return self._last[1]


class StepManager:
    """The steps running on this node, by (job id, step id)."""

    def __init__(
        self,
        facts: NodeFacts,
        report: Callable[[pb.StepCompleteRequest], None],
        spawn: Callable[[str], Stepd],
        jobs: LaunchedJobs,
        prolog: Callable[[Job], Awaitable[bool]],
    ) -> None:
        self.facts = facts
        self._report = report
        self._spawn = spawn
        self._jobs = jobs
        self._prolog = prolog
        self._followers: set[asyncio.Task[None]] = set()
        self._listeners: dict[tuple[int, int], asyncio.Queue[pb.TaskEvent | None]] = {}
        self.sessions: dict[tuple[int, int], Session] = {}
        self.adopted: dict[tuple[int, int], AdoptedStep] = {}
        self._adoption = asyncio.Event()  # set once the spool's steps are adopted
        # Input may reach a node before the launch it belongs to: both meet here.
        self._launches: dict[tuple[int, int], asyncio.Future[stepio.StepSession | None]] = {}
        self._recently_ended: dict[tuple[int, int], None] = {}  # ordered, bounded
        self._job_kills: dict[int, spool.Terminate] = {}  # told to the sruns, not yet done

    def step_dir(self, job_id: int, step_id: int) -> str:
        """The spool directory of a step.

        Args:
            job_id: the job.
            step_id: the step.

        Returns:
            Its path.
        """
        return spool.step_dir(self.facts.spool_dir, job_id, step_id)

    async def launch(self, request: pb.LaunchTasksRequest) -> AsyncIterator[pb.TaskEvent]:
        """Start this node's tasks of a step and stream what they do.

        Args:
            request: srun's launch request.

        Yields:
            Task output and exits, then NODE_DONE.

        Raises:
            CredentialError: the credential does not allow this launch.
            PermissionError: the step's user is not ours and we are not root.
            PrologFailed: the node's Prolog failed for the job.
        """
        content = check_credential(
            self.facts.key,
            request.credential,
            request.job_id,
            request.step_id,
            self.facts.node_name,
            time.time(),
        )
        if os.getuid() not in (0, content.uid):
            raise PermissionError(
                f"slurmd runs as uid {os.getuid()} and cannot run tasks of uid {content.uid}"
            )
        allocation = self._jobs.job(request.job)
        tasks = task_jobs(request, content, allocation, self.facts)
        if not await self._prolog(allocation):
            raise PrologFailed
        step_mem = step_memory(content, allocation, self.facts.node_name)
        job = spool.StepJob(
            job_id=content.job_id,
            step_id=content.step_id,
            uid=content.uid,
            gid=content.gid,
            user=content.user,
            umask=request.umask,
            cwd=request.cwd,
            node=self.facts.node_name,
            kill_wait=self.facts.kill_wait,
            tasks=tasks,
            step_text=step_id_text(content.step_id),
            acct_freq=self.facts.acct_freq,
            hosts_file=self.facts.hosts_file,
            window=window_size(request.window) if request.pty else (0, 0),
            task_prolog=self.facts.task_prolog,
            task_epilog=self.facts.task_epilog,
            mem_limit=step_mem if self.facts.enforce_memory else 0,
            gpu_usage=self.facts.gpu_usage,
            user_task_prolog=request.task_prolog,
            user_task_epilog=request.task_epilog,
            cgroup=confinement(
                self.facts,
                allocation,
                step_id_text(content.step_id),
                step_mem,
                next(tuple(n.gpus) for n in content.nodes if n.node == self.facts.node_name),
            ),
        )
        key = (content.job_id, content.step_id)
        launched = self._launch_future(key)
        try:
            session = await stepio.start_step(self.step_dir(*key), job, spawn=self._spawn)
        except BaseException:
            self._launches.pop(key, None)
            self._ended(key)
            if not launched.done():
                launched.set_result(None)
            raise
        self.sessions[key] = session
        if not launched.done():
            launched.set_result(session)
        queue: asyncio.Queue[pb.TaskEvent | None] = asyncio.Queue()
        self._listeners[key] = queue
        follower = asyncio.get_running_loop().create_task(
            self._follow(key, session), name=f"step {key[0]}.{key[1]}"
        )
        self._followers.add(follower)
        follower.add_done_callback(self._followers.discard)
        running = len(tasks)
        try:
            while (event := await queue.get()) is not None:
                if event.kind == pb.TaskEvent.EXITED:
                    running -= 1
                yield event
        finally:
            self._listeners.pop(key, None)
            if running and not session.done:  # srun went away mid-step: the step goes too
                log.info("step=%d.%d lost its srun: killing it", *key)
                session.terminate(self.facts.kill_wait, "CANCELLED", time.time())

    def adopt(self) -> None:
        """After a restart: follow the steps whose stepds ran on (or ended unreported)."""
        for key in spool.find_steps(self.facts.spool_dir):
            step = AdoptedStep(self.step_dir(*key), *key)
            self.sessions[key] = self.adopted[key] = step
            follower = asyncio.get_running_loop().create_task(
                self._follow(key, step), name=f"step {key[0]}.{key[1]}"
            )
            self._followers.add(follower)
            follower.add_done_callback(self._followers.discard)
            log.info("job=%d step=%d stepd pid=%d adopted", *key, step.pid)
        self._adoption.set()

    async def attach(self, request: pb.AttachStepRequest) -> AsyncIterator[pb.TaskEvent]:
        """What an adopted step's tasks did since the old slurmd went, to its end.

        Args:
            request: srun's request, with the step's credential.

        Yields:
            Task output and exits, then NODE_DONE.

        Raises:
            CredentialError: the credential does not name this step and node.
            LookupError: no step of this node's that ran on through a restart.
        """
        key = (request.job_id, request.step_id)
        check_credential(self.facts.key, request.credential, *key, self.facts.node_name, None)
        with contextlib.suppress(TimeoutError):  # an srun may come before the adoption
            await asyncio.wait_for(self._adoption.wait(), stepio.START_TIMEOUT)
        step = self.adopted.get(key)
        if step is None:
            raise LookupError(f"step {key[0]}.{key[1]} is not on node {self.facts.node_name}")
        async for event in step.replay():
            message = self._task_event(event)
            if message is not None:
                yield message

    async def _follow(self, key: tuple[int, int], session: Session) -> None:
        """Relay a step's events to its srun while it listens; report the step's end anyway.

        srun may stop listening once every task has exited (it does not wait
        for stepd's clean-up); the step's end is reported all the same.
        """

        def relay(event: pb.TaskEvent | None) -> None:
            queue = self._listeners.get(key)
            if queue is not None:
                queue.put_nowait(event)

        async for event in session.events():
            if event.kind is stepio.EventKind.DONE:
                self._finish(key, session)
            message = self._task_event(event)
            if message is not None:
                relay(message)
        relay(None)
        if key in self.adopted:
            asyncio.get_running_loop().call_later(ADOPTED_KEEP, self.adopted.pop, key, None)

    def _task_event(self, event: stepio.StepEvent) -> pb.TaskEvent | None:
        """The message srun gets for a step's event (None for those it does not see)."""
        if event.kind is stepio.EventKind.DONE:
            return pb.TaskEvent(kind=pb.TaskEvent.NODE_DONE, node=self.facts.node_name)
        if event.kind not in _KINDS:
            return None
        return pb.TaskEvent(
            kind=_KINDS[event.kind],
            task_id=event.task_id,
            data=event.data,
            exit_code=event.exit_code,
            signal=event.signal,
            node=self.facts.node_name,
            error=event.error,
        )

    def _finish(self, key: tuple[int, int], session: Session) -> None:
        self.sessions.pop(key, None)
        self._launches.pop(key, None)
        self._ended(key)
        if self.facts.cgroups is not None:  # its stepd has exited: the oom count is read
            self.facts.cgroups.remove_step(key[0], step_id_text(key[1]))
        result = session.outcome()
        self._report(
            pb.StepCompleteRequest(
                node=self.facts.node_name,
                job_id=key[0],
                step_id=key[1],
                tasks=[
                    pb.TaskExit(task_id=t.task_id, exit_code=t.exit_code, signal=t.signal)
                    for t in result.tasks
                ],
                start_time=int(result.start_time),
                end_time=int(result.end_time),
                max_rss=result.max_rss,
                total_cpu=result.total_cpu,
                out_of_memory=result.outcome == "OUT_OF_MEMORY",
                usage=final_usage(self.step_dir(*key)),
            )
        )

    def _launch_future(self, key: tuple[int, int]) -> asyncio.Future[stepio.StepSession | None]:
        future = self._launches.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._launches[key] = future
        return future

    def _ended(self, key: tuple[int, int]) -> None:
        self._recently_ended[key] = None
        while len(self._recently_ended) > RECENT_STEPS:
            del self._recently_ended[next(iter(self._recently_ended))]

    async def _session(
        self, job_id: int, step_id: int, signed: pb.SignedCredential
    ) -> Session | None:
        """The step's session; None when it has ended here (input or a signal came late).

        A request that arrives before its step was launched here waits for it.
        """
        check_credential(self.facts.key, signed, job_id, step_id, self.facts.node_name, None)
        key = (job_id, step_id)
        if key in self.sessions or key in self._recently_ended:
            return self.sessions.get(key)
        launched = self._launch_future(key)
        try:
            return await asyncio.wait_for(asyncio.shield(launched), stepio.START_TIMEOUT)
        except TimeoutError:
            if self._launches.get(key) is launched and not launched.done():
                del self._launches[key]
            return None

    async def task_input(self, request: pb.TaskInputRequest) -> None:
        """srun's stdin for a step's task(s), or its terminal's new size (``--pty``).

        Args:
            request: the data, or EOF, or the window size.

        Raises:
            CredentialError: a forged credential.
            ValueError: an impossible window size.
        """
        session = await self._session(request.job_id, request.step_id, request.credential)
        if session is None or session.done:
            return
        if request.HasField("window"):
            session.set_window(*window_size(request.window))
        if request.data or request.eof:
            await session.write_stdin(request.data, request.eof)

    async def signal_tasks(self, request: pb.SignalTasksRequest) -> None:
        """A signal to a step's tasks (srun's, or ``scancel J.S``), or its termination (``-K``).

        A SIGKILL ends the step: its srun hears first that it is being killed,
        as Slurm's controller tells srun when a step is signalled with SIGKILL.

        Args:
            request: the step and the signal (``terminate``: SIGTERM, then SIGKILL).

        Raises:
            CredentialError: a forged credential.
        """
        session = await self._session(request.job_id, request.step_id, request.credential)
        if session is None or session.done:
            return
        if request.terminate:
            session.terminate(self.facts.kill_wait, "CANCELLED", time.time())
            return
        if request.signal == signal.SIGKILL:
            self._tell_aborted((request.job_id, request.step_id))
            self.kill_job(request.job_id)
        session.signal(request.signal)

    def abort_job(self, job_id: int, kill: spool.Terminate) -> None:
        """Tell the sruns of a job's steps here that the job is being killed.

        The steps themselves are killed by :meth:`kill_job`, once the batch
        script has had its SIGTERM, or sooner when an srun asks (the tasks then
        get this kill's SIGTERM before srun's SIGKILL).

        Args:
            job_id: the job.
            kill: why (CANCELLED, TIMEOUT... the line stepd writes), when, and the KillWait.
        """
        self._job_kills[job_id] = kill
        for key in list(self.sessions):
            if key[0] == job_id:
                self._tell_aborted(key)

    def kill_job(self, job_id: int) -> None:
        """Kill a job's steps here as :meth:`abort_job` said (once).

        Args:
            job_id: the job.
        """
        kill = self._job_kills.pop(job_id, None)
        if kill is None:
            return
        for key, session in list(self.sessions.items()):
            if key[0] == job_id:
                session.terminate(int(kill.kill_wait), kill.outcome, kill.time)

    def _tell_aborted(self, key: tuple[int, int]) -> None:
        """Tell a step's srun, if it listens here, that the step is being killed."""
        queue = self._listeners.get(key)
        if queue is not None:
            queue.put_nowait(pb.TaskEvent(kind=pb.TaskEvent.ABORTED, node=self.facts.node_name))

    def of_job(self, job_id: int) -> list[Session]:
        """The running steps of a job on this node.

        Args:
            job_id: the job.

        Returns:
            Their sessions.
        """
        return [s for (job, _), s in self.sessions.items() if job == job_id]
