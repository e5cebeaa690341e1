"""A minimal synchronous gRPC client over HTTP/2 on a plain socket, for the commands.

grpcio costs the commands more start-up time than their whole budget, so they
talk to our grpcio servers with this instead: cleartext HTTP/2 with prior
knowledge (RFC 9113), request headers as HPACK literals, responses decoded
with a full HPACK decoder (minislurm.wire.hpack). It honours the peer's flow
control and frame size, so multi-megabyte requests and responses work, and
maps failures to gRPC status names in :class:`RpcError`.

One :class:`Channel` (one connection) carries any number of calls at once:
unary calls (:meth:`Channel.unary`, which block until their reply) and
server-streaming calls (:meth:`Channel.start_stream`, which return a
:class:`Stream` at once). Whatever arrives for a stream while the caller is
busy elsewhere on the channel is buffered in that stream, so one thread can
wait on many channels with ``select.poll`` on :meth:`Channel.fileno`::

    stream = channel.start_stream("/pkg.Svc/Watch", request)
    poller.register(channel.fileno(), select.POLLIN)
    while not stream.done:
        if not channel.pending():          # nothing buffered: wait for the socket
            poller.poll()
        for message in stream.read(block=False):
            ...

A stream's messages are credited back to the server's flow-control window as
:meth:`Stream.read` hands them over, so a reader that falls behind slows the
server down instead of buffering without bound (``window`` bytes per stream).

Given a TLS context (``TLSType=tls/openssl``, see minislurm.wire.tls), a channel
speaks the same over TLS, ALPN ``h2``, checking the server's certificate and
name as the context says.

The receiving side (frames applied to the connection and its calls) is
minislurm.wire.h2frames. Not thread-safe: use a channel from one thread.
Imports at module level only ``_socket``, ``time``, minislurm.wire.hpack,
h2frames and tls (no ``socket``, whose import alone costs the commands ~15 ms,
and no ``ssl``, ~30 ms: TLS goes through ``_ssl`` itself, loaded with a TLS
context); none of ctld, nodeagent or cli.
"""

from __future__ import annotations

import _socket
import time

from minislurm.wire import hpack, tls
from minislurm.wire.h2frames import (
    _CANCEL,
    _CONTINUATION,
    _DATA,
    _DEFAULT_FRAME,
    _DEFAULT_WINDOW,
    _END_HEADERS,
    _END_STREAM,
    _GOAWAY,
    _HEADERS,
    _MAX_FRAME,
    _MAX_STREAM_ID,
    _MAX_WINDOW,
    _RST_STREAM,
    _SETTINGS,
    _WINDOW_UPDATE,
    FrameReceiver,
    _Call,
    _final_status,
    _frame,
    _frame_length,
    _ProtocolError,
    _remaining,
    _stream_status,
    _unframe,
)
from minislurm.wire.h2frames import RpcError as RpcError  # re-exported: the callers' error
from minislurm.wire.h2frames import Unreachable as Unreachable
from minislurm.wire.h2frames import split_messages as split_messages
from minislurm.wire.tls import TlsSocket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _ssl import _SSLContext
    from collections.abc import Callable, Iterable

    Metadata = Iterable[tuple[str, "str | bytes"]]

USER_AGENT = "minislurm-h2grpc/0.1"

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_SEND_BATCH = 1 << 20  # DATA bytes queued per sendall
_INF = float("inf")
_TOKEN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")
_RESERVED = frozenset(
    {
        "content-type",
        "te",
        "user-agent",
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
    }
)


