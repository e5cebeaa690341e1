"""One node's agent: launch and report its jobs and steps.

The agent holds no authority: it runs what the controller asks and reports
how it ended. Reports are kept until the controller acknowledges them (the
spool directory is the outbox), so a job that ends while the controller is
down is recorded when it comes back. One slurmd process may serve many
nodes, an agent each (:mod:`nodeagent.slurmd` registers and heartbeats for
them all).

Imports nodeagent.launcher, nodeagent.resources and minislurm.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from dataclasses import dataclass, replace

import grpc

from minislurm import SLURM_VERSION, jobenv
from minislurm.config import SlurmConfig
from minislurm.gpulinks import GpuLinks
from minislurm.jobenv import ScriptJob
from minislurm.model import Job
from minislurm.site.programs import ScriptFailure
from minislurm.stepids import BATCH_STEP
from minislurm.topology import node_address
from minislurm.wire import convert
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc
from nodeagent import gpuusage, hostsfile, spool
from nodeagent.cgroups import NodeCgroups
from nodeagent.launcher import Launcher, StepOutcome
from nodeagent.prologs import NodeScripts
from nodeagent.resources import NodeResources
from nodeagent.stepdpool import StepdPool
from nodeagent.steps import LaunchedJobs, NodeFacts, StepManager, confinement, job_memory
from nodeagent.stepstat import final_usage, node_stat

log = logging.getLogger(__name__)

RETRY_MAX_SECONDS = 2.0
CALL_TIMEOUT = 10.0
STEP_GRACE = 1.0  # seconds a job's end waits for the ends of its steps still running here
JOB_GONE_POLL = 0.05  # seconds between looks for a job's processes, before its Epilog
CGROUP_GRACE = 10.0  # seconds a job's cgroups may take to empty once it has ended here


@dataclass(frozen=True)
class AgentSettings:
    """Everything slurmd needs to know to run."""

    conf: SlurmConfig
    conf_path: str
    node_name: str
    advertise_addr: str  # the address the controller and other nodes use
    spool_dir: str
    controller: str  # host:port
    cluster_key: bytes  # checks step credentials (slurm.key)
    cgroups: NodeCgroups | None = None  # its jobs' cgroups (TaskPlugin=task/cgroup)
    cgroup_memory_missed: bool = False  # cgroup.conf limits memory, its cgroups cannot: sample


def _hosts_file(settings: AgentSettings) -> str:
    """The hosts file this node's jobs see ("" when every node name resolves already)."""
    nodes = [(node.name, node.addr) for node in settings.conf.nodes]
    try:
        path = hostsfile.write_for(nodes, settings.spool_dir, settings.conf.cluster_name)
    except OSError as err:
        log.warning("cannot write the hosts file of the jobs: %s; node names may not resolve", err)
        return ""
    if path:
        log.info("jobs see node names through %s", path)
    return path


FAKE_GPUS_DIR = "fake-gpus"  # in the spool: what fake GPUs pretend to do (nodeagent.gpuusage)


def _gpu_usage(kind: str, spool_dir: str) -> str:
    """Where stepd reads the node's GPUs' usage: nvidia-smi, the fake GPUs' directory, or "".

    The fake GPUs' directory is made writable by every job, as /tmp is.
    """
    if kind != "fake":
        return kind
    path = os.path.join(spool_dir, FAKE_GPUS_DIR)
    try:
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o1777)
    except OSError as err:
        log.warning("cannot make %s: %s; fake GPUs report no usage", path, err)
        return ""
    return path


def status_message(outcome: StepOutcome) -> pb.JobStatus:
    """The report of an ended step.

    Args:
        outcome: what stepd recorded.

    Returns:
        The message for the controller.
    """
    return pb.JobStatus(
        job_id=outcome.job_id,
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        start_time=int(outcome.start_time),
        end_time=int(outcome.end_time),
        outcome=outcome.outcome,
        message=outcome.message,
        max_rss=outcome.max_rss,
        total_cpu=outcome.total_cpu,
        restarts=outcome.restarts,
    )


