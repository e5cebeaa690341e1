"""The NodeAgent gRPC service: what the controller asks of a node.

Thin handlers over the :class:`~nodeagent.agent.Agent` of the node each
request names (one slurmd may serve many); every request is idempotent,
because the controller retries after a lost reply.

Imports nodeagent.slurmd, nodeagent.agent, nodeagent.launcher and minislurm.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import grpc

from minislurm.errors import ConfigError, CredentialError, PrologFailed
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc
from nodeagent.agent import Agent
from nodeagent.launcher import EarlierRunRunning
from nodeagent.slurmd import Slurmd
from nodeagent.stepio import StepdError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    Ctx = grpc.aio.ServicerContext[Any, Any]

# srun's calls: each carries a step credential the handler checks. Every other
# method is the controller's (minislurm.security.authgrpc checks its credential).
STEP_METHODS = frozenset({"LaunchTasks", "TaskInput", "SignalTasks", "AttachStep"})
CONTROLLER_METHODS = frozenset(
    {
        "LaunchBatch",
        "SignalJob",
        "TerminateJob",
        "Ping",
        "StepStat",
        "RebootNode",
        "Reconfigure",
        "RunProlog",
    }
)


class NodeAgentServicer(pb_grpc.NodeAgentServicer):  # type: ignore[misc]  # generated base is untyped
    """Serves the controller and srun, for every node of the process."""

    def __init__(self, slurmd: Slurmd) -> None:
        self.slurmd = slurmd

    async def _agent(self, node: str, context: Ctx) -> Agent:
        """The agent of the node a request names; NOT_FOUND when it is not served here."""
        agent = self.slurmd.agent(node)
        if agent is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"node {node!r} is not served here")
        assert agent is not None  # abort raises
        return agent

    async def LaunchBatch(
        self, request: pb.BatchLaunchRequest, context: Ctx
    ) -> pb.BatchLaunchReply:
        agent = await self._agent(request.node, context)
        try:
            await agent.launch_batch(request)
        except EarlierRunRunning as err:  # the controller tries again
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(err))
        except PermissionError as err:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(err))
        except (OSError, ValueError) as err:
            log.exception("job=%d launch failed", request.job.job_id)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"launch failed: {err}")
        return pb.BatchLaunchReply()

    async def TerminateJob(
        self, request: pb.TerminateJobRequest, context: Ctx
    ) -> pb.TerminateJobReply:
        (await self._agent(request.node, context)).terminate_job(request)
        return pb.TerminateJobReply()

    async def SignalJob(self, request: pb.SignalJobRequest, context: Ctx) -> pb.SignalJobReply:
        (await self._agent(request.node, context)).signal_job(request)
        return pb.SignalJobReply()

    async def StepStat(self, request: pb.NodeStepStatRequest, context: Ctx) -> pb.StepStatReply:
        agent = await self._agent(request.node, context)
        return await asyncio.to_thread(agent.step_stat, request)

    async def Ping(self, request: pb.AgentPingRequest, context: Ctx) -> pb.AgentPingReply:
        agent = await self._agent(request.node, context)
        return pb.AgentPingReply(name=agent.settings.node_name)

    async def RunProlog(self, request: pb.RunPrologRequest, context: Ctx) -> pb.RunPrologReply:
        (await self._agent(request.node, context)).run_prolog(request.job)
        return pb.RunPrologReply()

    async def Reconfigure(
        self, request: pb.ReconfigureAgentRequest, context: Ctx
    ) -> pb.ReconfigureAgentReply:
        await self._agent(request.node, context)
        try:
            self.slurmd.reconfigure()
        except ConfigError as err:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(err))
        return pb.ReconfigureAgentReply()

    async def RebootNode(self, request: pb.RebootNodeRequest, context: Ctx) -> pb.RebootNodeReply:
        self.slurmd.reboot(await self._agent(request.node, context))
        return pb.RebootNodeReply()

    async def LaunchTasks(
        self, request: pb.LaunchTasksRequest, context: Ctx
    ) -> AsyncIterator[pb.TaskEvent]:
        agent = await self._agent(request.node, context)
        try:
            async for event in agent.steps.launch(request):
                yield event
        except (CredentialError, PermissionError) as err:
            log.warning("step=%d.%d refused: %s", request.job_id, request.step_id, err)
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(err))
        except PrologFailed as err:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(err))
        except (StepdError, OSError, ValueError) as err:
            log.exception("step=%d.%d launch failed", request.job_id, request.step_id)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"launch failed: {err}")

    async def AttachStep(
        self, request: pb.AttachStepRequest, context: Ctx
    ) -> AsyncIterator[pb.TaskEvent]:
        agent = await self._agent(request.node, context)
        try:
            async for event in agent.steps.attach(request):
                yield event
        except CredentialError as err:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(err))
        except LookupError as err:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(err))

    async def TaskInput(self, request: pb.TaskInputRequest, context: Ctx) -> pb.TaskInputReply:
        agent = await self._agent(request.node, context)
        try:
            await agent.steps.task_input(request)
        except CredentialError as err:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(err))
        except ValueError as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        return pb.TaskInputReply()

    async def SignalTasks(
        self, request: pb.SignalTasksRequest, context: Ctx
    ) -> pb.SignalTasksReply:
        agent = await self._agent(request.node, context)
        try:
            await agent.steps.signal_tasks(request)
        except CredentialError as err:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(err))
        return pb.SignalTasksReply()
