"""HTTP/2 for minislurm.wire.h2grpc: frames, the calls' stream state, and the receiving side.

:class:`FrameReceiver` reads frames off a channel's socket and applies each
one (DATA, HEADERS, SETTINGS, WINDOW_UPDATE, GOAWAY, ...) to the connection
and to the state of its open calls (:class:`_Call`); :class:`h2grpc.Channel`
is one, and adds the calls and the sending side. Here too: the gRPC status
of an ended call (:func:`_final_status`) and :class:`RpcError`. The names with a
leading underscore are h2grpc's alone.

Imports at module level only minislurm.wire.tls (``_socket``); none of ctld,
nodeagent or cli.
"""

from __future__ import annotations

import time

from minislurm.wire.tls import TlsSocket

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket

    from minislurm.wire import hpack

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
_CANCEL = 8  # the RST_STREAM error code
_MAX_WINDOW = (1 << 31) - 1
_DEFAULT_WINDOW = 65535
_DEFAULT_FRAME = 16384
_MAX_FRAME = 1 << 18  # the largest frame we accept (SETTINGS_MAX_FRAME_SIZE we advertise)
_RECV_CHUNK = 1 << 18
_PUMP_LIMIT = 1 << 22  # bytes one non-blocking read takes from the socket at most
_MAX_STREAM_ID = (1 << 31) - 1


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


class Unreachable(RpcError):
    """UNAVAILABLE before anything was sent: the server could not be connected to."""


class _ProtocolError(Exception):
    """The peer broke HTTP/2; the connection is unusable."""


class _Call:
    """The state of one call (one HTTP/2 stream).

    Receive flow control of a stream: ``received`` bytes arrived, ``queued``
    of them sit in complete messages not yet handed to the caller, and
    ``credited`` were given back to the server beyond the initial window. The
    server may thus send ``window - queued`` bytes ahead of the reader.
    """

    __slots__ = (
        "credited",
        "data",
        "deadline",
        "ended",
        "error",
        "headers",
        "messages",
        "queued",
        "received",
        "refused",
        "reset",
        "send_window",
        "stream_id",
        "streaming",
        "timeout",
        "trailers",
    )

    def __init__(
        self,
        stream_id: int,
        send_window: int,
        streaming: bool,
        timeout: float | None,
        deadline: float | None,
    ) -> None:
        self.stream_id = stream_id
        self.send_window = send_window
        self.streaming = streaming
        self.timeout = timeout
        self.deadline = deadline
        self.headers: list[tuple[str, str]] | None = None
        self.trailers: list[tuple[str, str]] | None = None
        self.data = bytearray()  # a unary reply; a stream's incomplete next message
        self.messages: list[bytes] = []
        self.ended = False
        self.reset: int | None = None
        self.error: RpcError | None = None  # decided on our side: deadline, lost, refused
        self.refused = False  # above a GOAWAY's last stream: the server never processed it
        self.received = self.queued = self.credited = 0


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