class Agent:
    """One node's agent: its jobs, its steps, and the reports of their ends.

    Args:
        settings: the node's settings.
        resources: what the node has.
        stepds: the process's stepd pool.
        ctld: the controller's stub (one channel for all the nodes of a process).
        jobs: the process's launched jobs (see nodeagent.steps.LaunchedJobs).
    """

    def __init__(
        self,
        settings: AgentSettings,
        resources: NodeResources,
        stepds: StepdPool,
        ctld: pb_grpc.SlurmControllerStub,
        jobs: LaunchedJobs,
    ) -> None:
        self.settings = settings
        self.resources = resources
        self.launcher = Launcher(settings.spool_dir, self._step_ended, stepds)
        self.hosts_file = _hosts_file(settings)
        host, _, port = settings.controller.rpartition(":")
        facts = NodeFacts(
            node_name=settings.node_name,
            hostname=resources.hostname,
            spool_dir=settings.spool_dir,
            cluster=settings.conf.cluster_name,
            conf_path=settings.conf_path,
            controller_host=host,
            controller_port=int(port),
            kill_wait=settings.conf.kill_wait,
            acct_freq=settings.conf.job_acct_gather_frequency,
            key=settings.cluster_key,
            hosts_file=self.hosts_file,
            topology_addr=node_address(settings.conf.topology, settings.node_name),
            gpu_links=GpuLinks.of(resources.gpus, resources.gpu_links)
            if resources.gpu_links
            else None,
            task_prolog=settings.conf.task_prolog,
            task_epilog=settings.conf.task_epilog,
            gpu_usage=_gpu_usage(resources.gpu_usage, settings.spool_dir),
            enforce_memory=settings.conf.enforce_memory or settings.cgroup_memory_missed,
            cgroups=settings.cgroups,
        )
        conf = settings.conf
        self.scripts = NodeScripts(
            conf.prolog,
            conf.epilog,
            conf.prolog_wait,
            conf.epilog_wait,
            self._node_context(settings.conf_path),
            self._script_failed,
        )
        self.steps = StepManager(facts, self._step_done, stepds.spawn, jobs, self._prolog)
        self._script_jobs: dict[int, ScriptJob] = {}  # batch jobs launched here, for the Epilog
        self._script_outbox: dict[tuple[int, int, str], pb.NodeScriptFailedRequest] = {}
        self._step_outbox: dict[tuple[int, int], pb.StepCompleteRequest] = {}
        self.start_time = time.time()
        self.boot_time = resources.boot_time  # a reboot (scontrol reboot) sets it anew
        self._ctld = ctld
        self._outbox: dict[int, StepOutcome] = {}
        self._held: dict[int, float] = {}  # job ends waiting for their steps', since when
        self._outbox_event = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._kills: set[asyncio.Task[None]] = set()  # kills and cgroup removals under way
        self._alloc_prologs: set[asyncio.Task[bool]] = set()  # PrologFlags=Alloc's, under way
        self.registered = False  # with the controller, since it last answered
        self.node_state = ""  # IDLE, MIXED, ALLOCATED... as the controller last said
        self.drained = False

    # ------------------------------------------------------------ lifecycle

    async def adopt(self) -> None:
        """Find the jobs and steps that ran on while slurmd was away (before serving).

        It comes before the server answers: a launch the controller retries
        must find the spool settled (see :meth:`Launcher.adopt`).
        """
        self.launcher.touch_alive()
        for outcome in await self.launcher.adopt():
            self._outbox[outcome.job_id] = outcome
        self.steps.adopt()

    def start(self) -> None:
        """Report ended jobs and steps in the background (after :meth:`adopt`)."""
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._report_loop(), name="reporter")]
        self._outbox_event.set()

    async def stop(self) -> None:
        """Stop talking to the controller (running steps are left running)."""
        background = (*self._tasks, *self._kills, *self._alloc_prologs)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await self.scripts.close()
        await self.launcher.close()

    def reconfigure(self, conf: SlurmConfig) -> None:
        """Run with a re-read slurm.conf: its Prolog, Epilog, Task programs, KillWait...

        Args:
            conf: the configuration.
        """
        self.settings = replace(self.settings, conf=conf)
        self.scripts.reconfigure(conf.prolog, conf.epilog, conf.prolog_wait, conf.epilog_wait)
        self.steps.facts = replace(
            self.steps.facts,
            kill_wait=conf.kill_wait,
            acct_freq=conf.job_acct_gather_frequency,
            task_prolog=conf.task_prolog,
            task_epilog=conf.task_epilog,
            enforce_memory=conf.enforce_memory or self.settings.cgroup_memory_missed,
        )

    def _node_context(self, conf_path: str) -> jobenv.NodeContext:
        host, _, port = self.settings.controller.rpartition(":")
        return jobenv.NodeContext(
            node_name=self.settings.node_name,
            hostname=self.resources.hostname,
            cluster=self.settings.conf.cluster_name,
            conf_path=conf_path,
            controller_host=host,
            controller_port=int(port or 0),
        )

    # ------------------------------------------------------------ Prolog and Epilog

    async def _prolog(self, job: Job) -> bool:
        """Run the node's Prolog for this run of the job (once); whether the job may start."""
        return await self.scripts.prolog(jobenv.script_job(job, self.settings.node_name))

    def run_prolog(self, job: pb.ScriptJob) -> None:
        """PrologFlags=Alloc: run the Prolog for a job just allocated, in the background.

        Launches of the job here wait for it; a failure is told to the controller.

        Args:
            job: the job as its Prolog sees it.
        """
        brief = convert.record(ScriptJob, job)
        task = asyncio.get_running_loop().create_task(self.scripts.prolog(brief))
        self._alloc_prologs.add(task)
        task.add_done_callback(self._alloc_prologs.discard)

    def _script_failed(self, job: ScriptJob, script: str, failure: ScriptFailure) -> None:
        """Tell the controller (until it acknowledges): it drains the node."""
        self._script_outbox[(job.job_id, job.restarts, script)] = pb.NodeScriptFailedRequest(
            node=self.settings.node_name,
            job_id=job.job_id,
            restarts=job.restarts,
            script=script,
            exit_code=failure.exit_code,
            signal=failure.signal,
            timed_out=failure.timed_out,
        )
        self._outbox_event.set()

    async def _job_gone(self, job_id: int, steps_grace: float | None = None) -> None:
        """Wait until nothing of a job runs here (its steps: ``steps_grace`` seconds at most)."""
        deadline = None if steps_grace is None else time.monotonic() + steps_grace
        while job_id in self.launcher.running or (
            self.steps.of_job(job_id) and (deadline is None or time.monotonic() < deadline)
        ):
            await asyncio.sleep(JOB_GONE_POLL)

    # ------------------------------------------------------------ controller

    def _running_jobs(self) -> list[int]:
        """Jobs with a batch script or a step running here.

        A job of srun alone has only steps here: a restarted slurmd that
        adopted one must name it too, or the controller, which may have ended
        the job meanwhile, would never have its step killed.
        """
        return sorted({*self.launcher.running, *(job for job, _ in self.steps.sessions)})

    def registration(self, port: int) -> pb.RegisterNodeRequest:
        """What this node tells the controller when it (re)registers.

        Args:
            port: the port its slurmd serves on.

        Returns:
            The node's part of a ``RegisterNodes`` call.
        """
        res = self.resources
        jobs = [pb.AgentJob(job_id=i, running=True) for i in self._running_jobs()]
        jobs += [
            pb.AgentJob(job_id=o.job_id, running=False, status=status_message(o))
            for o in self._outbox.values()
        ]
        return pb.RegisterNodeRequest(
            name=self.settings.node_name,
            addr=self.settings.advertise_addr,
            port=port,
            hostname=res.hostname,
            cpus=res.cpus,
            real_memory=res.real_memory,
            gpus=res.gpus,
            arch=res.arch,
            os=res.os,
            boot_time=int(self.boot_time),
            slurmd_start_time=int(self.start_time),
            version=SLURM_VERSION,
            jobs=jobs,
            sockets=res.sockets,
            cores_per_socket=res.cores_per_socket,
            threads_per_core=res.threads_per_core,
            gpu_links=res.gpu_links,
        )

    def accepted(self, reply: pb.RegisterNodeReply) -> None:
        """The controller took this node's registration: kill what it does not know.

        Args:
            reply: the node's part of the reply.
        """
        self.registered = True
        for job_id in reply.kill_job_ids:
            log.info("job=%d unknown to the controller: killing it", job_id)
            self._terminate(job_id, "CANCELLED", self.settings.conf.kill_wait, time.time())

    def heartbeat(
        self, load: float, free_memory: int, gpus: tuple[float, int] | None = None
    ) -> pb.HeartbeatRequest:
        """This node's part of a ``Heartbeats`` call.

        Args:
            load: the host's load average.
            free_memory: its free memory (MiB).
            gpus: its GPUs' mean utilization (%) and memory in use (MiB), when measured.

        Returns:
            The message.
        """
        request = pb.HeartbeatRequest(
            name=self.settings.node_name,
            cpu_load=load,
            free_memory=free_memory,
            running_job_ids=self._running_jobs(),
        )
        if gpus is not None:
            request.gpus_measured = True
            request.gpu_util, request.gpu_memory_used = gpus
        return request

    def gpu_usage(self) -> tuple[float, int] | None:
        """The node's GPUs now: mean utilization (%) and memory in use (MiB); None: unmeasured.

        It may run nvidia-smi: call it off the event loop.
        """
        source, gpus = self.steps.facts.gpu_usage, self.resources.gpus
        if not source or not gpus:
            return None
        found = gpuusage.sample(source, gpus)
        return sum(u for u, _ in found.values()) / len(found), sum(m for _, m in found.values())

    def _step_ended(self, outcome: StepOutcome) -> None:
        log.info(
            "job=%d ended exit=%d signal=%d %s %s",
            outcome.job_id,
            outcome.exit_code,
            outcome.signal,
            outcome.outcome,
            outcome.message,
        )
        self._remove_cgroups(outcome.job_id)
        brief = self._script_jobs.pop(outcome.job_id, None)
        if brief is None or not self.scripts.has_epilog:
            self._report_end(outcome)
            return
        # The batch host's Epilog runs before the job's end is told: once the
        # controller hears of it, the job is over everywhere.
        ended = replace(brief, exit_code=outcome.exit_code, signal=outcome.signal)
        epilog = self.scripts.epilog(ended, self._job_gone(outcome.job_id, STEP_GRACE))
        epilog.add_done_callback(lambda _: self._report_end(outcome))

    def _report_end(self, outcome: StepOutcome) -> None:
        self._outbox[outcome.job_id] = outcome
        self._outbox_event.set()

    async def _report_loop(self) -> None:
        """Deliver ended jobs' and steps' outcomes until the controller acknowledges each."""
        delay = 0.05
        while True:
            await self._outbox_event.wait()
            self._outbox_event.clear()
            while self._outbox or self._step_outbox or self._script_outbox:
                try:
                    await self._report_one()
                except grpc.aio.AioRpcError as err:
                    log.debug("report failed: %s", err.details())
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RETRY_MAX_SECONDS)
                    continue
                delay = 0.05

    async def _report_one(self) -> None:
        """Deliver one outcome: steps' first, as a job's steps end before it.

        A batch script's last step may end a few milliseconds before the
        script; were the job's end reported first, the controller would
        cancel that step (it is still running for it) and drop its exit. So
        a job's end also waits, up to ``STEP_GRACE``, for its steps still
        running here.
        """
        if self._script_outbox:
            failed_key, failure = next(iter(self._script_outbox.items()))
            await self._ctld.NodeScriptFailed(failure, timeout=CALL_TIMEOUT)
            del self._script_outbox[failed_key]
            return
        if self._step_outbox:
            key, report = next(iter(self._step_outbox.items()))
            await self._ctld.StepComplete(report, timeout=CALL_TIMEOUT)
            del self._step_outbox[key]
            shutil.rmtree(self.steps.step_dir(*key), ignore_errors=True)
            return
        job_id, outcome = next(iter(self._outbox.items()))
        since = self._held.setdefault(job_id, time.monotonic())
        if self.steps.of_job(job_id) and time.monotonic() < since + STEP_GRACE:
            await asyncio.sleep(0.01)
            return
        status = status_message(outcome)
        status.usage.extend(final_usage(self.launcher.jobdir(job_id)))
        request = pb.JobCompleteRequest(node=self.settings.node_name, status=status)
        await self._ctld.JobComplete(request, timeout=CALL_TIMEOUT)
        self._outbox.pop(job_id, None)
        self._held.pop(job_id, None)
        self.launcher.forget(job_id)

    def _step_done(self, report: pb.StepCompleteRequest) -> None:
        self._step_outbox[(report.job_id, report.step_id)] = report
        self._outbox_event.set()

    # ------------------------------------------------------------ requests from the controller

    async def launch_batch(self, request: pb.BatchLaunchRequest) -> None:
        """Start a job's batch script on this node, after the node's Prolog.

        A Prolog that fails is told to the controller, which requeues the
        job: the launch itself is acknowledged.

        Args:
            request: the job, its script and environment.

        Raises:
            PermissionError: the job's user is not ours and we are not root.
            OSError: the spool or stepd could not be set up.
        """
        job = convert.job_from_info(request.job, request.spec)
        if self.launcher.knows(job.job_id, job.restarts):
            return
        if os.getuid() not in (0, job.uid):
            raise PermissionError(
                f"slurmd runs as uid {os.getuid()} and cannot run jobs of uid {job.uid}"
            )
        if not await self._prolog(job) or self.launcher.knows(job.job_id, job.restarts):
            return
        self._outbox.pop(job.job_id, None)  # an earlier run's report, if any: stale
        self._held.pop(job.job_id, None)
        self._script_jobs[job.job_id] = jobenv.script_job(job, self.settings.node_name)
        node, facts = self.settings.node_name, self.steps.facts
        ctx = jobenv.NodeContext(
            node_name=node,
            hostname=self.resources.hostname,
            cluster=request.cluster,
            conf_path=request.conf_path,
            controller_host=request.controller.rpartition(":")[0],
            controller_port=int(request.controller.rpartition(":")[2] or 0),
            topology_addr=self.steps.facts.topology_addr,
        )
        env = jobenv.batch_environment(dict(request.spec.environment), job, ctx)
        stdout, stderr, stdin = convert.std_paths(job, node)
        job_file = spool.BatchJob(
            job_id=job.job_id,
            uid=job.uid,
            gid=job.gid,
            user=job.user,
            umask=request.spec.umask,
            argv=tuple(request.spec.argv),
            env=env,
            work_dir=job.work_dir,
            stdout=stdout,
            stderr=stderr,
            stdin=stdin,
            node=node,
            kill_wait=request.kill_wait,
            acct_freq=self.settings.conf.job_acct_gather_frequency,
            open_mode=request.spec.open_mode,
            restarts=job.restarts,
            alive_file=self.launcher.alive_file,
            fence_after=float(self.settings.conf.slurmd_timeout),
            hosts_file=self.hosts_file,
            task_prolog=facts.task_prolog,
            task_epilog=facts.task_epilog,
            mem_limit=job_memory(job, node) if facts.enforce_memory else 0,
            gpu_usage=facts.gpu_usage,
            cgroup=confinement(facts, job, "batch"),
        )
        self.launcher.launch(job_file, request.spec.script)

    def terminate_job(self, request: pb.TerminateJobRequest) -> None:
        """Kill everything of a job on this node: its batch script and its steps; then its Epilog.

        Args:
            request: the job, why, how long to wait before SIGKILL, and (with
                an Epilog) the job as the Epilog sees it.
        """
        self._terminate(request.job_id, request.outcome, request.kill_wait, float(request.time))
        self._remove_cgroups(request.job_id)
        if request.HasField("job"):
            brief = convert.record(ScriptJob, request.job)
            self.scripts.epilog(brief, self._job_gone(request.job_id))

    def _terminate(self, job_id: int, outcome: str, kill_wait: int, when: float) -> None:
        # As Slurm's slurmd: the sruns hear that the job is aborted, then the batch
        # script and the steps get SIGTERM together. Here the steps' comes once the
        # script's has been sent: an srun whose tasks ended first would otherwise
        # return to a script that runs on, and not say "forcing job termination".
        self.steps.abort_job(job_id, spool.Terminate(outcome, kill_wait, when))
        if not self.launcher.terminate(job_id, outcome, kill_wait, when):
            self.steps.kill_job(job_id)
            return

        async def steps_after_script() -> None:
            await self.launcher.killing(job_id)
            self.steps.kill_job(job_id)

        task = asyncio.get_running_loop().create_task(steps_after_script())
        self._kills.add(task)
        task.add_done_callback(self._kills.discard)

    def _remove_cgroups(self, job_id: int) -> None:
        """Remove a job's cgroups here once nothing of it runs (TaskPlugin=task/cgroup)."""
        tree = self.settings.cgroups
        if tree is None:
            return

        async def when_gone() -> None:
            await self._job_gone(job_id, STEP_GRACE)
            deadline = time.monotonic() + CGROUP_GRACE
            while not tree.remove_job(job_id) and time.monotonic() < deadline:
                await asyncio.sleep(JOB_GONE_POLL)  # a stepd still exiting holds its own

        task = asyncio.get_running_loop().create_task(when_gone())
        self._kills.add(task)
        task.add_done_callback(self._kills.discard)

    def step_stat(self, request: pb.NodeStepStatRequest) -> pb.StepStatReply:
        """sstat: the live usage of a step's tasks on this node.

        Args:
            request: the job and step (BATCH_STEP: the batch script).

        Returns:
            This node's figures, or no node when the step does not run here.
        """
        if request.step_id == BATCH_STEP:
            stepdir = self.launcher.jobdir(request.job_id)
        else:
            stepdir = self.steps.step_dir(request.job_id, request.step_id)
        stat = node_stat(stepdir, self.settings.node_name)
        return pb.StepStatReply(nodes=[stat] if stat is not None else [])

    def signal_job(self, request: pb.SignalJobRequest) -> None:
        """scancel --signal: the job's steps, and the batch shell with -b or -f.

        Args:
            request: the job, the signal and the scope.
        """
        self.launcher.signal_job(request.job_id, request.signal, request.batch_only, request.full)
        if not request.batch_only:
            for session in self.steps.of_job(request.job_id):
                session.signal(request.signal)