class Stream:
    """One server-streaming call, from :meth:`Channel.start_stream`.

    Read it until :attr:`done` or an :class:`RpcError`, or :meth:`cancel` it:
    a stream that ended but was never read keeps :meth:`Channel.pending` true.
    """

    __slots__ = ("_call", "_channel")

    def __init__(self, channel: Channel, call: _Call) -> None:
        self._channel = channel
        self._call = call

    @property
    def done(self) -> bool:
        """True once the call ended with status OK and every message was read."""
        call = self._call
        return call.ended and not call.messages and _stream_status(call) is None

    def read(self, block: bool = True) -> list[bytes]:
        """The messages received for this call since the last read.

        Args:
            block: wait until at least one message arrives or the call ends
                (up to the call's deadline); False: only take what the socket
                already holds, handling frames of the channel's other calls
                too (buffered for them).

        Returns:
            The serialized messages in order; empty when none is waiting (or,
            with ``block``, once the call has ended with status OK).

        Raises:
            RpcError: the call ended with a non-OK status, was reset or
                refused (GOAWAY), lost its connection, hit its deadline or was
                cancelled; raised once every message received before it has
                been returned, and again by every later read.
        """
        call = self._call
        if not call.messages and not call.ended:
            self._channel._receive(call, block)
        if call.messages:
            messages, call.messages = call.messages, []
            self._channel._consumed(call, messages)
            return messages
        if call.ended:
            self._channel._unseen.discard(call)
            error = _stream_status(call)
            if error is not None:
                raise error
        return []

    def cancel(self) -> None:
        """Cancel the call (RST_STREAM CANCEL); later reads raise CANCELLED.

        Messages not yet read are dropped. Does nothing once the call ended.
        """
        call = self._call
        if call.ended:
            return
        call.messages = []
        call.error = RpcError("CANCELLED", "cancelled by the client")
        self._channel._cancel(call)


