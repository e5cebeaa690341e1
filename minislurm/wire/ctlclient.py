"""The commands' client for the controller's SlurmController service.

Method names, request and reply types come from the schema generated from the
.proto (minislurm.wire.rpc.minislurm_schema); requests are encoded and replies
decoded by minislurm.wire.protowire and carried by minislurm.wire.h2grpc, so a command
pays neither grpcio's nor protobuf's import time. Errors surface as
:class:`minislurm.wire.h2grpc.RpcError`. :class:`ServiceClient` is the part shared
with the clients of our other services (minislurm.wire.agentclient).

Example::

    with ControllerClient("127.0.0.1", 6817, timeout=10) as ctl:
        job_id = ctl.call("SubmitJob", spec={"name": "x", "script": b"#!/bin/sh\\n"}).job_id

Imports only minislurm.security.auth, minislurm.wire.h2grpc, minislurm.wire.protowire and
the generated schema; none of ctld, nodeagent or cli.
"""

from __future__ import annotations

from minislurm.security import auth
from minislurm.wire import h2grpc, protowire
from minislurm.wire.rpc import minislurm_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _ssl import _SSLContext
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, Self

    Request = Mapping[str, Any] | protowire.Message | bytes | None

SERVICE = "minislurm.v1.SlurmController"
DEFAULT_TIMEOUT = 30.0
# What a controller that is not in control answers (UNAVAILABLE) before doing anything:
# a backup waiting for the role, or one that has just lost it. Try the next.
STANDBY = "Slurm backup controller in standby mode"
# With backups, how long a controller may take to accept a connection before the next is
# tried: one cut off from the network never answers, and would hold every command up.
CONNECT_SECONDS = 1.0


