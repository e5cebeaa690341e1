"""A minimal unary gRPC client over HTTP/2 on a plain socket, for the commands.

grpcio costs the commands more start-up time than their whole budget, so they
talk to the controller's grpcio server with this instead: cleartext HTTP/2
with prior knowledge (RFC 9113), one unary call at a time per connection
(streams 1, 3, 5, ...), request headers as HPACK literals, responses decoded
with a full HPACK decoder (minislurm.hpack). It honours the peer's flow
control and frame size, so multi-megabyte requests and responses work, and
maps failures to gRPC status names in :class:`RpcError`.

Not thread-safe: use one :class:`Channel` per thread. Imports at module level
only ``_socket``, ``time`` and minislurm.hpack (no ``socket``, whose import
alone costs the commands ~15 ms); none of ctld, nodeagent or cli.
"""

from __future__ import annotations

import _socket
import time

from minislurm import hpack

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    Metadata = Iterable[tuple[str, "str | bytes"]]

USER_AGENT = "minislurm-h2grpc/0.1"

# gRPC status codes by number (grpc/status.h).
STATUS_NAMES = (
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)
# RST_STREAM error code -> gRPC status (gRPC's PROTOCOL-HTTP2.md); others INTERNAL.
_RST_STATUS = {7: "UNAVAILABLE", 8: "CANCELLED", 11: "RESOURCE_EXHAUSTED", 12: "PERMISSION_DENIED"}
# HTTP status -> gRPC status when a response is not a gRPC one; others UNKNOWN.
_HTTP_STATUS = {
    "400": "INTERNAL",
    "401": "UNAUTHENTICATED",
    "403": "PERMISSION_DENIED",
    "404": "UNIMPLEMENTED",
    "429": "UNAVAILABLE",
    "502": "UNAVAILABLE",
    "503": "UNAVAILABLE",
    "504": "UNAVAILABLE",
}

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
(
    _DATA,
    _HEADERS,
    _PRIORITY,
    _RST_STREAM,
    _SETTINGS,
    _PUSH_PROMISE,
    _PING,
    _GOAWAY,
    _WINDOW_UPDATE,
    _CONTINUATION,
) = range(10)
_END_STREAM = _ACK = 0x1
_END_HEADERS, _PADDED, _PRIORITY_FLAG = 0x4, 0x8, 0x20
_MAX_WINDOW = (1 << 31) - 1
_DEFAULT_WINDOW = 65535
_DEFAULT_FRAME = 16384  # also the largest frame we accept: we do not advertise more
_REFILL = 1 << 30  # received bytes after which a window is topped up again
_SEND_BATCH = 1 << 20  # DATA bytes queued per sendall
_RECV_CHUNK = 1 << 18
_MAX_STREAM_ID = (1 << 31) - 1
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


class RpcError(Exception):
    """A call that did not succeed, with its gRPC status.

    Args:
        code: the status name, e.g. ``"NOT_FOUND"`` or ``"UNAVAILABLE"``.
        details: the server's message (``grpc-message``) or what went wrong.
    """

    def __init__(self, code: str, details: str = "") -> None:
        super().__init__(code, details)
        self.code = code
        self.details = details

    def __str__(self) -> str:
        return f"{self.code}: {self.details}" if self.details else self.code


class _ProtocolError(Exception):
    """The peer broke HTTP/2; the connection is unusable."""


class _Call:
    """The state of the one stream in flight."""

    __slots__ = (
        "data",
        "ended",
        "headers",
        "recv_unacked",
        "refused",
        "reset",
        "send_window",
        "stream_id",
        "trailers",
    )

    def __init__(self, stream_id: int, send_window: int) -> None:
        self.stream_id = stream_id
        self.send_window = send_window
        self.headers: list[tuple[str, str]] | None = None
        self.trailers: list[tuple[str, str]] | None = None
        self.data = bytearray()
        self.ended = False
        self.reset: int | None = None
        self.refused = False
        self.recv_unacked = 0


def _frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    return (
        len(payload).to_bytes(3, "big")
        + bytes((kind, flags))
        + stream_id.to_bytes(4, "big")
        + payload
    )