class Channel(FrameReceiver):
    """One HTTP/2 connection to a gRPC server, opened on the first call.

    Args:
        host: a hostname, an IPv4 literal or an IPv6 literal (without brackets).
        port: the TCP port.
        timeout: the default deadline of each call in seconds (None: none).
        user_agent: the ``user-agent`` header sent.
        window: the flow-control window advertised for the connection and for
            each stream, in bytes: how far the server may send ahead of what
            the caller has read from a stream.
        tls: speak TLS with this context (``ssl.SSLContext`` or, cheaper to
            import, what ``minislurm.wire.tls.client_context`` makes); None: cleartext.
        connect_timeout: seconds a connection may take to open, after which the
            call fails as :class:`Unreachable` (nothing was sent: another server
            may be tried); None: the call's deadline, and DEADLINE_EXCEEDED. Given,
            an open connection whose peer goes silent (its host cut off) is given
            up 3 s after that (TCP keepalives, TCP_USER_TIMEOUT): the calls on it
            fail UNAVAILABLE then, not at their deadline.

    Raises:
        ValueError: ``window`` outside 65535 .. 2**31-1.
    """

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        *,
        user_agent: str = USER_AGENT,
        window: int = _MAX_WINDOW,
        tls: _SSLContext | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        if not _DEFAULT_WINDOW <= window <= _MAX_WINDOW:
            raise ValueError(f"window {window} outside {_DEFAULT_WINDOW}..{_MAX_WINDOW}")
        self.host = host
        self.port = port
        self.timeout = timeout
        self.window = window
        self.tls = tls
        self.connect_timeout = connect_timeout
        # What a socket read or write that would wait raises: TLS adds its own.
        self._would_block: tuple[type[OSError], ...] = (BlockingIOError,)
        if tls is not None:
            import _ssl

            self._would_block = (BlockingIOError, _ssl.SSLWantReadError, _ssl.SSLWantWriteError)
        self._refill = window // 2  # received bytes after which a window is topped up
        self.authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._headers = b"".join(
            (
                hpack.encode_indexed(3),  # :method: POST
                hpack.encode_indexed(6 if tls is None else 7),  # :scheme: http or https
                hpack.encode_literal(":authority", self.authority, 1),
                hpack.encode_literal("content-type", "application/grpc", 31),
                hpack.encode_literal("te", "trailers"),
                hpack.encode_literal("user-agent", user_agent, 58),
            )
        )
        self._sock: _socket.socket | TlsSocket | None = None
        self._unseen: set[_Call] = set()  # ended streams whose end no read() saw yet
        self._reset()

    def _reset(self) -> None:
        self._inbuf = bytearray()
        self._out = bytearray()
        self._next_stream = 1
        self._decoder = hpack.Decoder()
        self._peer_frame = _DEFAULT_FRAME
        self._peer_window = _DEFAULT_WINDOW  # initial window of each new stream
        self._send_window = _DEFAULT_WINDOW  # the connection's
        self._recv_unacked = 0  # the connection's
        self._goaway = False
        self._torn = False  # a send timed out part-way: the framing is lost
        self._open: dict[int, _Call] = {}
        self._continuing: tuple[int, int, bytearray] | None = None

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (a later call opens a new one).

        Calls still open end with CANCELLED.
        """
        sock = self._sock
        if sock is not None and not self._open and not self._out:  # say goodbye politely
            try:
                sock.settimeout(0.0)
                sock.send(_frame(_GOAWAY, 0, 0, bytes(8)))
            except OSError:
                pass
        self._drop("CANCELLED", "the channel was closed")

    def fileno(self) -> int:
        """The connection's socket, to wait on with ``select.poll``/``select.select``.

        Returns:
            The file descriptor, or -1 while not connected. A call made after
            the connection was lost opens a new one with a new descriptor.
        """
        return -1 if self._sock is None else self._sock.fileno()

    def pending(self) -> bool:
        """Whether a stream's :meth:`Stream.read` would return something at once.

        True when messages or the end of a stream were already taken off the
        socket (for instance during another call on the channel): check this
        before waiting on :meth:`fileno`, which will not wake for them.

        Returns:
            True if some stream of this channel has buffered messages, an end
            not yet read, or the socket data already read holds a whole frame.
        """
        if self._unseen:
            return True
        for call in self._open.values():
            if call.messages:
                return True
        buf = self._inbuf
        if len(buf) >= 9 and len(buf) >= 9 + _frame_length(buf):
            return True
        return self._tls_pending()

    def unary(
        self, path: str, request: bytes, metadata: Metadata = (), timeout: float | None = None
    ) -> bytes:
        """Make one unary call (streams open on the channel keep receiving).

        A call that a GOAWAY says the server never processed (its stream is
        above the GOAWAY's last stream id, RFC 9113 6.8) raced the server's
        goodbye: like gRPC's transparent retry, it is sent once more, on a new
        connection, within the same deadline. No other call is repeated.

        Args:
            path: ``/package.Service/Method``.
            request: the serialized request message.
            metadata: ``(key, value)`` pairs; keys lowercase ASCII, values
                printable ASCII ``str`` (or ``bytes`` for keys ending ``-bin``).
            timeout: this call's deadline in seconds (default: the channel's;
                ``float("inf")``: none).

        Returns:
            The serialized response message.

        Raises:
            RpcError: the server's non-OK status, or DEADLINE_EXCEEDED,
                UNAVAILABLE (cannot connect, connection lost, server going
                away twice), INTERNAL (protocol violation, malformed response).
            ValueError, TypeError: bad path or metadata.
        """
        metadata = tuple(metadata)  # an iterator would be spent by the first try
        call = self._unary_once(path, request, metadata, timeout)
        left = _INF if call.deadline is None else call.deadline - time.monotonic()
        if call.refused and left > 0:
            call = self._unary_once(path, request, metadata, left)
        error = _final_status(call)
        if error is not None:
            raise error
        return _unframe(call.data)

    def start_stream(
        self, path: str, request: bytes, metadata: Metadata = (), timeout: float | None = None
    ) -> Stream:
        """Start a server-streaming (or unary) call and return without waiting.

        Connects first if needed, and sends the request (waiting only if it
        exceeds the server's flow-control window).

        Args:
            path: ``/package.Service/Method``.
            request: the serialized request message.
            metadata: as for :meth:`unary`.
            timeout: the whole call's deadline in seconds (default: the
                channel's; ``float("inf")``: none).

        Returns:
            The call's :class:`Stream`.

        Raises:
            RpcError: UNAVAILABLE (cannot connect; the server is going away
                while other streams still use the connection) or
                DEADLINE_EXCEEDED while connecting. Later failures are raised
                by :meth:`Stream.read`.
            ValueError, TypeError: bad path or metadata.
        """
        return Stream(self, self._start(path, request, metadata, timeout, streaming=True))

    # ------------------------------------------------------------ calls

    def _unary_once(
        self, path: str, request: bytes, metadata: Metadata, timeout: float | None
    ) -> _Call:
        """Send one unary call and wait for its end."""
        call = self._start(path, request, metadata, timeout, streaming=False)
        if not call.ended:
            self._guarded(call, self._await_end, call)
        return call

    def _start(
        self,
        path: str,
        request: bytes,
        metadata: Metadata,
        timeout: float | None,
        streaming: bool,
    ) -> _Call:
        if timeout is None:
            timeout = self.timeout
        if timeout == _INF:
            timeout = None
        deadline = None if timeout is None else time.monotonic() + timeout
        block = self._headers + hpack.encode_literal(":path", path, 4)
        if timeout is not None:
            block += hpack.encode_literal("grpc-timeout", _grpc_timeout(timeout))
        block += b"".join(_metadata_field(key, value) for key, value in metadata)
        if not self._usable():
            if self._open:
                raise RpcError(
                    "UNAVAILABLE",
                    f"{self.authority} takes no new calls on a connection (GOAWAY) "
                    "that open streams still use",
                )
            self._drop("UNAVAILABLE", "")
            self._connect(deadline)
        call = _Call(self._next_stream, self._peer_window, streaming, timeout, deadline)
        self._next_stream += 2
        self._open[call.stream_id] = call
        self._queue_headers(call.stream_id, block)
        self._guarded(call, self._send_message, call, request)
        return call

    def _await_end(self, call: _Call) -> None:
        while not call.ended:
            self._read_frame(call.deadline)
        self._drain_buffered()

    def _await_message(self, call: _Call) -> None:
        while not call.messages and not call.ended:
            self._read_frame(call.deadline)
        self._drain_buffered()

    def _receive(self, call: _Call, block: bool) -> None:
        """Take frames off the socket for ``call`` (and, in passing, the others)."""
        if block:
            self._guarded(call, self._await_message, call)
        elif call.deadline is not None and time.monotonic() >= call.deadline:
            self._expire(call)
        else:
            self._guarded(call, self._pump, call.deadline)

    def _guarded(self, call: _Call, action: Callable[..., None], *args: object) -> None:
        """Run one I/O step of ``call``, turning failures into call errors."""
        try:
            action(*args)
        except TimeoutError as e:
            if e.errno is not None:  # ETIMEDOUT: the kernel gave the silent peer up
                self._drop("UNAVAILABLE", f"connection to {self.authority} lost: {e}")
            else:  # the socket's timeout: the call's deadline
                self._expire(call)
        except _ProtocolError as e:
            self._drop("INTERNAL", f"HTTP/2 protocol error from {self.authority}: {e}")
        except OSError as e:
            self._drop("UNAVAILABLE", f"connection to {self.authority} lost: {e}")

    def _end(self, call: _Call) -> None:
        if call.ended:
            return
        call.ended = True
        del self._open[call.stream_id]
        if call.streaming:
            self._unseen.add(call)

    def _expire(self, call: _Call) -> None:
        """``call`` ran past its deadline: reset it, or drop a connection no one else uses."""
        if call.ended:
            return
        call.error = RpcError("DEADLINE_EXCEEDED", f"deadline of {call.timeout}s exceeded")
        self._end(call)
        if self._torn or not self._open:
            self._drop("UNAVAILABLE", f"connection to {self.authority} closed after a timeout")
        else:
            self._out += _frame(_RST_STREAM, 0, call.stream_id, _CANCEL.to_bytes(4, "big"))
            self._try_flush()

    def _cancel(self, call: _Call) -> None:
        self._end(call)
        self._unseen.discard(call)
        if self._sock is not None:
            self._out += _frame(_RST_STREAM, 0, call.stream_id, _CANCEL.to_bytes(4, "big"))
            self._try_flush()

    def _drop(self, code: str, details: str) -> None:
        """Close the connection; the calls still open on it end with ``code``."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
        for call in list(self._open.values()):
            call.error = RpcError(code, details)
            self._end(call)
        self._reset()

    def _consumed(self, call: _Call, messages: list[bytes]) -> None:
        """``messages`` were handed to the caller: give their room back to the server."""
        call.queued -= sum(len(m) for m in messages) + 5 * len(messages)
        if not call.ended:
            self._credit(call)
            self._try_flush()

    def _credit(self, call: _Call) -> None:
        grant = call.received - call.queued - call.credited
        if grant >= self._refill:
            self._out += _frame(_WINDOW_UPDATE, 0, call.stream_id, grant.to_bytes(4, "big"))
            call.credited += grant

    # ------------------------------------------------------------ connecting

    def _connect(self, deadline: float | None) -> None:
        # An ASCII host goes as bytes: for str, getaddrinfo loads the "idna" codec,
        # whose imports (re, enum, ...) cost a command ~17 ms.
        host: str | bytes = self.host.encode("ascii") if self.host.isascii() else self.host
        try:
            addresses = _socket.getaddrinfo(
                host, self.port, 0, _socket.SOCK_STREAM, _socket.IPPROTO_TCP
            )
        except OSError as e:
            raise Unreachable("UNAVAILABLE", f"cannot resolve {self.host!r}: {e}") from None
        error: OSError | None = None
        for family, kind, proto, _, address in addresses:
            sock = tls.Socket(family, kind, proto)
            remaining = _remaining(deadline)
            limit = self.connect_timeout
            try:
                sock.settimeout(remaining if limit is None else min(limit, remaining or limit))
                sock.connect(address)
            except TimeoutError:
                sock.close()
                if limit is not None and (remaining is None or limit < remaining):
                    raise Unreachable(
                        "UNAVAILABLE", f"no answer connecting to {self.authority} in {limit:g} s"
                    ) from None
                raise RpcError(
                    "DEADLINE_EXCEEDED", f"deadline exceeded connecting to {self.authority}"
                ) from None
            except OSError as e:
                sock.close()
                error = e
                continue
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            if limit is not None:
                _watch_silence(sock, limit)
            self._reset()
            self._sock = sock if self.tls is None else self._handshake(sock)
            settings = b"".join(
                ident.to_bytes(2, "big") + value.to_bytes(4, "big")
                for ident, value in ((2, 0), (4, self.window), (5, _MAX_FRAME))
            )  # ENABLE_PUSH 0, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE
            self._out += _PREFACE + _frame(_SETTINGS, 0, 0, settings)
            if self.window > _DEFAULT_WINDOW:
                increment = self.window - _DEFAULT_WINDOW
                self._out += _frame(_WINDOW_UPDATE, 0, 0, increment.to_bytes(4, "big"))
            return
        raise Unreachable("UNAVAILABLE", f"failed to connect to {self.authority}: {error}")

    def _handshake(self, sock: _socket.socket) -> TlsSocket:
        """Wrap a connected socket in TLS and shake hands (within the connect timeout)."""
        assert self.tls is not None
        try:
            wrapped = TlsSocket(sock, self.tls, self.host)
        except TimeoutError:
            sock.close()
            raise RpcError(
                "DEADLINE_EXCEEDED", f"deadline exceeded in the TLS handshake with {self.authority}"
            ) from None
        except OSError as e:  # ssl.SSLError is one
            sock.close()
            message = f"TLS handshake with {self.authority} failed: {e}"
            if getattr(e, "verify_code", None) is not None:  # its certificate: no use retrying
                raise RpcError("UNAVAILABLE", message) from None
            raise Unreachable("UNAVAILABLE", message) from None
        if wrapped.selected_alpn_protocol() != "h2":
            wrapped.close()
            raise Unreachable("UNAVAILABLE", f"{self.authority} did not agree to HTTP/2 over TLS")
        return wrapped

    def _usable(self) -> bool:
        """Handle what arrived meanwhile; False if the connection cannot take a call."""
        if self._sock is None:
            return False
        try:
            self._pump(None)
        except _ProtocolError as e:
            self._drop("INTERNAL", f"HTTP/2 protocol error from {self.authority}: {e}")
            return False
        except OSError as e:  # closed by the server (idle timeout, restart)
            self._drop("UNAVAILABLE", f"connection to {self.authority} lost: {e}")
            return False
        return not self._goaway and self._next_stream <= _MAX_STREAM_ID

    # ------------------------------------------------------------ sending

    def _flush(self, deadline: float | None) -> None:
        if self._out and self._sock is not None:
            self._sock.settimeout(_remaining(deadline))
            try:
                self._sock.sendall(self._out)
            except TimeoutError:
                self._torn = True  # sendall does not say how much it sent
                raise
            del self._out[:]

    def _try_flush(self) -> None:
        """Send what the socket takes without waiting; the rest goes with the next send."""
        sock = self._sock
        if not self._out or sock is None:
            return
        sock.settimeout(0.0)
        try:
            sent = sock.send(self._out)
        except self._would_block:
            return
        except OSError as e:
            self._drop("UNAVAILABLE", f"connection to {self.authority} lost: {e}")
            return
        del self._out[:sent]

    def _queue_headers(self, stream_id: int, block: bytes) -> None:
        size = self._peer_frame
        chunks = [block[i : i + size] for i in range(0, len(block), size)] or [b""]
        for i, chunk in enumerate(chunks):
            last = _END_HEADERS if i == len(chunks) - 1 else 0
            self._out += _frame(_HEADERS if i == 0 else _CONTINUATION, last, stream_id, chunk)

    def _send_message(self, call: _Call, request: bytes) -> None:
        deadline = call.deadline
        body = memoryview(b"\x00" + len(request).to_bytes(4, "big") + request)
        offset, total = 0, len(body)
        while offset < total and not call.ended:
            n = min(total - offset, self._send_window, call.send_window, _SEND_BATCH)
            if n <= 0:  # wait for the server to open its windows
                self._flush(deadline)
                self._read_frame(deadline)
                continue
            stop = offset + n
            while offset < stop:
                size = min(stop - offset, self._peer_frame)
                flags = _END_STREAM if offset + size == total else 0
                self._out += (
                    size.to_bytes(3, "big")
                    + bytes((_DATA, flags))
                    + call.stream_id.to_bytes(4, "big")
                )
                self._out += body[offset : offset + size]
                offset += size
            self._send_window -= n
            call.send_window -= n
            self._flush(deadline)
        if offset < total and call.reset is None and call.error is None:
            # answered early: stop the upload
            self._out += _frame(_RST_STREAM, 0, call.stream_id, _CANCEL.to_bytes(4, "big"))


def _grpc_timeout(seconds: float) -> str:
    """The ``grpc-timeout`` value for ``seconds``: at most 8 digits, rounded up."""
    for unit, scale in (("u", 1_000_000), ("m", 1000), ("S", 1), ("M", 1 / 60), ("H", 1 / 3600)):
        value = max(1, -int(-seconds * scale // 1))
        if value <= 99_999_999:
            return f"{value}{unit}"
    return "99999999H"


def _metadata_field(key: str, value: str | bytes) -> bytes:
    """One caller metadata entry as an HPACK literal, validated like grpcio does."""
    if not key or not _TOKEN.issuperset(key):
        raise ValueError(f"metadata key {key!r}: use lowercase ASCII letters, digits, '-_.'")
    if key in _RESERVED or key.startswith("grpc-"):
        raise ValueError(f"metadata key {key!r} is reserved")
    if key.endswith("-bin"):
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"metadata {key!r}: a -bin key needs a bytes value")
        from binascii import b2a_base64  # builtin module, cheap; rarely needed

        text = b2a_base64(value, newline=False).decode("ascii").rstrip("=")
    elif not isinstance(value, str):
        raise TypeError(f"metadata {key!r}: value must be str, not {type(value).__name__}")
    elif not (value.isascii() and value.isprintable()):
        raise ValueError(f"metadata {key!r}: value must be printable ASCII")
    else:
        text = value
    return hpack.encode_literal(key, text)


def _watch_silence(sock: _socket.socket, seconds: float) -> None:
    """Have the kernel drop ``sock`` once its peer is silent for ``seconds`` and three
    unanswered probes a second apart (a lost packet is not a dead peer)."""
    idle = max(1, round(seconds))
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_KEEPALIVE, 1)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_KEEPIDLE, idle)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_KEEPINTVL, 1)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_KEEPCNT, 3)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_USER_TIMEOUT, (idle + 3) * 1000)
