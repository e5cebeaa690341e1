"""ControllerClient with backups: it finds the controller in control among real grpc.aio servers.

The primary is on 127.0.0.1, the backup on 127.0.0.2, one port, as a local
cluster's controllers are; a standby answers UNAVAILABLE with Slurm's
"standby mode" message before doing anything.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from minislurm.wire.ctlclient import STANDBY, ControllerClient
from minislurm.wire.h2grpc import RpcError, Unreachable
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

pytestmark = pytest.mark.timeout(60)


class Controller(pb_grpc.SlurmControllerServicer):
    """Answers Ping with its name, or, as a standby, refuses every call."""

    def __init__(self, name: str, standby: bool) -> None:
        self.name = name
        self.standby = standby
        self.calls = 0

    async def Ping(self, request: Any, context: Any) -> Any:
        self.calls += 1
        if self.standby:
            await context.abort(grpc.StatusCode.UNAVAILABLE, STANDBY)
        return pb.PingReply(cluster=self.name)

    async def SubmitJob(self, request: Any, context: Any) -> Any:
        self.calls += 1
        await context.abort(grpc.StatusCode.UNAVAILABLE, "the connection went away")


class Servers:
    """grpc.aio servers on one event loop thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.servers: list[grpc.aio.Server] = []

    def start(self, servicer: Controller, address: str) -> int:
        """Serve ``servicer`` at ``address`` (``host:port``); return the port bound."""

        async def start() -> int:
            server = grpc.aio.server()
            pb_grpc.add_SlurmControllerServicer_to_server(servicer, server)
            port = server.add_insecure_port(address)
            await server.start()
            self.servers.append(server)
            return port

        return asyncio.run_coroutine_threadsafe(start(), self.loop).result(timeout=30)

    def close(self) -> None:
        for server in self.servers:
            asyncio.run_coroutine_threadsafe(server.stop(None), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


@pytest.fixture
def servers() -> Iterator[Servers]:
    started = Servers()
    yield started
    started.close()


def test_a_standby_primary_sends_the_call_to_the_backup_which_is_kept(servers: Servers) -> None:
    standby, serving = Controller("ctl1", standby=True), Controller("ctl2", standby=False)
    port = servers.start(serving, "127.0.0.2:0")
    servers.start(standby, f"127.0.0.1:{port}")
    with ControllerClient("127.0.0.1", port, 10, backups=["127.0.0.2"]) as client:
        assert client.call("Ping").cluster == "ctl2"
        assert client.call("Ping").cluster == "ctl2"
    assert (standby.calls, serving.calls) == (1, 2)


def test_a_primary_that_is_gone_sends_the_call_to_the_backup(servers: Servers) -> None:
    serving = Controller("ctl2", standby=False)
    port = servers.start(serving, "127.0.0.2:0")
    with ControllerClient("127.0.0.1", port, 10, backups=["127.0.0.2"]) as client:
        assert client.call("Ping").cluster == "ctl2"


def test_with_none_in_control_the_call_is_unreachable(servers: Servers) -> None:
    first, second = Controller("ctl1", standby=True), Controller("ctl2", standby=True)
    port = servers.start(second, "127.0.0.2:0")
    servers.start(first, f"127.0.0.1:{port}")
    with ControllerClient("127.0.0.1", port, 10, backups=["127.0.0.2"]) as client:
        with pytest.raises(Unreachable) as caught:
            client.call("Ping")
    assert (caught.value.code, caught.value.details) == ("UNAVAILABLE", STANDBY)


def test_a_call_that_reached_the_controller_in_control_is_not_made_again(
    servers: Servers,
) -> None:
    primary, backup = Controller("ctl1", standby=False), Controller("ctl2", standby=False)
    port = servers.start(backup, "127.0.0.2:0")
    servers.start(primary, f"127.0.0.1:{port}")
    with ControllerClient("127.0.0.1", port, 10, backups=["127.0.0.2"]) as client:
        with pytest.raises(RpcError) as caught:
            client.call("SubmitJob", spec={"name": "x"})
    assert not isinstance(caught.value, Unreachable)
    assert (primary.calls, backup.calls) == (1, 0)