def _remaining(deadline: float | None) -> float | None:
    """Seconds left before ``deadline``; TimeoutError once it has passed."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline exceeded")
    return left


class Channel:
    """One HTTP/2 connection to a gRPC server, opened on the first call.

    Args:
        host: a hostname, an IPv4 literal or an IPv6 literal (without brackets).
        port: the TCP port.
        timeout: the default deadline of each call in seconds (None: none).
        user_agent: the ``user-agent`` header sent.
    """

    def __init__(
        self, host: str, port: int, timeout: float | None = None, *, user_agent: str = USER_AGENT
    ) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._headers = b"".join(
            (
                hpack.encode_indexed(3),  # :method: POST
                hpack.encode_indexed(6),  # :scheme: http
                hpack.encode_literal(":authority", self.authority, 1),
                hpack.encode_literal("content-type", "application/grpc", 31),
                hpack.encode_literal("te", "trailers"),
                hpack.encode_literal("user-agent", user_agent, 58),
            )
        )
        self._sock: _socket.socket | None = None
        self._reset()

    def _reset(self) -> None:
        self._inbuf = bytearray()
        self._out = bytearray()
        self._next_stream = 1
        self._decoder = hpack.Decoder()
        self._peer_frame = _DEFAULT_FRAME
        self._peer_window = _DEFAULT_WINDOW  # initial window of each new stream
        self._send_window = _DEFAULT_WINDOW  # the connection's
        self._recv_unacked = 0
        self._goaway = False
        self._call: _Call | None = None
        self._continuing: tuple[int, int, bytearray] | None = None

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (a later call opens a new one)."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        if self._call is None and not self._out:  # between calls: say goodbye politely
            try:
                sock.settimeout(0.0)
                sock.send(_frame(_GOAWAY, 0, 0, bytes(8)))
            except OSError:
                pass
        sock.close()

    def unary(
        self, path: str, request: bytes, metadata: Metadata = (), timeout: float | None = None
    ) -> bytes:
        """Make one unary call.

        Args:
            path: ``/package.Service/Method``.
            request: the serialized request message.
            metadata: ``(key, value)`` pairs; keys lowercase ASCII, values
                printable ASCII ``str`` (or ``bytes`` for keys ending ``-bin``).
            timeout: this call's deadline in seconds (default: the channel's).

        Returns:
            The serialized response message.

        Raises:
            RpcError: the server's non-OK status, or DEADLINE_EXCEEDED,
                UNAVAILABLE (cannot connect, connection lost, server going
                away), INTERNAL (protocol violation, malformed response).
            ValueError, TypeError: bad path or metadata.
        """
        if timeout is None:
            timeout = self.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        block = self._headers + hpack.encode_literal(":path", path, 4)
        if timeout is not None:
            block += hpack.encode_literal("grpc-timeout", _grpc_timeout(timeout))
        block += b"".join(_metadata_field(key, value) for key, value in metadata)
        try:
            call = self._exchange(block, request, deadline)
        except TimeoutError:
            self.close()
            raise RpcError("DEADLINE_EXCEEDED", f"deadline of {timeout}s exceeded") from None
        except _ProtocolError as e:
            self.close()
            raise RpcError(
                "INTERNAL", f"HTTP/2 protocol error from {self.authority}: {e}"
            ) from None
        except OSError as e:
            self.close()
            raise RpcError("UNAVAILABLE", f"connection to {self.authority} lost: {e}") from None
        finally:
            self._call = None
        return _response(call)

    def _exchange(self, block: bytes, request: bytes, deadline: float | None) -> _Call:
        if not self._usable():
            self.close()
            self._connect(deadline)
        call = self._call = _Call(self._next_stream, self._peer_window)
        self._next_stream += 2
        self._queue_headers(call.stream_id, block)
        self._send_message(call, request, deadline)
        while not call.ended:
            self._read_frame(deadline)
        self._flush(deadline)
        return call

    def _connect(self, deadline: float | None) -> None:
        # An ASCII host goes as bytes: for str, getaddrinfo loads the "idna" codec,
        # whose imports (re, enum, ...) cost a command ~17 ms.
        host: str | bytes = self.host.encode("ascii") if self.host.isascii() else self.host
        try:
            addresses = _socket.getaddrinfo(
                host, self.port, 0, _socket.SOCK_STREAM, _socket.IPPROTO_TCP
            )
        except OSError as e:
            raise RpcError("UNAVAILABLE", f"cannot resolve {self.host!r}: {e}") from None
        error: OSError | None = None
        for family, kind, proto, _, address in addresses:
            sock = _socket.socket(family, kind, proto)
            try:
                sock.settimeout(_remaining(deadline))
                sock.connect(address)
            except TimeoutError:
                sock.close()
                raise RpcError(
                    "DEADLINE_EXCEEDED", f"deadline exceeded connecting to {self.authority}"
                ) from None
            except OSError as e:
                sock.close()
                error = e
                continue
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            self._reset()
            self._sock = sock
            self._out += (
                _PREFACE
                + _frame(
                    _SETTINGS,
                    0,
                    0,
                    b"".join(
                        (
                            (2).to_bytes(2, "big") + (0).to_bytes(4, "big"),  # ENABLE_PUSH 0
                            (4).to_bytes(2, "big")
                            + _MAX_WINDOW.to_bytes(4, "big"),  # INITIAL_WINDOW
                        )
                    ),
                )
                + _frame(_WINDOW_UPDATE, 0, 0, (_MAX_WINDOW - _DEFAULT_WINDOW).to_bytes(4, "big"))
            )
            return
        raise RpcError("UNAVAILABLE", f"failed to connect to {self.authority}: {error}")

    def _usable(self) -> bool:
        """Handle what arrived while idle; False if the connection cannot take a call."""
        sock = self._sock
        if sock is None or self._goaway or self._next_stream > _MAX_STREAM_ID:
            return False
        sock.settimeout(0.0)
        try:
            chunk = sock.recv(_RECV_CHUNK)
        except BlockingIOError:
            chunk = None
        except OSError:
            return False
        if chunk == b"":  # the server closed the connection (idle timeout, restart)
            return False
        if chunk:
            self._inbuf += chunk
        # Frames that came after the last call's end (GOAWAY, PING, SETTINGS).
        while len(self._inbuf) >= 9 and len(self._inbuf) >= 9 + _frame_length(self._inbuf):
            self._next_frame()
        return not self._goaway

    # ------------------------------------------------------------ sending

    def _flush(self, deadline: float | None) -> None:
        if self._out and self._sock is not None:
            self._sock.settimeout(_remaining(deadline))
            self._sock.sendall(self._out)
            del self._out[:]

    def _queue_headers(self, stream_id: int, block: bytes) -> None:
        size = self._peer_frame
        chunks = [block[i : i + size] for i in range(0, len(block), size)] or [b""]
        for i, chunk in enumerate(chunks):
            last = _END_HEADERS if i == len(chunks) - 1 else 0
            self._out += _frame(_HEADERS if i == 0 else _CONTINUATION, last, stream_id, chunk)

    def _send_message(self, call: _Call, request: bytes, deadline: float | None) -> None:
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
        if offset < total and call.reset is None:  # answered early: stop the upload
            self._out += _frame(_RST_STREAM, 0, call.stream_id, (8).to_bytes(4, "big"))

    # ------------------------------------------------------------ receiving

    def _read_frame(self, deadline: float | None) -> None:
        if len(self._inbuf) < 9:
            self._fill(9, deadline)
        length = _frame_length(self._inbuf)
        if length > _DEFAULT_FRAME:
            raise _ProtocolError(f"frame of {length} bytes exceeds our maximum frame size")
        if len(self._inbuf) < 9 + length:
            self._fill(9 + length, deadline)
        self._next_frame()

    def _fill(self, size: int, deadline: float | None) -> None:
        self._flush(deadline)  # never wait for the server while it waits for us
        sock = self._sock
        assert sock is not None
        while len(self._inbuf) < size:
            sock.settimeout(_remaining(deadline))
            chunk = sock.recv(max(_RECV_CHUNK, size - len(self._inbuf)))
            if not chunk:
                raise ConnectionResetError("the server closed the connection")
            self._inbuf += chunk

    def _next_frame(self) -> None:
        buf = self._inbuf
        length = _frame_length(buf)
        kind, flags = buf[3], buf[4]
        stream_id = int.from_bytes(buf[5:9], "big") & _MAX_STREAM_ID
        payload = bytes(buf[9 : 9 + length])
        del buf[: 9 + length]
        if self._continuing is not None and kind != _CONTINUATION:
            raise _ProtocolError(f"frame type {kind} inside a header block")
        handler = _HANDLERS.get(kind)
        if handler is not None:  # unknown frame types are ignored (RFC 9113 5.5)
            handler(self, flags, stream_id, payload)

    def _on_data(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise _ProtocolError("DATA on stream 0")
        self._recv_unacked += len(payload)
        if self._recv_unacked >= _REFILL:
            self._out += _frame(_WINDOW_UPDATE, 0, 0, self._recv_unacked.to_bytes(4, "big"))
            self._recv_unacked = 0
        call = self._call
        if call is None or stream_id != call.stream_id or call.ended:
            return
        call.recv_unacked += len(payload)
        if call.recv_unacked >= _REFILL:
            self._out += _frame(_WINDOW_UPDATE, 0, stream_id, call.recv_unacked.to_bytes(4, "big"))
            call.recv_unacked = 0
        call.data += _unpad(flags, payload)
        if flags & _END_STREAM:
            call.ended = True

    def _on_headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise _ProtocolError("HEADERS on stream 0")
        payload = _unpad(flags, payload)
        if flags & _PRIORITY_FLAG:
            payload = payload[5:]
        if flags & _END_HEADERS:
            self._on_header_block(flags, stream_id, payload)
        else:
            self._continuing = (stream_id, flags, bytearray(payload))

    def _on_continuation(self, flags: int, stream_id: int, payload: bytes) -> None:
        pending = self._continuing
        if pending is None or pending[0] != stream_id:
            raise _ProtocolError("CONTINUATION without a header block in progress")
        pending[2].extend(payload)
        if flags & _END_HEADERS:
            self._continuing = None
            self._on_header_block(pending[1], stream_id, bytes(pending[2]))

    def _on_header_block(self, flags: int, stream_id: int, block: bytes) -> None:
        try:  # decode every block, whatever its stream: the HPACK table is shared
            headers = self._decoder.decode(block)
        except ValueError as e:
            raise _ProtocolError(str(e)) from None
        call = self._call
        if call is None or stream_id != call.stream_id or call.ended:
            return
        if call.headers is None:
            call.headers = headers
            if flags & _END_STREAM:  # Trailers-Only
                call.trailers = headers
        else:
            call.trailers = headers
        if flags & _END_STREAM:
            call.ended = True

    def _on_rst_stream(self, flags: int, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ProtocolError("RST_STREAM of the wrong size")
        call = self._call
        if call is not None and stream_id == call.stream_id and not call.ended:
            call.reset = int.from_bytes(payload, "big")
            call.ended = True

    def _on_settings(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0 or len(payload) % 6:
            raise _ProtocolError("malformed SETTINGS")
        if flags & _ACK:
            return
        for i in range(0, len(payload), 6):
            ident = int.from_bytes(payload[i : i + 2], "big")
            value = int.from_bytes(payload[i + 2 : i + 6], "big")
            if ident == 4:  # INITIAL_WINDOW_SIZE: applies to open streams too
                if value > _MAX_WINDOW:
                    raise _ProtocolError("SETTINGS_INITIAL_WINDOW_SIZE too large")
                if self._call is not None:
                    self._call.send_window += value - self._peer_window
                self._peer_window = value
            elif ident == 5:  # MAX_FRAME_SIZE
                if not _DEFAULT_FRAME <= value < 1 << 24:
                    raise _ProtocolError("SETTINGS_MAX_FRAME_SIZE out of range")
                self._peer_frame = value
        self._out += _frame(_SETTINGS, _ACK, 0)

    def _on_ping(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0 or len(payload) != 8:
            raise _ProtocolError("malformed PING")
        if not flags & _ACK:
            self._out += _frame(_PING, _ACK, 0, payload)

    def _on_goaway(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0 or len(payload) < 8:
            raise _ProtocolError("malformed GOAWAY")
        self._goaway = True
        last_stream = int.from_bytes(payload[:4], "big") & _MAX_STREAM_ID
        call = self._call
        if call is not None and call.stream_id > last_stream and not call.ended:
            call.refused = True  # never processed: the server is shutting down
            call.ended = True

    def _on_window_update(self, flags: int, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ProtocolError("WINDOW_UPDATE of the wrong size")
        increment = int.from_bytes(payload, "big") & _MAX_WINDOW
        if stream_id == 0:
            self._send_window += increment
            if self._send_window > _MAX_WINDOW:
                raise _ProtocolError("connection flow-control window overflow")
        elif self._call is not None and stream_id == self._call.stream_id:
            self._call.send_window += increment

    def _on_push_promise(self, flags: int, stream_id: int, payload: bytes) -> None:
        raise _ProtocolError("PUSH_PROMISE although push is disabled")


_HANDLERS = {
    _DATA: Channel._on_data,
    _HEADERS: Channel._on_headers,
    _RST_STREAM: Channel._on_rst_stream,
    _SETTINGS: Channel._on_settings,
    _PUSH_PROMISE: Channel._on_push_promise,
    _PING: Channel._on_ping,
    _GOAWAY: Channel._on_goaway,
    _WINDOW_UPDATE: Channel._on_window_update,
    _CONTINUATION: Channel._on_continuation,
}


def _frame_length(buf: bytearray) -> int:
    return int.from_bytes(buf[0:3], "big")


def _unpad(flags: int, payload: bytes) -> bytes:
    if not flags & _PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise _ProtocolError("padding longer than the frame")
    return payload[1 : len(payload) - payload[0]]


def _response(call: _Call) -> bytes:
    """The response message of a finished call, or its error as RpcError."""
    if call.refused:
        raise RpcError("UNAVAILABLE", "the server is going away (GOAWAY); call not processed")
    if call.trailers is None or call.headers is None:
        if call.reset is not None:
            raise RpcError(
                _RST_STATUS.get(call.reset, "INTERNAL"),
                f"stream reset by the server (HTTP/2 error code {call.reset})",
            )
        raise RpcError("INTERNAL", "the server ended the stream without trailers")
    headers = dict(call.headers)
    status = headers.get(":status", "")
    if status != "200":
        raise RpcError(_HTTP_STATUS.get(status, "UNKNOWN"), f"HTTP status {status or 'missing'}")
    trailers = dict(call.trailers)
    number = trailers.get("grpc-status")
    if number is None:
        raise RpcError("UNKNOWN", "the response has no grpc-status")
    code = STATUS_NAMES[int(number)] if number.isdigit() and int(number) < 17 else "UNKNOWN"
    if code != "OK":
        raise RpcError(code, _percent_decode(trailers.get("grpc-message", "")))
    if not headers.get("content-type", "").startswith("application/grpc"):
        raise RpcError("UNKNOWN", f"content-type {headers.get('content-type')!r} is not gRPC")
    return _unframe(call.data)


def _unframe(data: bytearray) -> bytes:
    if len(data) < 5:
        raise RpcError("INTERNAL", "the server sent no response message")
    if data[0] != 0:
        raise RpcError("INTERNAL", "the server sent a compressed message; none was offered")
    if len(data) != 5 + int.from_bytes(data[1:5], "big"):
        raise RpcError("INTERNAL", "the response is not exactly one message")
    return bytes(data[5:])


def _percent_decode(text: str) -> str:
    """Decode ``grpc-message`` (percent-encoded UTF-8)."""
    if "%" not in text:
        return text
    raw, i = bytearray(), 0
    while i < len(text):
        hex_digits = text[i + 1 : i + 3]
        if (
            text[i] == "%"
            and len(hex_digits) == 2
            and all(c in "0123456789abcdefABCDEF" for c in hex_digits)
        ):
            raw.append(int(hex_digits, 16))
            i += 3
        else:
            raw += text[i].encode("latin-1")
            i += 1
    return raw.decode("utf-8", "replace")


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
