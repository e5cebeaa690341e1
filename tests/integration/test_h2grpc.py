"""minislurm.wire.h2grpc and minislurm.wire.ctlclient against a real grpc.aio server, and
against a scripted HTTP/2 peer for the protocol's corner cases."""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from minislurm.wire import hpack, protowire
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import Channel, RpcError
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

pytestmark = pytest.mark.timeout(60)

SERVICE = "/minislurm.v1.SlurmController"
NOT_FOUND_MESSAGE = "nœud « n1 » introuvable : 100% sûr"


class EchoController(pb_grpc.SlurmControllerServicer):
    """Echo-style handlers whose replies show what the server received."""

    def __init__(self) -> None:
        self.peers: set[str] = set()
        self.calls = 0

    async def Ping(self, request: Any, context: Any) -> Any:
        self.peers.add(context.peer())
        self.calls += 1
        return pb.PingReply(cluster="test", version=str(self.calls), now=1_700_000_000)

    async def SubmitJob(self, request: Any, context: Any) -> Any:
        return pb.SubmitJobReply(job_id=len(request.spec.script), cluster=request.spec.name)

    async def GetJobs(self, request: Any, context: Any) -> Any:
        count, size = request.job_ids[0], request.job_ids[1]
        return pb.GetJobsReply(
            jobs=[pb.JobInfo(job_id=i, name=chr(65 + i % 26) * size) for i in range(count)],
            now=count,
        )

    async def GetNodes(self, request: Any, context: Any) -> Any:
        await context.abort(grpc.StatusCode.NOT_FOUND, NOT_FOUND_MESSAGE)

    async def GetPartitions(self, request: Any, context: Any) -> Any:
        await asyncio.Event().wait()  # until the deadline cancels the call

    async def GetConfig(self, request: Any, context: Any) -> Any:
        entries = [
            pb.ConfigEntry(key=k, value=v.hex() if isinstance(v, bytes) else v)
            for k, v in context.invocation_metadata()
        ]
        entries.append(pb.ConfigEntry(key="time_remaining", value=str(context.time_remaining())))
        return pb.GetConfigReply(entries=entries)


class AioServer:
    """A grpc.aio server with EchoController, on its own event loop thread."""

    def __init__(self, address: str = "127.0.0.1:0") -> None:
        self.servicer = EchoController()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server, self.port = self._run(self._start(address))

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    async def _start(self, address: str) -> tuple[Any, int]:
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", 64 << 20)])
        pb_grpc.add_SlurmControllerServicer_to_server(self.servicer, server)
        port = server.add_insecure_port(address)
        await server.start()
        return server, port

    def stop(self) -> None:
        if self.server is not None:
            self._run(self.server.stop(None))
            self.server = None

    def close(self) -> None:
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


@pytest.fixture(scope="module")
def server() -> Iterator[AioServer]:
    aio = AioServer()
    yield aio
    aio.close()


@pytest.fixture
def channel(server: AioServer) -> Iterator[Channel]:
    with Channel("127.0.0.1", server.port, timeout=30) as ch:
        yield ch


def call(
    ch: Channel, method: str, request: dict[str, Any], reply_type: str, **kwargs: Any
) -> protowire.Message:
    input_type = protowire.default_schema().services["minislurm.v1.SlurmController"][method][0]
    raw = ch.unary(f"{SERVICE}/{method}", protowire.encode(input_type, request), **kwargs)
    return protowire.decode(f"minislurm.v1.{reply_type}", raw)


# ---------------------------------------------------------------- against grpc.aio


def test_many_sequential_calls_reuse_one_connection(server: AioServer, channel: Channel) -> None:
    first = server.servicer.calls
    for i in range(1, 201):
        reply = call(channel, "Ping", {}, "PingReply")
        assert reply.version == str(first + i)
        assert reply.now == 1_700_000_000
    assert len(server.servicer.peers) == 1


