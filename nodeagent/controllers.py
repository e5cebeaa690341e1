"""slurmd's stub of the controller in control, among the primary and its backups.

A call that finds a controller unavailable (down, or a backup in standby)
is made to the next, in ``SlurmctldHost`` order; the one that answered is
kept for the next calls. A call that timed out is not made again (it may
have been done), but the next call goes to the next controller: one cut off
from the network answers nothing at all. With a single controller it is its
stub.

Imports grpc and the generated stubs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc

from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc


class Controllers:
    """Calls SlurmController methods (``await ctld.Heartbeats(request, timeout=...)``).

    Args:
        channels: a channel to each controller, the primary's first.
        addresses: their ``host:port``, for the logs.
    """

    def __init__(self, channels: Sequence[grpc.aio.Channel], addresses: Sequence[str]) -> None:
        self._channels = list(channels)
        self._stubs = [pb_grpc.SlurmControllerStub(channel) for channel in channels]
        self._addresses = list(addresses)
        self._current = 0

    @property
    def address(self) -> str:
        """The address of the controller that answered last."""
        return self._addresses[self._current]

    def __getattr__(self, method: str) -> Callable[..., Awaitable[Any]]:
        async def call(request: Any, **kwargs: Any) -> Any:
            index = self._current
            for _ in self._stubs[1:]:
                try:
                    return await self._call(index, method, request, kwargs)
                except grpc.aio.AioRpcError as err:
                    if err.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
                index = (index + 1) % len(self._stubs)
            return await self._call(index, method, request, kwargs)

        return call

    async def _call(self, index: int, method: str, request: Any, kwargs: dict[str, Any]) -> Any:
        """One call to controller ``index``, kept for the next calls once it answers."""
        try:
            reply = await getattr(self._stubs[index], method)(request, **kwargs)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                self._current = (index + 1) % len(self._stubs)
            raise
        self._current = index
        return reply

    async def close(self) -> None:
        """Close every channel."""
        for channel in self._channels:
            await channel.close()
