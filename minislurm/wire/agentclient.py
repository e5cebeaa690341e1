"""srun's client for a node agent's NodeAgent service: unary and streaming calls.

Like minislurm.wire.ctlclient (whose :class:`~minislurm.wire.ctlclient.ServiceClient`
it extends), it encodes with minislurm.wire.protowire and talks HTTP/2 through
minislurm.wire.h2grpc, without grpcio or protobuf. A server-streaming method
(``LaunchTasks``) returns a :class:`MessageStream` at once; unary calls
(``TaskInput``, ``SignalTasks``) can be made on the same client while streams
are open. One thread serves many agents by polling their :meth:`fileno`::

    agents = [AgentClient(host, 6818) for host in hosts]
    streams = {a.fileno(): (a, a.stream("LaunchTasks", request)) for a in agents}
    while streams:
        ready = [fd for fd, (a, _) in streams.items() if a.pending()] or poll(streams)
        for fd in ready:
            agent, stream = streams[fd]
            for event in stream.read(block=False):
                ...
            if stream.done:
                del streams[fd]

Imports only minislurm.wire.ctlclient (and what it imports); none of ctld,
nodeagent or cli.
"""

from __future__ import annotations

from minislurm.wire import h2grpc
from minislurm.wire.ctlclient import DEFAULT_TIMEOUT, ServiceClient

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _ssl import _SSLContext
    from collections.abc import Iterable
    from typing import Any

    from minislurm.security import auth
    from minislurm.wire import protowire
    from minislurm.wire.ctlclient import Request

SERVICE = "minislurm.v1.NodeAgent"


class MessageStream:
    """The decoded messages of one server-streaming call.

    Args:
        stream: the call.
        schema: decodes its messages.
        method: the method's name (for error messages).
        output_type: the full name of its message type.
    """

    __slots__ = ("_method", "_output_type", "_schema", "_stream")

    def __init__(
        self, stream: h2grpc.Stream, schema: protowire.Schema, method: str, output_type: str
    ) -> None:
        self._stream = stream
        self._schema = schema
        self._method = method
        self._output_type = output_type

    @property
    def done(self) -> bool:
        """True once the call ended with status OK and every message was read."""
        return self._stream.done

    def read(self, block: bool = True) -> list[protowire.Message]:
        """The messages received since the last read, decoded.

        Args:
            block: wait for at least one message or the end (see
                :meth:`minislurm.wire.h2grpc.Stream.read`); False: never wait.

        Returns:
            The messages in order; empty when none is waiting or at the end.

        Raises:
            minislurm.wire.h2grpc.RpcError: the call failed (after the messages
                received before the failure were returned), or INTERNAL for a
                message that does not decode (the call is then cancelled).
        """
        decode, output_type = self._schema.decode, self._output_type
        try:
            return [decode(output_type, raw) for raw in self._stream.read(block)]
        except ValueError as e:
            self._stream.cancel()
            raise h2grpc.RpcError("INTERNAL", f"malformed {self._method} message: {e}") from None

    def cancel(self) -> None:
        """Cancel the call; the server's handler sees the cancellation."""
        self._stream.cancel()


class AgentClient(ServiceClient):
    """Calls NodeAgent methods on one connection to one node agent.

    Args:
        host: the agent's host name or address (NodeAddr).
        port: its port (SlurmdPort, 6818 by default).
        timeout: the deadline of each unary call in seconds (None: wait forever).
        metadata: ``(key, value)`` pairs sent with every call.
        stream_timeout: the deadline of each streaming call in seconds (None:
            none, as a launched step runs as long as it runs).
        signer: makes the credential each call carries; srun needs none, as
            its calls carry the step's credential.
        tls: speak TLS with this context (None: cleartext).
    """

    SERVICE = SERVICE

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float | None = DEFAULT_TIMEOUT,
        metadata: Iterable[tuple[str, str | bytes]] = (),
        stream_timeout: float | None = None,
        signer: auth.Signer | None = None,
        tls: _SSLContext | None = None,
    ) -> None:
        super().__init__(host, port, timeout, metadata, signer, tls)
        self.stream_timeout = stream_timeout

    def stream(self, method: str, request: Request = None, /, **fields: Any) -> MessageStream:
        """Start the server-streaming ``method``; returns without waiting for replies.

        Args:
            method: the RPC name, e.g. ``"LaunchTasks"``.
            request: the request as a dict or a Message of the method's input type.
            **fields: request fields (added to, and overriding, ``request``).

        Returns:
            The call's :class:`MessageStream`.

        Raises:
            minislurm.wire.h2grpc.RpcError: UNAVAILABLE (cannot connect) or
                DEADLINE_EXCEEDED while connecting; later failures come from
                :meth:`MessageStream.read`.
            ValueError: unknown or unary method, unknown field or bad value.
            TypeError: a field value of the wrong type.
        """
        path, payload, output_type = self._request(method, True, request, fields)
        timeout = float("inf") if self.stream_timeout is None else self.stream_timeout
        stream = self.channel.start_stream(path, payload, self.metadata_for(path), timeout)
        return MessageStream(stream, self.schema, method, output_type)

    def fileno(self) -> int:
        """The connection's socket, for ``select.poll`` (-1 while not connected)."""
        return self.channel.fileno()

    def pending(self) -> bool:
        """Whether a stream's read would return at once (see :meth:`h2grpc.Channel.pending`)."""
        return self.channel.pending()