def test_replies_match_their_requests(channel: Channel) -> None:
    for size in (0, 1, 100, 70_000, 3):
        reply = call(
            channel,
            "SubmitJob",
            {"spec": {"name": f"j{size}", "script": b"x" * size}},
            "SubmitJobReply",
        )
        assert (reply.job_id, reply.cluster) == (size, f"j{size}")


def test_five_megabyte_request_respects_flow_control(channel: Channel) -> None:
    script = bytes(range(256)) * (5 * 1024 * 1024 // 256)
    reply = call(
        channel, "SubmitJob", {"spec": {"name": "big", "script": script}}, "SubmitJobReply"
    )
    assert reply.job_id == len(script)


def test_twenty_megabyte_response_arrives_whole(channel: Channel) -> None:
    reply = call(channel, "GetJobs", {"job_ids": [2000, 10_000]}, "GetJobsReply")
    assert reply.now == 2000
    assert len(reply.jobs) == 2000
    assert all(job.name == chr(65 + job.job_id % 26) * 10_000 for job in reply.jobs)
    assert call(channel, "Ping", {}, "PingReply").cluster == "test"  # still in sync


def test_error_status_and_unicode_message_reach_the_client(channel: Channel) -> None:
    with pytest.raises(RpcError) as caught:
        call(channel, "GetNodes", {}, "GetNodesReply")
    assert caught.value.code == "NOT_FOUND"
    assert caught.value.details == NOT_FOUND_MESSAGE
    assert str(caught.value) == f"NOT_FOUND: {NOT_FOUND_MESSAGE}"
    assert call(channel, "Ping", {}, "PingReply").cluster == "test"


def test_deadline_exceeded_then_the_channel_recovers(channel: Channel) -> None:
    started = time.monotonic()
    with pytest.raises(RpcError) as caught:
        call(channel, "GetPartitions", {}, "GetPartitionsReply", timeout=0.5)
    assert caught.value.code == "DEADLINE_EXCEEDED"
    assert 0.4 < time.monotonic() - started < 10
    assert call(channel, "Ping", {}, "PingReply").cluster == "test"


def test_metadata_and_deadline_arrive_at_the_server(channel: Channel) -> None:
    metadata = [("x-user", "alice"), ("x-trace-id", "a.b_c-1"), ("x-token-bin", b"\x00\x01\xff")]
    reply = call(channel, "GetConfig", {}, "GetConfigReply", metadata=metadata, timeout=20)
    seen = {entry.key: entry.value for entry in reply.entries}
    assert seen["x-user"] == "alice"
    assert seen["x-trace-id"] == "a.b_c-1"
    assert seen["x-token-bin"] == "0001ff"
    assert seen["user-agent"].startswith("minislurm-h2grpc/")
    assert 0 < float(seen["time_remaining"]) <= 20


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("X-Upper", "v", ValueError),
        ("grpc-timeout", "1S", ValueError),
        ("te", "x", ValueError),
        ("x-bin", "not bytes", TypeError),
        ("x-ok", "bad\nvalue", ValueError),
        ("x-ok", 5, TypeError),
    ],
)
def test_invalid_metadata_is_rejected_before_sending(
    channel: Channel, key: str, value: Any, error: type
) -> None:
    with pytest.raises(error):
        channel.unary(f"{SERVICE}/Ping", b"", metadata=[(key, value)])


def test_connecting_to_a_closed_port_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", port, timeout=5) as ch:
        ch.unary(f"{SERVICE}/Ping", b"")
    assert caught.value.code == "UNAVAILABLE"


def test_unresolvable_host_is_unavailable() -> None:
    with pytest.raises(RpcError) as caught, Channel("no-such-host.invalid", 6817, timeout=5) as ch:
        ch.unary(f"{SERVICE}/Ping", b"")
    assert caught.value.code == "UNAVAILABLE"


def test_hostname_resolves(server: AioServer) -> None:
    with Channel("localhost", server.port, timeout=10) as ch:
        assert call(ch, "Ping", {}, "PingReply").cluster == "test"


