"""minislurm.wire.h2grpc over TLS against real grpc.aio servers serving TLS credentials.

TLS changes what a socket read without waiting does (``SSLWantReadError``
instead of ``BlockingIOError``) and may hold decrypted bytes where ``poll``
cannot see them; these tests drive those paths: multi-megabyte requests and
replies on one kept connection, and a stream read by a ``poll`` loop. The
client context, made with ``_ssl`` so that no command imports ``ssl``, must be
the one ``ssl`` makes, on every Python.
The CA and certificate come from :mod:`minislurm.local.tlskeys` (``openssl``).
"""

from __future__ import annotations

import asyncio
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from test_h2grpc import EchoController, call
from test_h2grpc_streams import ScriptedAgent, event, launch, payload

from minislurm import tlsconf
from minislurm.config import SlurmConfig
from minislurm.local.tlskeys import make_cluster_certs
from minislurm.wire import tls
from minislurm.wire.h2grpc import Channel, RpcError
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl"),
]


class TlsServer:
    """EchoController and a ScriptedAgent on one grpc.aio TLS port, on a loop thread."""

    def __init__(self, files: tuple[str, str, str]) -> None:
        self.controller = EchoController()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(files), self.loop)
        self.server, self.port = future.result(timeout=30)

    async def _start(self, files: tuple[str, str, str]) -> tuple[Any, int]:
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", 64 << 20)])
        pb_grpc.add_SlurmControllerServicer_to_server(self.controller, server)
        agent = type("Agent", (ScriptedAgent, pb_grpc.NodeAgentServicer), {})(pb, grpc)
        pb_grpc.add_NodeAgentServicer_to_server(agent, server)
        port = tls.add_port(server, "127.0.0.1:0", files)
        await server.start()
        return server, port

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(None), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    home = tmp_path_factory.mktemp("tls")
    conf = SlurmConfig(path=str(home / "slurm.conf"), tls_type=tlsconf.TLS_OPENSSL)
    make_cluster_certs(conf)
    found = conf.tls_files()
    assert found is not None and all(Path(p).exists() for p in found)
    return found


@pytest.fixture(scope="module")
def server(files: tuple[str, str, str]) -> Iterator[TlsServer]:
    running = TlsServer(files)
    yield running
    running.close()


@pytest.fixture
def channel(server: TlsServer, files: tuple[str, str, str]) -> Iterator[Channel]:
    with Channel("127.0.0.1", server.port, 30, tls=tls.client_context(files[0])) as ch:
        yield ch


def test_large_requests_and_replies_cross_tls_whole_on_one_connection(
    server: TlsServer, channel: Channel
) -> None:
    script = bytes(range(256)) * (5 * 1024 * 1024 // 256)
    big = call(channel, "SubmitJob", {"spec": {"name": "b", "script": script}}, "SubmitJobReply")
    assert big.job_id == len(script)
    reply = call(channel, "GetJobs", {"job_ids": [2000, 10_000]}, "GetJobsReply")
    assert len(reply.jobs) == 2000
    assert all(job.name == chr(65 + job.job_id % 26) * 10_000 for job in reply.jobs)
    peers = set(server.controller.peers)
    for _ in range(50):
        assert call(channel, "Ping", {}, "PingReply").cluster == "test"
    assert len(server.controller.peers - peers) == 1  # a TLS read that would wait is no loss


def test_a_stream_read_by_a_poll_loop_arrives_whole(
    channel: Channel,
) -> None:
    count, size = 400, 3000  # events smaller than a TLS record: several per record
    stream = channel.start_stream(
        "/minislurm.v1.NodeAgent/LaunchTasks", launch(7, "emit", count, size)
    )
    poller = select.poll()
    raw: list[bytes] = []
    deadline = time.monotonic() + 30
    while not stream.done:
        assert time.monotonic() < deadline, f"stalled after {len(raw)} events"
        if channel.fileno() >= 0 and not channel.pending():
            poller.register(channel.fileno(), select.POLLIN)
            poller.poll(5_000)
            poller.unregister(channel.fileno())
        raw += stream.read(block=False)
    assert len(raw) == count + 1
    assert all(event(m).data == payload(i, size) for i, m in enumerate(raw[:-1]))


def test_a_cleartext_channel_gets_nothing_from_a_tls_port(server: TlsServer) -> None:
    with Channel("127.0.0.1", server.port, 10) as plain, pytest.raises(RpcError) as caught:
        plain.unary("/minislurm.v1.SlurmController/Ping", b"")
    assert caught.value.code == "UNAVAILABLE"


def test_the_client_context_is_the_one_ssl_makes(files: tuple[str, str, str]) -> None:
    import _ssl
    import ssl

    ours = tls.client_context(files[0])
    theirs = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    theirs.minimum_version = ssl.TLSVersion.TLSv1_2
    theirs.load_verify_locations(cafile=files[0])
    assert type(ours) is _ssl._SSLContext  # made beneath ssl, not by it
    settings = ("protocol", "options", "verify_mode", "verify_flags", "check_hostname")
    for name in (*settings, "minimum_version", "maximum_version"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.get_ca_certs() == theirs.get_ca_certs()
    assert ours.get_ciphers() == theirs.get_ciphers()


def test_a_tls_channel_does_not_import_ssl(files: tuple[str, str, str]) -> None:
    code = (
        "import sys\n"
        "from minislurm.wire import tls\n"
        f"tls.client_context({files[0]!r})\n"
        "print(' '.join(sys.modules))"
    )
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    loaded = set(done.stdout.split())
    assert "_ssl" in loaded
    assert "ssl" not in loaded  # ~30 ms of a command's start-up
