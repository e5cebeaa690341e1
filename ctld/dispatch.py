"""Calls from the controller to node agents: launch, terminate, signal, step usage.

One gRPC channel per node address. Each call is retried with backoff while
the agent is unreachable, for up to ``give_up_after`` seconds; every call is
idempotent on the agent's side, so a retry after a lost reply is harmless.

Imports minislurm; no database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

from minislurm.daemon import GRPC_OPTIONS
from minislurm.security import auth
from minislurm.security.authgrpc import SignCalls
from minislurm.wire import tls
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

T = TypeVar("T")
_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
CALL_TIMEOUT = 10.0
STAT_PATIENCE = 2.0  # seconds sstat waits for an unreachable agent: it reports what the others have


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
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._give_up_after = give_up_after
        self._sign = SignCalls(signer)

    def _stub(self, address: str) -> pb_grpc.NodeAgentStub:
        channel = self._channels.get(address)
        if channel is None:
            channel = tls.aio_channel(address, self._tls, GRPC_OPTIONS, [self._sign])
            self._channels[address] = channel
        return pb_grpc.NodeAgentStub(channel)

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
        address_of: Callable[[], str | None],
        request: pb.BatchLaunchRequest,
        patience: float | None = None,
    ) -> None:
        """Ask the batch host's agent to start a job's script.

        Args:
            address_of: returns the agent's current ``host:port`` (None: unknown yet).
            request: the launch description.
            patience: seconds to keep retrying (default: ``give_up_after``).

        Raises:
            AgentUnreachable: no answer in time.
            grpc.aio.AioRpcError: the agent refused.
        """
        await self._call(
            address_of,
            f"launch job={request.job.job_id}",
            lambda stub: stub.LaunchBatch(request, timeout=CALL_TIMEOUT),
            patience,
        )

    async def terminate(
        self, address_of: Callable[[], str | None], request: pb.TerminateJobRequest
    ) -> None:
        """Ask an agent to kill everything of a job on its node.

        Args:
            address_of: returns the agent's current ``host:port``.
            request: which job, why, and how long to wait before SIGKILL.

        Raises:
            AgentUnreachable: no answer in time.
        """
        await self._call(
            address_of,
            f"terminate job={request.job_id}",
            lambda stub: stub.TerminateJob(request, timeout=CALL_TIMEOUT),
        )

    async def signal(
        self, address_of: Callable[[], str | None], request: pb.SignalJobRequest
    ) -> None:
        """Ask an agent to send a signal to a job's processes on its node.

        Args:
            address_of: returns the agent's current ``host:port``.
            request: which job, which signal, batch shell or steps.

        Raises:
            AgentUnreachable: no answer in time.
        """
        await self._call(
            address_of,
            f"signal job={request.job_id}",
            lambda stub: stub.SignalJob(request, timeout=CALL_TIMEOUT),
        )

    async def signal_tasks(
        self, address_of: Callable[[], str | None], request: pb.SignalTasksRequest
    ) -> None:
        """Ask an agent to send a signal to one step's tasks on its node.

        Args:
            address_of: returns the agent's current ``host:port``.
            request: the step, the signal and a credential the controller signed.

        Raises:
            AgentUnreachable: no answer in time.
        """
        await self._call(
            address_of,
            f"signal step={request.job_id}.{request.step_id}",
            lambda stub: stub.SignalTasks(request, timeout=CALL_TIMEOUT),
        )

    async def step_stat(
        self, address_of: Callable[[], str | None], request: pb.StepStatRequest
    ) -> pb.StepStatReply:
        """Ask an agent for the live usage of one step's tasks on its node (sstat).

        Args:
            address_of: returns the agent's current ``host:port``.
            request: the step.

        Returns:
            The node's figures (no node when the step no longer runs there).

        Raises:
            AgentUnreachable: no answer in time.
        """
        return await self._call(
            address_of,
            f"stat step={request.job_id}.{request.step_id}",
            lambda stub: stub.StepStat(request, timeout=CALL_TIMEOUT),
            patience=STAT_PATIENCE,
        )

    async def close(self) -> None:
        """Close every channel."""
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()