def ipv6_loopback_works() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback_works(), reason="no IPv6 loopback")
def test_ipv6_literal_host() -> None:
    aio = AioServer("[::1]:0")
    try:
        with Channel("::1", aio.port, timeout=10) as ch:
            assert ch.authority == f"[::1]:{aio.port}"
            assert call(ch, "Ping", {}, "PingReply").cluster == "test"
    finally:
        aio.close()


def test_server_shutdown_makes_the_next_call_unavailable() -> None:
    aio = AioServer()
    try:
        with Channel("127.0.0.1", aio.port, timeout=10) as ch:
            assert call(ch, "Ping", {}, "PingReply").cluster == "test"
            aio.stop()
            with pytest.raises(RpcError) as caught:
                call(ch, "Ping", {}, "PingReply")
            assert caught.value.code == "UNAVAILABLE"
    finally:
        aio.close()


def test_controller_client_calls_methods_by_name(server: AioServer) -> None:
    with ControllerClient("127.0.0.1", server.port, timeout=10) as ctl:
        reply = ctl.call("SubmitJob", spec={"name": "train", "script": b"#!/bin/sh\n"})
        assert (reply.job_id, reply.cluster) == (10, "train")
        assert ctl.call("Ping").cluster == "test"
        jobs = ctl.call("GetJobs", {"job_ids": [3]}, job_ids=[2, 5])
        assert [job.name for job in jobs.jobs] == ["AAAAA", "BBBBB"]
        with pytest.raises(RpcError, match="NOT_FOUND"):
            ctl.call("GetNodes", names=["n1"])
        with pytest.raises(ValueError, match="no method 'Nope'"):
            ctl.call("Nope")
        with pytest.raises(TypeError, match=r"JobSpec\.uid"):
            ctl.call("SubmitJob", spec={"uid": "root"})


# ---------------------------------------------------------------- a scripted HTTP/2 peer

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = (
    0,
    1,
    3,
    4,
    6,
    7,
    8,
    9,
)


class Peer:
    """The server side of one connection, frame by frame."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buf = b""
        self.decoder = hpack.Decoder()
        self.data_frames: list[int] = []

    def recv_exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.conn.recv(65536)
            if not chunk:
                raise ConnectionError("client closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_frame(self) -> tuple[int, int, int, bytes]:
        header = self.recv_exactly(9)
        payload = self.recv_exactly(int.from_bytes(header[:3], "big"))
        return header[3], header[4], int.from_bytes(header[5:9], "big"), payload

    def send(self, kind: int, flags: int, stream: int, payload: bytes = b"") -> None:
        self.conn.sendall(
            len(payload).to_bytes(3, "big")
            + bytes((kind, flags))
            + stream.to_bytes(4, "big")
            + payload
        )

    def start(self, settings: bytes = b"") -> None:
        assert self.recv_exactly(len(PREFACE)) == PREFACE
        self.send(SETTINGS, 0, 0, settings)

    def read_request(
        self, on_data: Callable[[Peer, int], None] | None = None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """Frames until a request's END_STREAM; returns (stream, headers, body)."""
        headers: list[tuple[str, str]] = []
        block = b""
        body = b""
        while True:
            kind, flags, stream, payload = self.read_frame()
            if kind in (HEADERS, CONTINUATION):
                block += payload
                if flags & 4:  # END_HEADERS
                    headers, block = self.decoder.decode(block), b""
            elif kind == DATA:
                body += payload
                self.data_frames.append(len(payload))
                if on_data is not None:
                    on_data(self, stream)
            elif kind == SETTINGS and not flags & 1:
                self.send(SETTINGS, 1, 0)
            if kind in (HEADERS, DATA) and flags & 1:
                return stream, headers, body

    def drain(self) -> None:
        """Read until the client closes the connection.

        Closing a socket with unread input makes the kernel send RST, which
        can destroy the client's not yet read response: always drain instead.
        """
        with contextlib.suppress(ConnectionError):
            while True:
                self.read_frame()

    def respond(self, stream: int, message: bytes, status: int = 0) -> None:
        self.send(
            HEADERS,
            4,
            stream,
            b"\x88" + hpack.encode_literal("content-type", "application/grpc", 31),
        )
        self.send(DATA, 0, stream, b"\x00" + len(message).to_bytes(4, "big") + message)
        self.send(HEADERS, 5, stream, hpack.encode_literal("grpc-status", str(status)))