class FrameReceiver:
    """The receiving half of an HTTP/2 client connection (a base of ``h2grpc.Channel``).

    It reads whole frames into ``_inbuf`` and applies them; what it sends in
    answer (SETTINGS and PING acknowledgements, WINDOW_UPDATE, RST_STREAM) it
    queues on ``_out``. Ending a call's stream (:meth:`_end`), crediting a
    stream's window back (:meth:`_credit`) and writing ``_out`` out
    (:meth:`_flush`) are the channel's.
    """

    _sock: _socket.socket | TlsSocket | None
    _would_block: tuple[type[OSError], ...]
    _inbuf: bytearray
    _out: bytearray
    _decoder: hpack.Decoder
    _open: dict[int, _Call]
    _continuing: tuple[int, int, bytearray] | None
    _refill: int
    _recv_unacked: int
    _peer_window: int
    _peer_frame: int
    _send_window: int
    _goaway: bool

    def _end(self, call: _Call) -> None:
        raise NotImplementedError  # the channel's

    def _credit(self, call: _Call) -> None:
        raise NotImplementedError  # the channel's

    def _flush(self, deadline: float | None) -> None:
        raise NotImplementedError  # the channel's

    def _tls_pending(self) -> bool:
        """Whether TLS holds decrypted bytes the socket's descriptor will not wake for."""
        sock = self._sock
        return isinstance(sock, TlsSocket) and sock.pending() > 0

    def _read_frame(self, deadline: float | None) -> None:
        if len(self._inbuf) < 9:
            self._fill(9, deadline)
        length = _frame_length(self._inbuf)
        if length > _MAX_FRAME:
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

    def _pump(self, deadline: float | None) -> None:
        """Read what the socket holds without waiting and handle every whole frame."""
        sock = self._sock
        assert sock is not None
        sock.settimeout(0.0)
        taken = 0
        while taken < _PUMP_LIMIT:
            try:
                chunk = sock.recv(_RECV_CHUNK)
            except self._would_block:
                break
            if not chunk:
                self._drain_buffered()  # what came before the close still counts
                raise ConnectionResetError("the server closed the connection")
            self._inbuf += chunk
            taken += len(chunk)
            if len(chunk) < _RECV_CHUNK and not self._tls_pending():
                break
        self._drain_buffered()
        self._flush(deadline)

    def _drain_buffered(self) -> None:
        """Handle every whole frame already read from the socket."""
        buf = self._inbuf
        while len(buf) >= 9:
            length = _frame_length(buf)
            if length > _MAX_FRAME:
                raise _ProtocolError(f"frame of {length} bytes exceeds our maximum frame size")
            if len(buf) < 9 + length:
                return
            self._next_frame()

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
        # The connection's window is credited on arrival, so that a stream whose
        # reader lags never holds up the others; each stream's own window bounds it.
        self._recv_unacked += len(payload)
        if self._recv_unacked >= self._refill:
            self._out += _frame(_WINDOW_UPDATE, 0, 0, self._recv_unacked.to_bytes(4, "big"))
            self._recv_unacked = 0
        call = self._open.get(stream_id)
        if call is None:  # cancelled or expired: its data only counts for the connection
            return
        call.received += len(payload)
        call.data += _unpad(flags, payload)
        if call.streaming and len(call.data) >= 5:
            try:
                messages = split_messages(call.data)
            except ValueError as e:
                call.error = RpcError("INTERNAL", str(e))
                self._out += _frame(_RST_STREAM, 0, stream_id, _CANCEL.to_bytes(4, "big"))
                self._end(call)
                return
            if messages:
                call.messages += messages
                call.queued += sum(len(m) for m in messages) + 5 * len(messages)
        if flags & _END_STREAM:
            self._end(call)
        else:
            self._credit(call)

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
        call = self._open.get(stream_id)
        if call is None:
            return
        if call.headers is None:
            call.headers = headers
            if flags & _END_STREAM:  # Trailers-Only
                call.trailers = headers
        else:
            call.trailers = headers
        if flags & _END_STREAM:
            self._end(call)

    def _on_rst_stream(self, flags: int, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ProtocolError("RST_STREAM of the wrong size")
        call = self._open.get(stream_id)
        if call is not None:
            call.reset = int.from_bytes(payload, "big")
            self._end(call)

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
                for call in self._open.values():
                    call.send_window += value - self._peer_window
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
        for call in list(self._open.values()):
            if call.stream_id > last_stream:  # never processed: the server is shutting down
                call.refused = True
                call.error = RpcError(
                    "UNAVAILABLE", "the server is going away (GOAWAY); call not processed"
                )
                self._end(call)

    def _on_window_update(self, flags: int, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ProtocolError("WINDOW_UPDATE of the wrong size")
        increment = int.from_bytes(payload, "big") & _MAX_WINDOW
        if stream_id == 0:
            self._send_window += increment
            if self._send_window > _MAX_WINDOW:
                raise _ProtocolError("connection flow-control window overflow")
        else:
            call = self._open.get(stream_id)
            if call is not None:
                call.send_window += increment

    def _on_push_promise(self, flags: int, stream_id: int, payload: bytes) -> None:
        raise _ProtocolError("PUSH_PROMISE although push is disabled")


_HANDLERS = {
    _DATA: FrameReceiver._on_data,
    _HEADERS: FrameReceiver._on_headers,
    _RST_STREAM: FrameReceiver._on_rst_stream,
    _SETTINGS: FrameReceiver._on_settings,
    _PUSH_PROMISE: FrameReceiver._on_push_promise,
    _PING: FrameReceiver._on_ping,
    _GOAWAY: FrameReceiver._on_goaway,
    _WINDOW_UPDATE: FrameReceiver._on_window_update,
    _CONTINUATION: FrameReceiver._on_continuation,
}


def split_messages(buf: bytearray) -> list[bytes]:
    """Take the complete gRPC length-prefixed messages off the front of ``buf``.

    Args:
        buf: received message bytes; an incomplete last message stays in it.

    Returns:
        The messages' payloads, in order (possibly none).

    Raises:
        ValueError: a message is flagged compressed (we offer no compression).
    """
    messages = []
    while len(buf) >= 5:
        if buf[0] != 0:
            raise ValueError("the server sent a compressed message; none was offered")
        end = 5 + int.from_bytes(buf[1:5], "big")
        if len(buf) < end:
            break
        messages.append(bytes(buf[5:end]))
        del buf[:end]
    return messages


def _frame_length(buf: bytearray) -> int:
    return int.from_bytes(buf[0:3], "big")


def _unpad(flags: int, payload: bytes) -> bytes:
    if not flags & _PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise _ProtocolError("padding longer than the frame")
    return payload[1 : len(payload) - payload[0]]


def _final_status(call: _Call) -> RpcError | None:
    """The error an ended call finished with, or None for status OK."""
    if call.error is not None:
        return call.error
    if call.trailers is None or call.headers is None:
        if call.reset is not None:
            return RpcError(
                _RST_STATUS.get(call.reset, "INTERNAL"),
                f"stream reset by the server (HTTP/2 error code {call.reset})",
            )
        return RpcError("INTERNAL", "the server ended the stream without trailers")
    headers = dict(call.headers)
    status = headers.get(":status", "")
    if status != "200":
        return RpcError(_HTTP_STATUS.get(status, "UNKNOWN"), f"HTTP status {status or 'missing'}")
    trailers = dict(call.trailers)
    number = trailers.get("grpc-status")
    if number is None:
        return RpcError("UNKNOWN", "the response has no grpc-status")
    code = STATUS_NAMES[int(number)] if number.isdigit() and int(number) < 17 else "UNKNOWN"
    if code != "OK":
        return RpcError(code, _percent_decode(trailers.get("grpc-message", "")))
    if not headers.get("content-type", "").startswith("application/grpc"):
        return RpcError("UNKNOWN", f"content-type {headers.get('content-type')!r} is not gRPC")
    return None


def _stream_status(call: _Call) -> RpcError | None:
    """Like :func:`_final_status`, for a streaming call's end."""
    error = _final_status(call)
    if error is None and call.data:
        return RpcError("INTERNAL", "the stream ended inside a message")
    return error


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
