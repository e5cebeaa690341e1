"""minislurm.wire.h2grpc's stream logic on scripted frames: message splitting,
flow-control accounting, per-stream ends. No network: the channel's socket is
an in-memory fake that the test fills with the server's frames."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minislurm.wire import hpack
from minislurm.wire.h2grpc import Channel, RpcError, Stream, split_messages

DATA, HEADERS, RST_STREAM, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 7, 8
END_STREAM, END_HEADERS, PADDED = 0x1, 0x4, 0x8


def framed(message: bytes) -> bytes:
    return b"\x00" + len(message).to_bytes(4, "big") + message


# ---------------------------------------------------------------- split_messages


@given(
    messages=st.lists(st.binary(max_size=300), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20),
)
def test_messages_split_whatever_the_chunk_boundaries(
    messages: list[bytes], cuts: list[int]
) -> None:
    wire = b"".join(map(framed, messages))
    bounds = sorted({0, len(wire), *(c for c in cuts if c < len(wire))})
    buf, got = bytearray(), []
    for start, stop in itertools.pairwise(bounds):
        buf += wire[start:stop]
        got += split_messages(buf)
    assert got == messages
    assert buf == b""


def test_an_incomplete_message_stays_buffered() -> None:
    buf = bytearray(framed(b"one") + framed(b"two")[:6])
    assert split_messages(buf) == [b"one"]
    assert buf == framed(b"two")[:6]
    buf += framed(b"two")[6:]
    assert split_messages(buf) == [b"two"]


def test_a_compressed_message_is_refused() -> None:
    with pytest.raises(ValueError, match="compressed"):
        split_messages(bytearray(b"\x01\x00\x00\x00\x01x"))


# ---------------------------------------------------------------- a channel on a fake socket


class FakeSocket:
    """Holds what the "server" sent until read; records what the client sends."""

    def __init__(self) -> None:
        self.incoming = bytearray()
        self.sent = bytearray()
        self.eof = False
        self.closed = False

    def settimeout(self, value: float | None) -> None:
        pass

    def recv(self, size: int) -> bytes:
        if not self.incoming:
            if self.eof:
                return b""
            raise BlockingIOError
        chunk = bytes(self.incoming[:size])
        del self.incoming[:size]
        return chunk

    def send(self, data: bytes) -> int:
        self.sent += data
        return len(data)

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def fileno(self) -> int:
        return 42

    def close(self) -> None:
        self.closed = True

    def frames(self) -> list[tuple[int, int, int, bytes]]:
        """What the client sent since the last call, as frames."""
        out, buf = [], self.sent
        while buf:
            length = int.from_bytes(buf[:3], "big")
            out.append(
                (buf[3], buf[4], int.from_bytes(buf[5:9], "big"), bytes(buf[9 : 9 + length]))
            )
            del buf[: 9 + length]
        return out

    def window_updates(self) -> dict[int, int]:
        """Stream id -> total increment of the WINDOW_UPDATEs sent since the last call."""
        updates: dict[int, int] = {}
        for kind, _, stream, payload in self.frames():
            if kind == WINDOW_UPDATE:
                updates[stream] = updates.get(stream, 0) + int.from_bytes(payload, "big")
        return updates


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload
    )


def response_headers(stream: int) -> bytes:
    block = b"\x88" + hpack.encode_literal("content-type", "application/grpc", 31)
    return frame(HEADERS, END_HEADERS, stream, block)


def trailers(stream: int, status: int = 0, message: str = "") -> bytes:
    block = hpack.encode_literal("grpc-status", str(status))
    if message:
        block += hpack.encode_literal("grpc-message", message)
    return frame(HEADERS, END_HEADERS | END_STREAM, stream, block)


def data_frames(stream: int, data: bytes, size: int = 16384) -> bytes:
    return b"".join(frame(DATA, 0, stream, data[i : i + size]) for i in range(0, len(data), size))


def connected(window: int = (1 << 31) - 1) -> tuple[Channel, FakeSocket]:
    ch = Channel("node1", 6818, window=window)
    sock = FakeSocket()
    ch._sock = sock  # type: ignore[assignment]
    return ch, sock


def start(ch: Channel, sock: FakeSocket, count: int = 1) -> list[Stream]:
    streams = [ch.start_stream("/minislurm.v1.NodeAgent/LaunchTasks", b"req") for _ in range(count)]
    sock.frames()  # forget the requests
    return streams


def test_messages_spanning_frames_and_frames_holding_several_are_reassembled() -> None:
    ch, sock = connected()
    (stream,) = start(ch, sock)
    wire = framed(b"a" * 10) + framed(b"") + framed(b"b" * 40_000) + framed(b"c")
    sock.incoming += response_headers(1) + frame(DATA, 0, 1, wire[:22])
    assert stream.read(block=False) == [b"a" * 10, b""]
    padded = b"\x03" + wire[22:30] + b"\x00\x00\x00"
    sock.incoming += frame(DATA, PADDED, 1, padded) + data_frames(1, wire[30:])
    assert stream.read(block=False) == [b"b" * 40_000, b"c"]
    assert not stream.done
    sock.incoming += trailers(1)
    assert stream.read(block=False) == []
    assert stream.done
    assert not ch.pending()


def test_a_stream_window_is_credited_as_its_messages_are_read() -> None:
    window = 1 << 17
    ch, sock = connected(window)
    reader, other = start(ch, sock, 2)
    sock.incoming += response_headers(1) + data_frames(1, framed(b"x" * 29_995) * 4)
    assert other.read(block=False) == []  # takes the frames in, for `reader`
    # The connection's, on arrival, in steps of at least half the window.
    assert sock.window_updates() == {0: window // 2}
    assert ch.pending()
    assert len(reader.read(block=False)) == 4
    assert sock.window_updates() == {1: 120_000}  # the stream's: once read
    assert not ch.pending()


def test_a_message_larger_than_the_window_does_not_stall() -> None:
    window = 1 << 17
    ch, sock = connected(window)
    (stream,) = start(ch, sock)
    sock.incoming += response_headers(1) + data_frames(1, framed(b"y" * 300_000)[:window])
    assert stream.read(block=False) == []
    assert sock.window_updates() == {0: window, 1: window}  # partial bytes are credited
    sock.incoming += data_frames(1, framed(b"y" * 300_000)[window:]) + trailers(1)
    assert stream.read(block=False) == [b"y" * 300_000]


def test_goaway_refuses_only_the_streams_the_server_never_saw() -> None:
    ch, sock = connected()
    first, second, third = start(ch, sock, 3)
    sock.incoming += frame(GOAWAY, 0, 0, (3).to_bytes(4, "big") + bytes(4))
    with pytest.raises(RpcError) as caught:
        third.read(block=False)
    assert (caught.value.code, "GOAWAY" in caught.value.details) == ("UNAVAILABLE", True)
    with pytest.raises(RpcError, match="UNAVAILABLE"):  # no new streams on this connection
        ch.start_stream("/minislurm.v1.NodeAgent/LaunchTasks", b"")
    for stream_id, stream in ((1, first), (3, second)):
        sock.incoming += response_headers(stream_id) + frame(DATA, 0, stream_id, framed(b"ok"))
        sock.incoming += trailers(stream_id)
        assert stream.read(block=False) == [b"ok"]
        assert stream.read(block=False) == []
        assert stream.done


def test_a_reset_or_error_status_ends_only_its_own_stream() -> None:
    ch, sock = connected()
    reset, failed, fine = start(ch, sock, 3)
    sock.incoming += response_headers(3) + frame(DATA, 0, 3, framed(b"before"))
    sock.incoming += trailers(3, 5, "no such step")
    sock.incoming += frame(RST_STREAM, 0, 1, (8).to_bytes(4, "big"))
    sock.incoming += response_headers(5) + frame(DATA, 0, 5, framed(b"fine"))
    assert fine.read(block=False) == [b"fine"]
    with pytest.raises(RpcError) as caught:
        reset.read(block=False)
    assert caught.value.code == "CANCELLED"
    assert failed.read(block=False) == [b"before"]
    with pytest.raises(RpcError) as caught:
        failed.read(block=False)
    assert (caught.value.code, caught.value.details) == ("NOT_FOUND", "no such step")
    assert not fine.done
    assert ch.fileno() == 42


def test_a_stream_ending_inside_a_message_is_internal() -> None:
    ch, sock = connected()
    (stream,) = start(ch, sock)
    sock.incoming += response_headers(1) + frame(DATA, 0, 1, framed(b"whole")[:3]) + trailers(1)
    with pytest.raises(RpcError, match="INTERNAL: the stream ended inside a message"):
        stream.read(block=False)


def test_cancel_resets_the_stream_and_late_frames_still_count_for_the_connection() -> None:
    ch, sock = connected(1 << 17)
    cancelled, other = start(ch, sock, 2)
    cancelled.cancel()
    assert [(kind, stream) for kind, _, stream, _ in sock.frames()] == [(RST_STREAM, 1)]
    sock.incoming += response_headers(1) + data_frames(1, framed(b"z" * 70_000))
    assert other.read(block=False) == []
    assert sock.window_updates() == {0: 65_536}  # half the window: one step
    with pytest.raises(RpcError, match="CANCELLED"):
        cancelled.read(block=False)
    assert not ch.pending()


def test_losing_the_connection_fails_every_open_stream_after_its_messages() -> None:
    ch, sock = connected()
    first, second = start(ch, sock, 2)
    sock.incoming += response_headers(1) + frame(DATA, 0, 1, framed(b"last words"))
    sock.eof = True
    with pytest.raises(RpcError) as caught:
        second.read(block=True)
    assert caught.value.code == "UNAVAILABLE"
    assert ch.fileno() == -1 and sock.closed
    assert ch.pending()  # the first stream's message and end wait to be read
    assert first.read(block=False) == [b"last words"]
    with pytest.raises(RpcError) as caught:
        first.read(block=False)
    assert caught.value.code == "UNAVAILABLE"
    assert not ch.pending()


def test_window_must_be_a_legal_http2_window() -> None:
    with pytest.raises(ValueError, match="window"):
        Channel("node1", 6818, window=1000)
    with pytest.raises(ValueError, match="window"):
        Channel("node1", 6818, window=1 << 31)