class ScriptedServer:
    """Accepts connections and runs one handler per connection, in order."""

    def __init__(self, *handlers: Callable[[Peer], None]) -> None:
        self.handlers = list(handlers)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(20)
        self.port = self.listener.getsockname()[1]
        self.errors: list[BaseException] = []
        self.finished = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            for handler in self.handlers:
                conn, _ = self.listener.accept()
                with conn:
                    conn.settimeout(20)
                    peer = Peer(conn)
                    with contextlib.suppress(ConnectionError):
                        handler(peer)
                    peer.drain()
        except BaseException as e:  # reported by close()
            self.errors.append(e)
        finally:
            self.finished.set()

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=30)
        assert not self.errors, self.errors


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(*handlers: Callable[[Peer], None]) -> ScriptedServer:
        servers.append(ScriptedServer(*handlers))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def goaway(last_stream: int) -> bytes:
    """A GOAWAY frame's payload: the last stream the server processed, error NO_ERROR."""
    return last_stream.to_bytes(4, "big") + (0).to_bytes(4, "big")


def refuses_the_call(peer: Peer) -> None:
    """A server that reads a call and goes away without processing it."""
    peer.start()
    peer.read_request()
    peer.send(GOAWAY, 0, 0, goaway(0))


def answers(reply: bytes) -> Callable[[Peer], None]:
    """A server that answers one call with ``reply``."""

    def handler(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.respond(stream, reply)

    return handler


def test_split_padded_huffman_and_indexed_response_parts_are_reassembled(
    scripted: Callable[..., ScriptedServer],
) -> None:
    def handler(peer: Peer) -> None:
        peer.start()
        stream, headers, body = peer.read_request()
        assert (":path", "/pkg.Svc/Method") in headers
        assert body == b"\x00\x00\x00\x00\x03abc"
        peer.send(PING, 0, 0, b"12345678")
        while peer.read_frame()[:2] != (PING, 1):  # the client must ACK our PING
            pass
        huffman = hpack.huffman_encode(b"application/grpc")
        block = (
            hpack.encode_int(4096, 5, 0x20)  # dynamic table size update
            + b"\x88"
            + hpack.encode_int(31, 6, 0x40)  # content-type, added to the table
            + hpack.encode_int(len(huffman), 7, 0x80)
            + huffman
        )
        peer.send(HEADERS, 0, stream, block[:5])
        peer.send(CONTINUATION, 0, stream, block[5:9])
        peer.send(CONTINUATION, 4, stream, block[9:])
        message = b"\x00\x00\x00\x00\x05hello"
        peer.send(DATA, 8, stream, b"\x03" + message[:4] + b"\x00\x00\x00")  # padded
        peer.send(DATA, 0, stream, message[4:])
        peer.send(HEADERS, 5, stream, b"\xbe" + hpack.encode_literal("grpc-status", "0"))

    server = scripted(handler)
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        assert ch.unary("/pkg.Svc/Method", b"abc") == b"hello"


def test_large_header_blocks_are_split_into_continuation_frames(
    scripted: Callable[..., ScriptedServer],
) -> None:
    big = "v" * 40_000

    def handler(peer: Peer) -> None:
        peer.start()
        stream, headers, _ = peer.read_request()
        assert ("x-big", big) in headers
        peer.respond(stream, b"ok")

    server = scripted(handler)
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        assert ch.unary("/pkg.Svc/Method", b"", metadata=[("x-big", big)]) == b"ok"


def test_small_peer_windows_are_never_overrun(scripted: Callable[..., ScriptedServer]) -> None:
    granted = {"conn": 65535, "stream": 65535}
    received = {"n": 0}

    def on_data(peer: Peer, stream: int) -> None:
        received["n"] = sum(peer.data_frames)
        assert received["n"] <= min(granted.values()), "client overran the flow-control window"
        assert peer.data_frames[-1] <= 16384, "DATA frame larger than SETTINGS_MAX_FRAME_SIZE"
        if received["n"] == min(granted.values()):  # the client must now wait for us
            for key, stream_id in (("conn", 0), ("stream", stream)):
                granted[key] += 20000
                peer.send(WINDOW_UPDATE, 0, stream_id, (20000).to_bytes(4, "big"))

    def handler(peer: Peer) -> None:
        peer.start()
        stream, _, body = peer.read_request(on_data)
        peer.respond(stream, len(body).to_bytes(4, "big"))

    server = scripted(handler)
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        assert ch.unary("/pkg.Svc/Upload", b"u" * 300_000) == (300_005).to_bytes(4, "big")
    assert received["n"] == 300_005


@pytest.mark.parametrize(
    ("code", "status"),
    [(7, "UNAVAILABLE"), (8, "CANCELLED"), (2, "INTERNAL"), (11, "RESOURCE_EXHAUSTED")],
)
def test_stream_reset_maps_to_a_grpc_status(
    scripted: Callable[..., ScriptedServer], code: int, status: str
) -> None:
    def handler(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.send(RST_STREAM, 0, stream, code.to_bytes(4, "big"))

    server = scripted(handler)
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", server.port, timeout=10) as ch:
        ch.unary("/pkg.Svc/Method", b"")
    assert caught.value.code == status


def test_a_call_refused_by_goaway_is_retried_once_on_a_new_connection(
    scripted: Callable[..., ScriptedServer],
) -> None:
    def fine(peer: Peer) -> None:
        peer.start()
        stream, headers, body = peer.read_request()
        assert (stream, body) == (1, b"\x00\x00\x00\x00\x03abc")
        assert (":path", "/pkg.Svc/Method") in headers
        assert ("x-key", "v") in headers
        peer.respond(stream, b"ok")

    server = scripted(refuses_the_call, fine)
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        metadata = (pair for pair in [("x-key", "v")])  # an iterator: read once, sent twice
        assert ch.unary("/pkg.Svc/Method", b"abc", metadata) == b"ok"


def test_a_call_refused_twice_is_unavailable_and_the_next_call_reconnects(
    scripted: Callable[..., ScriptedServer],
) -> None:
    server = scripted(refuses_the_call, refuses_the_call, answers(b"ok"))
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        with pytest.raises(RpcError) as caught:
            ch.unary("/pkg.Svc/Method", b"")
        assert caught.value.code == "UNAVAILABLE"
        assert "GOAWAY" in caught.value.details
        assert ch.unary("/pkg.Svc/Method", b"") == b"ok"


def test_a_call_racing_the_goaway_of_an_idle_connection_is_retried(
    scripted: Callable[..., ScriptedServer],
) -> None:
    def serve_once_then_refuse_the_next(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.respond(stream, b"first")
        late, _, _ = peer.read_request()  # sent before the client read the GOAWAY
        assert late == 3
        peer.send(GOAWAY, 0, 0, goaway(stream))

    server = scripted(serve_once_then_refuse_the_next, answers(b"second"))
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        assert ch.unary("/pkg.Svc/Method", b"") == b"first"
        assert ch.unary("/pkg.Svc/Method", b"") == b"second"


def test_a_call_the_server_may_have_processed_is_not_retried(
    scripted: Callable[..., ScriptedServer],
) -> None:
    def goes_away_after_taking_the_call(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.send(GOAWAY, 0, 0, goaway(stream))
        peer.conn.shutdown(socket.SHUT_WR)

    server = scripted(goes_away_after_taking_the_call)  # a retry would find nobody answering
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", server.port, timeout=10) as ch:
        ch.unary("/pkg.Svc/Method", b"")
    assert caught.value.code == "UNAVAILABLE"
    assert "lost" in caught.value.details


def test_goaway_received_while_idle_sends_the_next_call_to_a_new_connection(
    scripted: Callable[..., ScriptedServer],
) -> None:
    idle = threading.Event()

    def serve_once_then_go_away(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.respond(stream, b"first")
        assert idle.wait(10)
        peer.send(GOAWAY, 0, 0, goaway(stream))
        while True:  # until the client closes: no further call may come here
            kind = peer.read_frame()[0]
            assert kind not in (HEADERS, DATA), "a call was sent after the GOAWAY arrived"

    def fine(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        assert stream == 1
        peer.respond(stream, b"second")

    server = scripted(serve_once_then_go_away, fine)
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        assert ch.unary("/pkg.Svc/Method", b"") == b"first"
        idle.set()
        # wait until the GOAWAY has arrived, unread (racing it is the test above)
        assert select.select([ch.fileno()], [], [], 10)[0]
        assert ch.unary("/pkg.Svc/Method", b"") == b"second"


def test_connection_closed_while_idle_is_replaced_transparently(
    scripted: Callable[..., ScriptedServer],
) -> None:
    closed = threading.Event()

    def serve_once_then_close(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.respond(stream, b"first")
        peer.conn.shutdown(socket.SHUT_WR)  # FIN; then drain until the client closes too
        closed.set()

    server = scripted(serve_once_then_close, answers(b"second"))
    with Channel("127.0.0.1", server.port, timeout=10) as ch:
        assert ch.unary("/pkg.Svc/Method", b"") == b"first"
        assert closed.wait(10)
        assert ch.unary("/pkg.Svc/Method", b"") == b"second"


def test_connection_lost_mid_response_is_unavailable(
    scripted: Callable[..., ScriptedServer],
) -> None:
    def handler(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.send(HEADERS, 4, stream, b"\x88")
        peer.send(DATA, 0, stream, b"\x00\x00\x00\x00\x10part")
        peer.conn.shutdown(socket.SHUT_RDWR)

    server = scripted(handler)
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", server.port, timeout=10) as ch:
        ch.unary("/pkg.Svc/Method", b"")
    assert caught.value.code == "UNAVAILABLE"


def test_non_grpc_http_error_maps_by_http_status(scripted: Callable[..., ScriptedServer]) -> None:
    def handler(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.send(HEADERS, 5, stream, hpack.encode_literal(":status", "503", 8))

    server = scripted(handler)
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", server.port, timeout=10) as ch:
        ch.unary("/pkg.Svc/Method", b"")
    assert (caught.value.code, caught.value.details) == ("UNAVAILABLE", "HTTP status 503")


def test_trailers_only_status_with_percent_encoded_message(
    scripted: Callable[..., ScriptedServer],
) -> None:
    def handler(peer: Peer) -> None:
        peer.start()
        stream, _, _ = peer.read_request()
        peer.send(
            HEADERS,
            5,
            stream,
            b"\x88"
            + hpack.encode_literal("grpc-status", "3")
            + hpack.encode_literal("grpc-message", "bad %E2%9C%93 100%25 %zz%"),
        )

    server = scripted(handler)
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", server.port, timeout=10) as ch:
        ch.unary("/pkg.Svc/Method", b"")
    assert (caught.value.code, caught.value.details) == ("INVALID_ARGUMENT", "bad ✓ 100% %zz%")


def test_silent_server_hits_the_deadline(scripted: Callable[..., ScriptedServer]) -> None:
    def handler(peer: Peer) -> None:
        peer.start()
        peer.read_request()  # then say nothing until the client gives up and closes

    server = scripted(handler)
    started = time.monotonic()
    with pytest.raises(RpcError) as caught, Channel("127.0.0.1", server.port) as ch:
        ch.unary("/pkg.Svc/Method", b"", timeout=0.3)
    assert caught.value.code == "DEADLINE_EXCEEDED"
    assert time.monotonic() - started < 10
    assert server.finished.wait(20)