class ServiceClient:
    """Calls the methods of one gRPC service (``SERVICE``) on one reused connection.

    Subclasses name the service in the class attribute ``SERVICE``.

    Args:
        host: the server's host name or address.
        port: its port.
        timeout: the deadline of each unary call in seconds (None: wait forever).
        metadata: ``(key, value)`` pairs sent with every call.
        signer: makes the credential each call carries (``minislurm.security.auth``);
            None: calls carry none.
        tls: speak TLS with this context (``minislurm.wire.tls.client_context``);
            None: cleartext.
    """

    SERVICE = ""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float | None = DEFAULT_TIMEOUT,
        metadata: Iterable[tuple[str, str | bytes]] = (),
        signer: auth.Signer | None = None,
        tls: _SSLContext | None = None,
    ) -> None:
        self.channel = h2grpc.Channel(host, port, timeout, tls=tls)
        self.metadata = list(metadata)
        self.signer = signer
        self.schema = protowire.default_schema()
        self._methods = minislurm_schema.SERVICES[self.SERVICE]

    @property
    def timeout(self) -> float | None:
        """The deadline of each unary call in seconds (settable)."""
        return self.channel.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self.channel.timeout = value

    def call(self, method: str, request: Request = None, /, **fields: Any) -> protowire.Message:
        """Call the unary ``method`` and return its decoded reply.

        Args:
            method: the RPC name, e.g. ``"SubmitJob"`` or ``"GetJobs"``.
            request: the request as a dict or a Message of the method's input type.
            **fields: request fields (added to, and overriding, ``request``).

        Returns:
            The reply, a :class:`minislurm.wire.protowire.Message`.

        Raises:
            minislurm.wire.h2grpc.RpcError: the call failed (status name in ``code``).
            ValueError: unknown or streaming method, unknown field or bad value.
            TypeError: a field value of the wrong type.
        """
        path, payload, output_type = self._request(method, False, request, fields)
        reply = self.channel.unary(path, payload, self.metadata_for(path))
        return self._decode(method, output_type, reply)

    def metadata_for(self, path: str) -> list[tuple[str, str | bytes]]:
        """The metadata of one call of ``path``: ``metadata`` and a fresh credential.

        Raises:
            minislurm.wire.h2grpc.RpcError: UNAUTHENTICATED when no credential can be made.
        """
        if self.signer is None:
            return self.metadata
        try:
            return [*self.metadata, (auth.HEADER, self.signer(path))]
        except auth.AuthError as err:
            raise h2grpc.RpcError("UNAUTHENTICATED", str(err)) from None

    def encode(self, method: str, request: Mapping[str, Any] | protowire.Message) -> bytes:
        """A request of ``method`` encoded once, for many calls that differ in a few fields.

        Passed as the request of :meth:`call` (or a stream), its fields are
        merged with the call's as protobuf merges concatenated messages: a
        field set again takes the new value (a repeated one is extended), so
        a request of thousands of entries sent to a thousand servers is
        encoded once, not a thousand times.

        Args:
            method: the RPC name.
            request: the request's common fields.

        Returns:
            The encoded message.

        Raises:
            ValueError: unknown method, unknown field or bad value.
            TypeError: a field value of the wrong type.
        """
        signature = self._methods.get(method)
        if signature is None:
            raise ValueError(f"{self.SERVICE} has no method {method!r}")
        return self.schema.encode(signature[0], request)

    def _request(
        self, method: str, streaming: bool, request: Request, fields: dict[str, Any]
    ) -> tuple[str, bytes, str]:
        """The path, encoded request and reply type of a call of ``method``.

        Raises:
            ValueError: unknown method, or not of the kind asked for (``streaming``:
                server-streaming; otherwise unary); bad field values.
            TypeError: a field value of the wrong type.
        """
        signature = self._methods.get(method)
        if signature is None:
            raise ValueError(
                f"{self.SERVICE} has no method {method!r}; "
                f"known: {', '.join(sorted(self._methods))}"
            )
        input_type, output_type, client_streaming, server_streaming = signature
        if client_streaming or server_streaming != streaming:
            kind = "a streaming" if server_streaming or client_streaming else "a unary"
            raise ValueError(f"{self.SERVICE}.{method} is {kind} method")
        if isinstance(request, bytes):  # encoded (see encode): merge the fields in
            payload = request + self.schema.encode(input_type, fields)
            return f"/{self.SERVICE}/{method}", payload, output_type
        body: Mapping[str, Any] | protowire.Message
        if fields:
            base = request.to_dict() if isinstance(request, protowire.Message) else request
            body = {**(base or {}), **fields}
        else:
            body = {} if request is None else request
        payload = self.schema.encode(input_type, body)
        return f"/{self.SERVICE}/{method}", payload, output_type

    def _decode(self, method: str, output_type: str, data: bytes) -> protowire.Message:
        try:
            return self.schema.decode(output_type, data)
        except ValueError as e:
            raise h2grpc.RpcError("INTERNAL", f"malformed {method} reply: {e}") from None

    def close(self) -> None:
        """Close the connection."""
        self.channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class ControllerClient(ServiceClient):
    """Calls SlurmController methods on one reused connection, to the controller in control.

    With backup controllers, a call that cannot reach a controller, or that
    one answers as a standby (:data:`STANDBY`), is made to the next, in
    ``SlurmctldHost`` order; the one that answered is kept for the next calls.
    When none is in control the call raises :class:`~minislurm.wire.h2grpc.Unreachable`.

    Args:
        host: the controller's host name or address (the primary's).
        port: its port (SlurmctldPort, 6817 by default).
        timeout: the deadline of each call in seconds (None: wait forever).
        metadata: ``(key, value)`` pairs sent with every call.
        signer: makes the credential each call carries.
        tls: speak TLS with this context.
        backups: the backup controllers' addresses, in order (same port).
    """

    SERVICE = SERVICE

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float | None = DEFAULT_TIMEOUT,
        metadata: Iterable[tuple[str, str | bytes]] = (),
        signer: auth.Signer | None = None,
        tls: _SSLContext | None = None,
        backups: Sequence[str] = (),
    ) -> None:
        super().__init__(host, port, timeout, metadata, signer, tls)
        self.hosts = (host, *backups)
        if backups:
            self.channel.connect_timeout = CONNECT_SECONDS
        self._channels = {host: self.channel}

    def call(self, method: str, request: Request = None, /, **fields: Any) -> protowire.Message:
        """Call the unary ``method`` on the controller in control (see :class:`ControllerClient`).

        Raises:
            minislurm.wire.h2grpc.Unreachable: no controller could be reached, or
                none is in control.
            minislurm.wire.h2grpc.RpcError: the call failed.
            ValueError: unknown or streaming method, unknown field or bad value.
            TypeError: a field value of the wrong type.
        """
        for _ in self.hosts[1:]:
            try:
                return super().call(method, request, **fields)
            except h2grpc.RpcError as err:
                if not _not_in_control(err):
                    raise
            self._next_host()
        try:
            return super().call(method, request, **fields)
        except h2grpc.RpcError as err:
            if _not_in_control(err) and not isinstance(err, h2grpc.Unreachable):
                raise h2grpc.Unreachable(err.code, err.details) from None
            raise

    def _next_host(self) -> None:
        """Use the next controller's connection from now on."""
        current = self.channel
        host = self.hosts[(self.hosts.index(current.host) + 1) % len(self.hosts)]
        if host not in self._channels:
            self._channels[host] = h2grpc.Channel(
                host,
                current.port,
                current.timeout,
                tls=current.tls,
                connect_timeout=current.connect_timeout,
            )
        self.channel = self._channels[host]
        self.channel.timeout = current.timeout

    def close(self) -> None:
        """Close every connection."""
        for channel in self._channels.values():
            channel.close()


def _not_in_control(err: h2grpc.RpcError) -> bool:
    """Whether a call failed before any controller did anything: unreachable, or a standby."""
    return isinstance(err, h2grpc.Unreachable) or (
        err.code == "UNAVAILABLE" and err.details == STANDBY
    )
