"""TLS on every gRPC channel: sockets, client contexts and grpcio credentials.

The settings (``TLSType``, ``TLSParameters``, which files) are read by
minislurm.tlsconf; this module uses the files they name.

Authentication stays with AuthType (every call is signed); TLS adds privacy
and the server's identity on the wire.

Imports only the standard library: ``_socket`` (loaded by the commands
anyway), ``_ssl`` when a client context is made, and grpc inside the daemons'
helpers, so a command without TLS pays for neither.
"""

from __future__ import annotations

import _socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _ssl import _SSLContext
    from collections.abc import Sequence
    from typing import Any

    import grpc

ALPN = ["h2"]


def client_context(ca_file: str) -> _SSLContext:
    """A client context that trusts only the cluster's CA and checks the server's name.

    Made with ``_ssl`` itself, as ``ssl.SSLContext(PROTOCOL_TLS_CLIENT)`` would
    be (certificate and host name required), because importing ``ssl`` would
    cost each command ~30 ms; minislurm.wire.h2grpc uses it as it is.

    Args:
        ca_file: the CA certificate (PEM).

    Returns:
        The context, offering ALPN ``h2`` as gRPC requires.

    Raises:
        OSError: the CA file cannot be read, or holds no certificate (an SSLError).
    """
    import _ssl

    context = _ssl._SSLContext(_ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = _ssl.PROTO_TLSv1_2
    context.load_verify_locations(cafile=ca_file)
    alpn: Any = context._set_alpn_protocols  # type: ignore[attr-defined]
    alpn(b"".join(bytes([len(p)]) + p.encode() for p in ALPN))
    return context


class Socket(_socket.socket):
    """A socket to which ``_ssl`` can hold the weak reference it needs."""

    __slots__ = ("__weakref__",)


class TlsSocket:
    """A TLS connection on a connected :class:`Socket`, through ``_ssl`` itself.

    What of a socket minislurm.wire.h2grpc uses, with the semantics of
    ``ssl.SSLSocket``: reads and writes wait as the socket's timeout says,
    and one that would wait on a non-blocking socket raises
    ``SSLWantReadError``/``SSLWantWriteError``.

    Args:
        raw: the connected socket (its timeout bounds the handshake).
        context: the client context.
        host: the server's name, for SNI and the certificate check.

    Raises:
        OSError: the handshake failed (``ssl.SSLError`` and its kin are OSErrors).
    """

    __slots__ = ("_raw", "_tls")

    def __init__(self, raw: _socket.socket, context: _SSLContext, host: str) -> None:
        self._raw = raw
        wrap: Any = context._wrap_socket  # type: ignore[attr-defined]
        self._tls: Any = wrap(raw, False, host)
        self._tls.do_handshake()

    def settimeout(self, timeout: float | None) -> None:
        self._raw.settimeout(timeout)

    def fileno(self) -> int:
        return self._raw.fileno()

    def recv(self, size: int) -> bytes:
        data: bytes = self._tls.read(size)
        return data

    def send(self, data: bytes | bytearray | memoryview) -> int:
        sent: int = self._tls.write(data)
        return sent

    def sendall(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[self._tls.write(view) :]

    def pending(self) -> int:
        """Decrypted bytes held in TLS, which ``poll`` on the socket does not see."""
        held: int = self._tls.pending()
        return held

    def selected_alpn_protocol(self) -> str | None:
        chosen: str | None = self._tls.selected_alpn_protocol()
        return chosen

    def close(self) -> None:
        self._raw.close()


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def server_credentials(files: tuple[str, str, str]) -> grpc.ServerCredentials:
    """A gRPC server's TLS credentials from ``(ca, cert, key)``.

    Args:
        files: what :func:`tls_files` returned.

    Returns:
        The credentials (clients are not asked for certificates: AuthType
        authenticates every call).

    Raises:
        OSError: a file cannot be read.
    """
    import grpc

    _, cert, key = files
    return grpc.ssl_server_credentials([(_read(key), _read(cert))])


def channel_credentials(files: tuple[str, str, str]) -> grpc.ChannelCredentials:
    """A gRPC channel's credentials that trust only the cluster's CA.

    Args:
        files: what :func:`tls_files` returned.

    Returns:
        The credentials.

    Raises:
        OSError: the CA file cannot be read.
    """
    import grpc

    return grpc.ssl_channel_credentials(root_certificates=_read(files[0]))


def add_port(server: grpc.aio.Server, address: str, files: tuple[str, str, str] | None) -> int:
    """Bind a gRPC server's port, over TLS when ``files`` are given.

    Args:
        server: the server.
        address: ``host:port``.
        files: ``(ca, cert, key)``, or None for cleartext.

    Returns:
        The port bound (0 when it could not bind).

    Raises:
        OSError: a certificate or key file cannot be read.
    """
    if files is None:
        return server.add_insecure_port(address)
    return server.add_secure_port(address, server_credentials(files))


def aio_channel(
    address: str,
    files: tuple[str, str, str] | None,
    options: Sequence[tuple[str, Any]],
    interceptors: Sequence[grpc.aio.ClientInterceptor],
) -> grpc.aio.Channel:
    """An asyncio gRPC channel to ``address``, over TLS when ``files`` are given.

    Args:
        address: ``host:port`` (its host is what the certificate must name).
        files: ``(ca, cert, key)``, or None for cleartext.
        options: channel options.
        interceptors: client interceptors.

    Returns:
        The channel.

    Raises:
        OSError: the CA file cannot be read.
    """
    import grpc

    if files is None:
        return grpc.aio.insecure_channel(address, options=options, interceptors=interceptors)
    creds = channel_credentials(files)
    return grpc.aio.secure_channel(address, creds, options=options, interceptors=interceptors)
