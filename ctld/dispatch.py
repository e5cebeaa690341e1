"""Calls from the controller to node agents: launch, terminate, signal, step usage.

One gRPC channel per node address. Each call is retried with backoff while
the agent is unreachable, for up to ``give_up_after`` seconds; every call is
idempotent on the agent's side, so a retry after a lost reply is harmless.
The calls take the controller's records and build the agents' messages
here (through :mod:`minislurm.wire.convert`): this is the edge to the
agents, and the one module of ctld below the servicers that speaks protobuf.

Imports ctld.intents and minislurm (the transport and its stubs); no database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import grpc

from ctld.intents import Signal, SignalStep
from minislurm.daemon import GRPC_OPTIONS
from minislurm.jobenv import ScriptJob
from minislurm.model import Job, JobScript, Step
from minislurm.requests import NodeStepStat
from minislurm.security import auth
from minislurm.security.authgrpc import SignCalls
from minislurm.wire import convert, tls
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

T = TypeVar("T")
_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
CALL_TIMEOUT = 10.0
# Launches sent at once, the others wait their turn: a pass may start thousands of jobs,
# and every answer, and every end of a job as short as ``true``, queues on the event loop.
LAUNCHES_AT_ONCE = 32
STAT_PATIENCE = 2.0  # seconds sstat waits for an unreachable agent: it reports what the others have


@dataclass(frozen=True)
class BatchSite:
    """The cluster's side of a batch launch: what the script's environment names."""

    cluster: str  # ClusterName
    controller: str  # the controller's host:port (SLURM_WORKING_CLUSTER)
    conf_path: str  # the slurm.conf path jobs see as SLURM_CONF
    kill_wait: int  # seconds between SIGTERM and SIGKILL


@dataclass(frozen=True)
class StepSigned:
    """What a step credential is made of: the step, its job, the agents, the key, the time."""

    step: Step
    job: Job
    addresses: dict[str, tuple[str, int]]
    key: bytes
    now: float


class AgentUnreachable(Exception):
    """An agent did not answer within the retry budget."""


class AgentDispatcher:
    """Keeps channels to node agents and makes retried calls on them.

    Args:
        signer: makes the credential each call carries (``minislurm.security.auth``).
        give_up_after: seconds to keep retrying an unreachable agent.
        tls_files: the cluster's ``(ca, cert, key)`` under TLS (None: cleartext).
    """

    def __init__(
        self,
        signer: auth.Signer,
        give_up_after: float = 20.0,
        tls_files: tuple[str, str, str] | None = None,
    ) -> None:
        self._tls = tls_files
        # By address, a channel and its stub (made once: making one binds every RPC).
        self._agents: dict[str, tuple[grpc.aio.Channel, pb_grpc.NodeAgentStub]] = {}
        self._give_up_after = give_up_after
        self._sign = SignCalls(signer)
        self._launch_slots = asyncio.Semaphore(LAUNCHES_AT_ONCE)
        self.launches_sending = 0  # launch calls sent or waiting for a slot (not retries' pauses)

    def _stub(self, address: str) -> pb_grpc.NodeAgentStub:
        agent = self._agents.get(address)
        if agent is None:
            channel = tls.aio_channel(address, self._tls, GRPC_OPTIONS, [self._sign])
            agent = self._agents[address] = (channel, pb_grpc.NodeAgentStub(channel))
        return agent[1]

    async def _call(
        self,
        address_of: Callable[[], str | None],
        what: str,
        call: Callable[[pb_grpc.NodeAgentStub], Awaitable[T]],
        patience: float | None = None,
    ) -> T:
        """Call an agent, retrying while it is unreachable (``patience`` seconds at most).

        ``address_of`` is asked again before each try, so a node that
        re-registered at a new address is reached there.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self._give_up_after if patience is None else patience)
        delay = 0.05
        while True:
            address = address_of()
            if address is not None:
                try:
                    return await call(self._stub(address))
                except grpc.aio.AioRpcError as err:
                    if err.code() not in _RETRYABLE:
                        raise
                    log.debug("%s to %s failed: %s", what, address, err.details())
            if loop.time() + delay > deadline:
                raise AgentUnreachable(f"{what}: node agent unreachable")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def launch_batch(
        self,
        node: str,
        address_of: Callable[[], str | None],
        job: Job,
        script: JobScript,
        site: BatchSite,
        patience: float | None = None,
    ) -> None:
        """Ask the batch host's agent to start a job's script.

        Args:
            node: the batch host.
            address_of: returns its agent's current ``host:port`` (None: unknown yet).
            job: the RUNNING job with its allocation.
            script: its script, arguments, environment and umask.
            site: the cluster's side of the launch.
            patience: seconds to keep retrying (default: ``give_up_after``).

        Raises:
            AgentUnreachable: no answer in time.
            grpc.aio.AioRpcError: the agent refused.
        """
        request = convert.launch_request(
            job, script, site.cluster, site.controller, site.conf_path, site.kill_wait
        )
        request.node = node

        async def send(stub: pb_grpc.NodeAgentStub) -> None:
            self.launches_sending += 1
            try:
                async with self._launch_slots:
                    await stub.LaunchBatch(request, timeout=CALL_TIMEOUT)
            finally:
                self.launches_sending -= 1

        await self._call(address_of, f"launch job={job.job_id}", send, patience)

    async def terminate(
        self,
        node: str,
        address_of: Callable[[], str | None],
        job_id: int,
        outcome: str,
        kill_wait: int,
        script_job: ScriptJob | None = None,
    ) -> None:
        """Ask an agent to kill everything of a job on its node (and run its Epilog there).

        Args:
            node: the node.
            address_of: returns its agent's current ``host:port``.
            job_id: the job.
            outcome: why (the state the job ends in).
            kill_wait: seconds between SIGTERM and SIGKILL.
            script_job: the job as the node's Epilog sees it (when there is an Epilog).

        Raises:
            AgentUnreachable: no answer in time.
        """
        request = pb.TerminateJobRequest(
            job_id=job_id, outcome=outcome, kill_wait=kill_wait, time=int(time.time()), node=node
        )
        if script_job is not None:
            request.job.CopyFrom(convert.message(script_job))
        await self._call(
            address_of,
            f"terminate job={job_id}",
            lambda stub: stub.TerminateJob(request, timeout=CALL_TIMEOUT),
        )

    async def prolog(
        self, node: str, address_of: Callable[[], str | None], script_job: ScriptJob
    ) -> None:
        """Ask an agent to run its node's Prolog for a job just allocated (PrologFlags=Alloc).

        Args:
            node: the node.
            address_of: returns its agent's current ``host:port``.
            script_job: the job as the Prolog sees it there.

        Raises:
            AgentUnreachable: no answer in time.
        """
        request = pb.RunPrologRequest(node=node, job=convert.message(script_job))
        await self._call(
            address_of,
            f"prolog job={script_job.job_id}",
            lambda stub: stub.RunProlog(request, timeout=CALL_TIMEOUT),
        )

    async def reconfigure(self, node: str, address_of: Callable[[], str | None]) -> None:
        """Ask a node's slurmd (and so every node it serves) to re-read slurm.conf.

        Args:
            node: a node it serves.
            address_of: returns its agent's current ``host:port``.

        Raises:
            AgentUnreachable: no answer in time.
        """
        request = pb.ReconfigureAgentRequest(node=node)
        await self._call(
            address_of,
            f"reconfigure node={node}",
            lambda stub: stub.Reconfigure(request, timeout=CALL_TIMEOUT),
        )

    async def reboot(self, node: str, address_of: Callable[[], str | None]) -> None:
        """Ask an agent to reboot its node.

        Args:
            node: the node.
            address_of: returns its agent's current ``host:port``.

        Raises:
            AgentUnreachable: no answer in time.
        """
        request = pb.RebootNodeRequest(node=node)
        await self._call(
            address_of,
            f"reboot node={node}",
            lambda stub: stub.RebootNode(request, timeout=CALL_TIMEOUT),
        )

    async def signal(self, node: str, address_of: Callable[[], str | None], intent: Signal) -> None:
        """Ask an agent to send a signal to a job's processes on its node.

        Args:
            node: the node.
            address_of: returns its agent's current ``host:port``.
            intent: which job, which signal, batch shell or steps.

        Raises:
            AgentUnreachable: no answer in time.
        """
        request = pb.SignalJobRequest(
            job_id=intent.job_id,
            signal=intent.signal,
            batch_only=intent.batch_only,
            full=intent.full,
            node=node,
        )
        await self._call(
            address_of,
            f"signal job={intent.job_id}",
            lambda stub: stub.SignalJob(request, timeout=CALL_TIMEOUT),
        )

    async def signal_tasks(
        self,
        addresses_of: dict[str, Callable[[], str | None]],
        intent: SignalStep,
        signed: StepSigned,
    ) -> None:
        """Ask the agents of a step's nodes to send a signal to its tasks there.

        Args:
            addresses_of: per node, what returns its agent's current ``host:port``.
            intent: the step and the signal.
            signed: what the credential the agents check is made of.

        Raises:
            AgentUnreachable: no answer in time.
        """
        info = convert.step_info(signed.step, signed.addresses)
        credential = convert.credential(info, signed.job, signed.key, signed.now)
        what = f"signal step={intent.job_id}.{intent.step_id}"

        async def signal_on(node: str, address_of: Callable[[], str | None]) -> None:
            request = pb.SignalTasksRequest(
                job_id=intent.job_id,
                step_id=intent.step_id,
                signal=intent.signal,
                credential=credential,
                node=node,
            )
            await self._call(
                address_of, what, lambda stub: stub.SignalTasks(request, timeout=CALL_TIMEOUT)
            )

        await asyncio.gather(*(signal_on(n, a) for n, a in addresses_of.items()))

    async def step_stat(
        self, node: str, address_of: Callable[[], str | None], job_id: int, step_id: int
    ) -> list[NodeStepStat]:
        """Ask an agent for the live usage of one step's tasks on its node (sstat).

        Args:
            node: the node.
            address_of: returns its agent's current ``host:port``.
            job_id: the step's job.
            step_id: the step.

        Returns:
            The node's figures (none when the step no longer runs there).

        Raises:
            AgentUnreachable: no answer in time.
        """
        request = pb.NodeStepStatRequest(job_id=job_id, step_id=step_id, node=node)
        reply = await self._call(
            address_of,
            f"stat step={job_id}.{step_id}",
            lambda stub: stub.StepStat(request, timeout=CALL_TIMEOUT),
            patience=STAT_PATIENCE,
        )
        return [convert.record(NodeStepStat, node) for node in reply.nodes]

    async def close(self) -> None:
        """Close every channel."""
        agents, self._agents = list(self._agents.values()), {}
        for channel, _ in agents:
            await channel.close()
