"""The SlurmController gRPC service: thin handlers over :class:`Controller`.

Each handler converts the request, calls the controller and converts the
reply; domain errors become gRPC statuses in ``ctld/errors.py``. Accounting
reads the database in a transaction of its own (``sessions``), as the
records outlive the controller's memory of the jobs.

Imports ctld.controller, ctld.accounting.query and minislurm.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from sqlalchemy.orm import Session, sessionmaker

from ctld import tokens
from ctld.accounting.query import accounting_records
from ctld.accounting.show import assoc_listing, priorities
from ctld.arrays import task_label
from ctld.confshow import config_entries
from ctld.controller import Controller
from ctld.diag import CallCount, RpcStats
from ctld.errors import grpc_errors
from ctld.leadership import Role
from ctld.state import NodeUsage
from minislurm import VERSION_LINE
from minislurm import requests as rq
from minislurm.errors import ConfigError, InvalidRequest, PermissionDenied
from minislurm.security.authgrpc import caller_uid
from minislurm.states import JobState
from minislurm.wire import convert
from minislurm.wire.ctlclient import STANDBY
from minislurm.wire.jobinfos import JobInfos
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    Ctx = grpc.aio.ServicerContext[Any, Any]

K = TypeVar("K")

# Methods only node agents (root or SlurmUser) may call; minislurm.security.authgrpc enforces it.
# Takeover (scontrol takeover) is root's and SlurmUser's too: a standby knows no accounts.
DAEMON_ONLY = frozenset(
    {"RegisterNodes", "Heartbeats", "JobComplete", "NodeScriptFailed", "StepComplete", "Takeover"}
)
TAKEOVER_SECONDS = 30.0  # how long a Takeover waits for the role (the primary's transactions)


class AgentCalls:
    """The calls node agents make: registrations, heartbeats, and the ends they report."""

    ctl: Controller

    @grpc_errors
    async def RegisterNodes(
        self, request: pb.RegisterNodesRequest, context: Ctx
    ) -> pb.RegisterNodesReply:
        registrations = [convert.record(rq.Registration, node) for node in request.nodes]
        kills, interval = self.ctl.nodes.register(registrations)
        return pb.RegisterNodesReply(
            nodes=[pb.RegisterNodeReply(kill_job_ids=k, heartbeat_interval=interval) for k in kills]
        )

    @grpc_errors
    async def Heartbeats(self, request: pb.HeartbeatsRequest, context: Ctx) -> pb.HeartbeatsReply:
        beats = [convert.record(rq.Heartbeat, node) for node in request.nodes]
        return pb.HeartbeatsReply(
            nodes=[
                pb.HeartbeatReply(reregister=a.reregister, state=a.state, drained=a.drained)
                for a in self.ctl.nodes.heartbeat(beats)
            ]
        )

    @grpc_errors
    async def JobComplete(
        self, request: pb.JobCompleteRequest, context: Ctx
    ) -> pb.JobCompleteReply:
        await self.ctl.jobs.batch_ended(request.node, convert.record(rq.JobStatus, request.status))
        return pb.JobCompleteReply()

    @grpc_errors
    async def NodeScriptFailed(
        self, request: pb.NodeScriptFailedRequest, context: Ctx
    ) -> pb.NodeScriptFailedReply:
        failure = convert.record(rq.NodeScriptFailure, request)
        self.ctl.nodes.script_failed(failure, caller_uid())
        return pb.NodeScriptFailedReply()

    @grpc_errors
    async def StepComplete(
        self, request: pb.StepCompleteRequest, context: Ctx
    ) -> pb.StepCompleteReply:
        await self.ctl.steps.step_complete(convert.record(rq.StepEnd, request))
        return pb.StepCompleteReply()


class SlurmControllerServicer(AgentCalls, pb_grpc.SlurmControllerServicer):  # type: ignore[misc]  # generated base is untyped
    """Serves commands and node agents."""

    def __init__(
        self,
        controller: Controller,
        sessions: sessionmaker[Session],
        rpc_stats: RpcStats,
        gate: StandbyGate,
        role: Role | None = None,
    ) -> None:
        self.ctl = controller
        self.rpc_stats = rpc_stats  # sdiag's RPC counts
        self.sessions = sessions  # read transactions of our own (accounting)
        self.gate = gate  # open once this controller is in control
        self.role = role  # None: the only controller, over SQLite
        self.infos = JobInfos(
            controller.state.jobs, controller.ranking.priority, controller.jobs.expected_start
        )
        self.serving = True

    @grpc_errors
    async def SubmitJob(self, request: pb.SubmitJobRequest, context: Ctx) -> pb.SubmitJobReply:
        spec = convert.record(rq.Submission, request.spec)
        if spec.test_only:
            job, start, alloc = self.ctl.jobs.test_submit(spec)
            info = convert.job_info(replace(job, allocation=alloc), 0, time.time())
            reply = pb.SubmitJobReply(job_id=job.job_id, expected_start=int(start), job=info)
            reply.cluster = self.ctl.conf.cluster_name
            return reply
        job_id = await self.ctl.jobs.submit(spec)
        reply = pb.SubmitJobReply(job_id=job_id, cluster=self.ctl.conf.cluster_name)
        if not spec.batch:
            # Interactive allocations are tried on submission, as Slurm does, by an event
            # pass: at the top of the queue, one that fits starts now; a backfill start
            # waits for the full pass that the submission's kick brings on.
            self.ctl.scheduler.run_pass(full=False)
            now = time.time()
            job = self.ctl.state.jobs[job_id]
            reply.job.CopyFrom(
                convert.job_info(
                    job, self.ctl.ranking.priority(job, now), now, self.ctl.jobs.expected_start(job)
                )
            )
        return reply

    @grpc_errors
    async def GetJobs(self, request: pb.GetJobsRequest, context: Ctx) -> pb.GetJobsReply:
        now = time.time()
        reply = pb.GetJobsReply(now=int(now))
        self.infos.add(
            reply.jobs, self.ctl.jobs.find_jobs(convert.record(rq.JobQuery, request)), now
        )
        return reply

    @grpc_errors
    async def CancelJobs(self, request: pb.CancelJobsRequest, context: Ctx) -> pb.CancelJobsReply:
        results = self.ctl.jobs.cancel(convert.record(rq.CancelRequest, request))
        return pb.CancelJobsReply(
            results=[pb.JobResult(job_id=i, ref=r, error=e) for i, r, e in results]
        )

    @grpc_errors
    async def HoldJobs(self, request: pb.HoldJobsRequest, context: Ctx) -> pb.HoldJobsReply:
        results = self.ctl.jobs.hold(convert.record(rq.HoldRequest, request))
        jobs = self.ctl.state.jobs
        return pb.HoldJobsReply(
            results=[
                pb.JobResult(job_id=i, ref=r, error=e, array_ref=task_label(jobs.get(i)))
                for i, r, e in results
            ]
        )

    @grpc_errors
    async def UpdateJob(self, request: pb.UpdateJobRequest, context: Ctx) -> pb.UpdateJobReply:
        self.ctl.jobs.update_job(convert.record(rq.JobUpdate, request))
        return pb.UpdateJobReply()

    @grpc_errors
    async def GetNodes(self, request: pb.GetNodesRequest, context: Ctx) -> pb.GetNodesReply:
        usage = self.ctl.nodes.node_usage()
        wanted = set(request.names)
        empty = NodeUsage()
        topology = self.ctl.conf.topology
        nodes = []
        for node in self.ctl.state.nodes.values():
            if wanted and node.name not in wanted:
                continue
            used = usage.get(node.name, empty)
            info = convert.node_info(node, used.cpus, used.mem, len(used.gpus))
            if topology is not None:
                info.topology = topology.unit_of(node.name)
            nodes.append(info)
        return pb.GetNodesReply(nodes=nodes, now=int(time.time()))

    @grpc_errors
    async def UpdateNode(self, request: pb.UpdateNodeRequest, context: Ctx) -> pb.UpdateNodeReply:
        self.ctl.nodes.update_node(convert.record(rq.NodeUpdate, request))
        return pb.UpdateNodeReply()

    @grpc_errors
    async def GetPartitions(
        self, request: pb.GetPartitionsRequest, context: Ctx
    ) -> pb.GetPartitionsReply:
        wanted = set(request.names)
        parts = [
            convert.partition_info(p, self.ctl.state.nodes, self.ctl.conf.preempt_mode)
            for p in self.ctl.state.partitions.values()
            if not wanted or p.name in wanted
        ]
        return pb.GetPartitionsReply(partitions=parts)

    @grpc_errors
    async def GetConfig(self, request: pb.GetConfigRequest, context: Ctx) -> pb.GetConfigReply:
        entries = [
            pb.ConfigEntry(key=k, value=v)
            for k, v in config_entries(self.ctl.conf, self.ctl.settings.port, self.ctl.metrics_port)
        ]
        return pb.GetConfigReply(entries=entries)

    @grpc_errors
    async def GetTopology(
        self, request: pb.GetTopologyRequest, context: Ctx
    ) -> pb.GetTopologyReply:
        conf = self.ctl.conf
        units = convert.topology_units(conf.topology)
        return pb.GetTopologyReply(plugin=conf.topology_plugin, units=units)

    async def Ping(self, request: pb.PingRequest, context: Ctx) -> pb.PingReply:
        if not self.serving:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "slurmctld is shutting down")
        return pb.PingReply(
            cluster=self.ctl.conf.cluster_name,
            version=VERSION_LINE,
            now=int(time.time()),
            role="primary" if self.gate.serving else "backup",
            host=self.ctl.settings.host,
        )

    @grpc_errors
    async def Takeover(self, request: pb.TakeoverRequest, context: Ctx) -> pb.TakeoverReply:
        if self.role is None:
            raise InvalidRequest("no backup controller is configured (one SlurmctldHost)")
        if not await self.role.take_over(TAKEOVER_SECONDS):
            raise InvalidRequest("the controller's role could not be taken: try again")
        return pb.TakeoverReply()

    @grpc_errors
    async def Reconfigure(
        self, request: pb.ReconfigureRequest, context: Ctx
    ) -> pb.ReconfigureReply:
        if not self.ctl.accounting.privileges.is_admin(request.requester_uid):
            raise PermissionDenied("Access/permission denied")
        try:
            waiting = self.ctl.reconfigure()
        except ConfigError as err:
            raise InvalidRequest(str(err)) from None
        return pb.ReconfigureReply(restart_needed=waiting)

    @grpc_errors
    async def GetToken(self, request: pb.GetTokenRequest, context: Ctx) -> pb.GetTokenReply:
        token = tokens.issue(
            self.ctl.settings.cluster_key,
            self.ctl.settings.operators,
            request.requester_uid,
            request.username,
            request.lifespan,
            time.time(),
        )
        return pb.GetTokenReply(token=token)

    @grpc_errors
    async def GetStats(self, request: pb.GetStatsRequest, context: Ctx) -> pb.GetStatsReply:
        if request.reset:
            if request.requester_uid not in self.ctl.accounting.privileges:
                raise PermissionDenied("Access/permission denied")
            self.ctl.reset_statistics()
            self.rpc_stats.reset()
        full, event = self.ctl.scheduler.full_stats, self.ctl.scheduler.event_stats
        tally = self.ctl.ledger.tally
        states = Counter(job.state for job in self.ctl.state.jobs.values())
        return pb.GetStatsReply(
            sched_cycle_last_us=_us(event.last),
            sched_cycle_max_us=_us(event.longest),
            sched_cycle_sum_us=_us(event.total),
            sched_cycle_count=event.count,
            bf_cycle_last_us=_us(full.last),
            bf_cycle_max_us=_us(full.longest),
            bf_cycle_sum_us=_us(full.total),
            bf_cycle_count=full.count,
            server_start=int(self.ctl.stats_since),
            jobs_submitted=tally.submitted,
            jobs_started=tally.started,
            jobs_completed=tally.completed,
            jobs_canceled=tally.canceled,
            jobs_failed=tally.failed,
            jobs_pending=states[JobState.PENDING],
            jobs_running=states[JobState.RUNNING],
            now=int(time.time()),
            rpcs_by_type=[
                pb.RpcCount(name=name, count=c.count, total_us=_us(c.seconds))
                for name, c in _most_first(self.rpc_stats.by_method)
            ],
            rpcs_by_user=[
                pb.RpcCount(uid=uid, count=c.count, total_us=_us(c.seconds))
                for uid, c in _most_first(self.rpc_stats.by_uid)
            ],
        )

    @grpc_errors
    async def CreateStep(self, request: pb.CreateStepRequest, context: Ctx) -> pb.CreateStepReply:
        spec = convert.record(rq.StepRequest, request.spec)
        step, job = await self.ctl.steps.create_step_patiently(spec)
        info = convert.step_info(step, self.ctl.runner.addresses())
        now = step.start_time
        return pb.CreateStepReply(
            step=info,
            credential=convert.credential(info, job, self.ctl.settings.cluster_key, now),
            job=convert.job_info(job, 0, now),
        )

    @grpc_errors
    async def EndStep(self, request: pb.EndStepRequest, context: Ctx) -> pb.EndStepReply:
        self.ctl.steps.end_unstarted(convert.record(rq.StepAbort, request))
        return pb.EndStepReply()

    @grpc_errors
    async def GetSteps(self, request: pb.GetStepsRequest, context: Ctx) -> pb.GetStepsReply:
        now, cluster = int(time.time()), self.ctl.conf.cluster_name
        if request.running:
            listed = [convert.message(s) for s in self.ctl.steps.step_list(request.job_id)]
            return pb.GetStepsReply(steps=listed, now=now, cluster=cluster)
        addresses = self.ctl.runner.addresses()
        steps = [convert.step_info(s, addresses) for s in self.ctl.steps.steps_of(request.job_id)]
        return pb.GetStepsReply(steps=steps, now=now, cluster=cluster)

    @grpc_errors
    async def GetStepStats(self, request: pb.StepStatRequest, context: Ctx) -> pb.StepStatReply:
        nodes = await self.ctl.steps.step_stats(convert.record(rq.StepStatQuery, request))
        return pb.StepStatReply(nodes=[convert.message(n) for n in nodes])

    @grpc_errors
    async def CompleteJob(
        self, request: pb.CompleteJobRequest, context: Ctx
    ) -> pb.CompleteJobReply:
        await self.ctl.jobs.release_job(convert.record(rq.JobRelease, request))
        return pb.CompleteJobReply()

    @grpc_errors
    async def GetAccounting(
        self, request: pb.GetAccountingRequest, context: Ctx
    ) -> pb.GetAccountingReply:
        now = time.time()
        # A thread of its own: a long history takes seconds to read, during which the
        # event loop must go on (heartbeats, scheduling). WAL lets it read beside writes.
        query = convert.record(rq.AcctQuery, request)
        records = await asyncio.to_thread(self._accounting, query, now)
        return pb.GetAccountingReply(records=records, now=int(now))

    def _accounting(self, query: rq.AcctQuery, now: float) -> list[pb.AcctRecord]:
        with self.sessions() as session, session.begin():
            records = accounting_records(session, query, now, self.ctl.conf.cluster_name)
        return [convert.message(r) for r in records]

    @grpc_errors
    async def ManageAssoc(
        self, request: pb.ManageAssocRequest, context: Ctx
    ) -> pb.ManageAssocReply:
        change = convert.record(rq.AssocChange, request)
        lines = self.ctl.accounting.manage(change, self.ctl.state.jobs.values())
        self.ctl.scheduler.kick()
        return pb.ManageAssocReply(lines=lines)

    @grpc_errors
    async def GetAssocs(self, request: pb.GetAssocsRequest, context: Ctx) -> pb.GetAssocsReply:
        self.ctl.ranking.charge_usage(time.time())
        reply: pb.GetAssocsReply = convert.message(
            assoc_listing(self.ctl.accounting, self.ctl.conf.cluster_name)
        )
        return reply

    @grpc_errors
    async def GetPriorities(
        self, request: pb.GetPrioritiesRequest, context: Ctx
    ) -> pb.GetPrioritiesReply:
        now = time.time()
        self.ctl.ranking.charge_usage(now)
        jobs = self.ctl.state.jobs.values()
        infos, weights = priorities(
            jobs, lambda j: self.ctl.ranking.factors(j, now), self.ctl.weights
        )
        return pb.GetPrioritiesReply(jobs=[convert.message(i) for i in infos], weights=weights)

    @grpc_errors
    async def ManageReservation(
        self, request: pb.ManageReservationRequest, context: Ctx
    ) -> pb.ManageReservationReply:
        accounts = self.ctl.accounting.book.accounts
        change = convert.record(rq.ResvChange, request)
        name = self.ctl.resvs.manage(change, accounts, time.time())
        self.ctl.scheduler.kick()
        return pb.ManageReservationReply(name=name)

    @grpc_errors
    async def GetReservations(
        self, request: pb.GetReservationsRequest, context: Ctx
    ) -> pb.GetReservationsReply:
        now = time.time()
        infos = self.ctl.resvs.infos(set(request.names))
        reservations = [convert.message(i) for i in infos]
        return pb.GetReservationsReply(reservations=reservations, now=int(now))

    @grpc_errors
    async def WaitJob(self, request: pb.WaitJobRequest, context: Ctx) -> pb.WaitJobReply:
        now = time.time()
        timeout = min(request.timeout or 30.0, 300.0)
        job = await self.ctl.jobs.wait_job(request.job_id, timeout, request.until_ended)
        return pb.WaitJobReply(job=convert.job_info(job, self.ctl.ranking.priority(job, now), now))


def _us(seconds: float) -> int:
    return round(seconds * 1e6)


def _most_first(table: Mapping[K, CallCount]) -> list[tuple[K, CallCount]]:
    return sorted(table.items(), key=lambda item: -item[1].count)


class StandbyGate(grpc.aio.ServerInterceptor):
    """Refuses every call but Ping and Takeover until the controller is in control.

    A standby (or a controller still loading, or one that has lost the role)
    answers UNAVAILABLE with :data:`~minislurm.wire.ctlclient.STANDBY`, before
    doing anything: the caller tries the next controller.
    """

    OPEN = frozenset({"Ping", "Takeover"})

    def __init__(self) -> None:
        self.serving = False

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        """Pass the call on, or answer it as a standby."""
        if self.serving or details.method.rsplit("/", 1)[-1] in self.OPEN:
            return await continuation(details)
        return _REFUSED


async def _refuse(request: bytes, context: Ctx) -> None:
    await context.abort(grpc.StatusCode.UNAVAILABLE, STANDBY)


_REFUSED: grpc.RpcMethodHandler[Any, Any] = grpc.unary_unary_rpc_method_handler(_refuse)


class CallTimer(grpc.aio.ServerInterceptor):
    """Times every call of the service into an :class:`~ctld.diag.RpcStats` (sdiag's RPC lines).

    Placed outside the Authenticator, it times the whole call and, once that
    is done, knows its caller (``caller_uid``).

    Args:
        stats: where the calls are counted.
    """

    def __init__(self, stats: RpcStats) -> None:
        self.stats = stats

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        """Wrap the handler of ``details.method`` in a timer."""
        handler = await continuation(details)
        if handler is None:
            return handler
        name = details.method.rsplit("/", 1)[-1]
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(request: Any, context: Any) -> Any:
                began = time.perf_counter()
                try:
                    return await inner(request, context)
                finally:
                    self.stats.record(name, caller_uid(), time.perf_counter() - began)

            return handler._replace(unary_unary=unary)
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                began = time.perf_counter()
                try:
                    async for reply in inner_stream(request, context):
                        yield reply
                finally:
                    self.stats.record(name, caller_uid(), time.perf_counter() - began)

            return handler._replace(unary_stream=stream)
        return handler
