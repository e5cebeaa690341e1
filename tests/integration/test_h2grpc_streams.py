"""Server-streaming calls of minislurm.wire.h2grpc and minislurm.wire.agentclient against
real grpc.aio NodeAgent servers, each in its own process.

The test servicer's LaunchTasks follows a script given in the request's argv
(see :class:`ScriptedAgent`); it waits for the client's TaskInput or
SignalTasks calls rather than sleeping, and its Ping reports what the server
saw (launches, inputs, cancellations) as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_until

from minislurm.wire import protowire
from minislurm.wire.agentclient import AgentClient, MessageStream
from minislurm.wire.h2grpc import Channel, RpcError, Stream

pytestmark = pytest.mark.timeout(90)

SERVICE = "/minislurm.v1.NodeAgent"
STDOUT, EXITED, NODE_DONE = 1, 3, 4


def payload(seq: int, size: int) -> bytes:
    """The data of event ``seq``: recognisable, different for every event."""
    return (seq.to_bytes(4, "big") * (size // 4 + 1))[:size]


# ---------------------------------------------------------------- the server process


class ScriptedAgent:  # a NodeAgentServicer, built in serve() (grpc is imported there)
    """LaunchTasks runs ``argv`` as a script, step by step:

    - ``emit N SIZE``: N STDOUT events (task_id = sequence number, data = payload()).
    - ``input``: wait for a TaskInput for this job, send it back as a STDOUT event.
    - ``signal``: wait for a SignalTasks for this job, send an EXITED event with it.
    - ``abort CODE MESSAGE``: end the call with that status.
    - ``hang``: wait until cancelled.

    and ends with NODE_DONE. SignalTasks with signal 0 never replies.
    """

    def __init__(self, pb: Any, grpc: Any) -> None:
        self.pb = pb
        self.grpc = grpc
        self.inputs: dict[int, asyncio.Queue[bytes]] = {}
        self.signals: dict[int, asyncio.Queue[int]] = {}
        self.log: dict[str, list[Any]] = {"launched": [], "cancelled": [], "inputs": []}

    def _queue(self, table: dict[int, Any], job_id: int) -> Any:
        return table.setdefault(job_id, asyncio.Queue())

    async def LaunchTasks(self, request: Any, context: Any) -> AsyncIterator[Any]:
        pb, job = self.pb, request.job_id
        self.log["launched"].append(job)
        context.add_done_callback(lambda ctx: ctx.cancelled() and self._cancelled(job))
        seq, args = 0, list(request.argv)
        try:
            while args:
                op = args.pop(0)
                if op == "emit":
                    count, size = int(args.pop(0)), int(args.pop(0))
                    for _ in range(count):
                        yield pb.TaskEvent(kind=STDOUT, task_id=seq, data=payload(seq, size))
                        seq += 1
                elif op == "input":
                    data = await self._queue(self.inputs, job).get()
                    yield pb.TaskEvent(kind=STDOUT, task_id=seq, data=data, node="input")
                    seq += 1
                elif op == "signal":
                    signum = await self._queue(self.signals, job).get()
                    yield pb.TaskEvent(kind=EXITED, task_id=seq, signal=signum)
                    seq += 1
                elif op == "abort":
                    code, message = args.pop(0), args.pop(0)
                    await context.abort(self.grpc.StatusCode[code], message)
                elif op == "hang":
                    await asyncio.Event().wait()
            yield pb.TaskEvent(kind=NODE_DONE, task_id=seq, node="done")
        except (asyncio.CancelledError, GeneratorExit):
            # CancelledError if cancelled inside the handler; GeneratorExit if
            # grpc was cancelled while the handler waited at a yield.
            self._cancelled(job)
            raise

    def _cancelled(self, job_id: int) -> None:
        if job_id not in self.log["cancelled"]:
            self.log["cancelled"].append(job_id)

    async def TaskInput(self, request: Any, context: Any) -> Any:
        self.log["inputs"].append([request.job_id, request.data.hex()])
        await self._queue(self.inputs, request.job_id).put(request.data)
        return self.pb.TaskInputReply()

    async def SignalTasks(self, request: Any, context: Any) -> Any:
        if request.signal == 0:  # a reply that never comes: for deadlines
            await asyncio.Event().wait()
        await self._queue(self.signals, request.job_id).put(request.signal)
        return self.pb.SignalTasksReply()

    async def Ping(self, request: Any, context: Any) -> Any:
        return self.pb.AgentPingReply(name=json.dumps(self.log))


async def serve() -> None:
    """Run a ScriptedAgent server on an ephemeral port; print the port; run until killed."""
    import grpc

    from minislurm.wire.rpc import minislurm_pb2 as pb
    from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

    servicer = type("Servicer", (ScriptedAgent, pb_grpc.NodeAgentServicer), {})(pb, grpc)
    server = grpc.aio.server()
    pb_grpc.add_NodeAgentServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


class AgentProcess:
    """A ScriptedAgent server in a child process."""

    def __init__(self) -> None:
        tests = Path(__file__).parents[1]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tests.parent), str(tests)))}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "serve"], stdout=subprocess.PIPE, text=True, env=env
        )
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            assert self.proc.stdout is not None
            line = self.proc.stdout.readline()  # the server prints its port once started
            assert line.strip().isdigit(), f"agent server did not start: {line!r}"
            self._port = int(line)
        return self._port

    def log(self) -> dict[str, list[Any]]:
        """What the server saw, from its Ping."""
        with AgentClient("127.0.0.1", self.port, timeout=10) as agent:
            result: dict[str, list[Any]] = json.loads(agent.call("Ping").name)
            return result

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def agents() -> Iterator[list[AgentProcess]]:
    started = [AgentProcess() for _ in range(3)]  # they start in parallel
    try:
        for agent in started:
            assert agent.port > 0
        yield started
    finally:
        for agent in started:
            agent.stop()


@pytest.fixture
def agent(agents: list[AgentProcess]) -> AgentProcess:
    return agents[0]


_job_ids = iter(range(1000, 1_000_000))


def script(*words: object) -> list[str]:
    """A ScriptedAgent script as LaunchTasksRequest.argv."""
    return [str(word) for word in words]


def launch(job_id: int, *words: object) -> bytes:
    return protowire.encode(
        "minislurm.v1.LaunchTasksRequest",
        {"job_id": job_id, "step_id": 0, "argv": script(*words)},
    )


def task_input(job_id: int, data: bytes) -> bytes:
    return protowire.encode("minislurm.v1.TaskInputRequest", {"job_id": job_id, "data": data})


def event(raw: bytes) -> protowire.Message:
    return protowire.decode("minislurm.v1.TaskEvent", raw)


def read_all(stream: Stream | MessageStream, into: list[Any]) -> None:
    """Read until the end; messages go to ``into`` even if the call fails."""
    while not stream.done:
        into.extend(stream.read(block=True))


# ---------------------------------------------------------------- the tests


def test_events_of_all_sizes_arrive_in_order_and_complete(agent: AgentProcess) -> None:
    sizes = [(50, 3), (20, 70_000), (3, 0), (2, 3_000_000), (200, 100), (1, 1)]
    words = [word for count, size in sizes for word in ("emit", count, size)]
    with AgentClient("127.0.0.1", agent.port) as client:
        stream = client.stream("LaunchTasks", job_id=next(_job_ids), argv=script(*words))
        events: list[protowire.Message] = []
        read_all(stream, events)
        assert stream.read(block=True) == []  # done stays done
    expected = [size for count, size in sizes for _ in range(count)]
    assert [e.kind for e in events] == [STDOUT] * len(expected) + [NODE_DONE]
    assert [e.task_id for e in events] == list(range(len(expected) + 1))
    for seq, (e, size) in enumerate(zip(events, expected, strict=False)):
        assert e.data == payload(seq, size)


@pytest.mark.parametrize("window", [1 << 20, (1 << 31) - 1], ids=["1MiB-window", "max-window"])
def test_fifty_megabyte_stream_never_stalls(agent: AgentProcess, window: int) -> None:
    count, size = 800, 65_536  # 52 MB: 50 refills of a 1 MiB window
    with Channel("127.0.0.1", agent.port, timeout=60, window=window) as ch:
        stream = ch.start_stream(
            f"{SERVICE}/LaunchTasks", launch(next(_job_ids), "emit", count, size)
        )
        started = time.monotonic()
        raw: list[bytes] = []
        read_all(stream, raw)
        elapsed = time.monotonic() - started
    assert len(raw) == count + 1
    assert all(event(m).data == payload(i, size) for i, m in enumerate(raw[:-1]))
    print(f"window {window}: {count * size / elapsed / 1e6:.0f} MB/s")


def test_unary_calls_while_the_stream_is_open_and_sending(agent: AgentProcess) -> None:
    job = next(_job_ids)
    with Channel("127.0.0.1", agent.port, timeout=30) as ch:
        script = launch(job, "emit", 3, 10, "input", "emit", 3000, 1000, "input", "emit", 2, 5)
        stream = ch.start_stream(f"{SERVICE}/LaunchTasks", script)
        events: list[protowire.Message] = []
        while len(events) < 3:
            events += map(event, stream.read(block=True))
        assert ch.unary(f"{SERVICE}/TaskInput", task_input(job, b"first")) == b""
        # The server now streams 3000 events; unary calls interleave with them.
        for _ in range(20):
            assert ch.unary(f"{SERVICE}/Ping", b"")
        assert ch.unary(f"{SERVICE}/TaskInput", task_input(job, b"second")) == b""
        raw: list[bytes] = []
        read_all(stream, raw)
        events += map(event, raw)
    assert [e.task_id for e in events] == list(range(3 + 1 + 3000 + 1 + 2 + 1))
    assert (events[3].node, events[3].data) == ("input", b"first")
    assert (events[3004].node, events[3004].data) == ("input", b"second")
    assert all(events[i].data == payload(i, 1000) for i in range(4, 3004))
    assert events[-1].kind == NODE_DONE


def test_three_agents_multiplexed_with_poll_in_one_thread(agents: list[AgentProcess]) -> None:
    """srun's loop: three launch streams, stdin and unary calls in one thread."""
    clients = [AgentClient("127.0.0.1", a.port) for a in agents]
    jobs = [next(_job_ids) for _ in clients]
    stdin_r, stdin_w = os.pipe()
    try:
        streams = {}
        for i, (client, job) in enumerate(zip(clients, jobs, strict=True)):
            argv = script("emit", 100 * (i + 1), 500 * 10**i, "input", "signal", "emit", 50, 7)
            stream = client.stream("LaunchTasks", job_id=job, argv=argv)
            streams[client.fileno()] = (client, job, stream)
        events: dict[int, list[protowire.Message]] = {job: [] for job in jobs}
        poller = select.poll()
        for fd in streams:
            poller.register(fd, select.POLLIN)
        poller.register(stdin_r, select.POLLIN)
        os.write(stdin_w, b"hello tasks\n")
        deadline = time.monotonic() + 60
        while streams:
            assert time.monotonic() < deadline, "the streams did not finish"
            ready = [fd for fd, (client, _, _) in streams.items() if client.pending()]
            if not ready:
                ready = [fd for fd, _ in poller.poll(10_000)]
            for fd in ready:
                if fd == stdin_r:  # forward "stdin" to every node, streams still open
                    data = os.read(stdin_r, 4096)
                    for client, job, _ in streams.values():
                        client.call("TaskInput", job_id=job, data=data)
                    poller.unregister(stdin_r)
                    continue
                client, job, stream = streams[fd]
                for e in stream.read(block=False):
                    events[job].append(e)
                    if e.node == "input":  # the echo of stdin: now signal the node
                        client.call("SignalTasks", job_id=job, signal=15)
                if stream.done:
                    poller.unregister(fd)
                    del streams[fd]
    finally:
        os.close(stdin_r)
        os.close(stdin_w)
        for client in clients:
            client.close()
    for i, job in enumerate(jobs):
        got, emitted = events[job], 100 * (i + 1)
        assert [e.task_id for e in got] == list(range(emitted + 2 + 50 + 1))
        assert all(got[k].data == payload(k, 500 * 10**i) for k in range(emitted))
        assert got[emitted].data == b"hello tasks\n"
        assert (got[emitted + 1].kind, got[emitted + 1].signal) == (EXITED, 15)
        assert got[-1].kind == NODE_DONE


def test_several_streams_on_one_channel_interleave(agent: AgentProcess) -> None:
    jobs = [next(_job_ids) for _ in range(3)]
    with Channel("127.0.0.1", agent.port, timeout=30) as ch:
        streams = [
            ch.start_stream(f"{SERVICE}/LaunchTasks", launch(job, "emit", 300, 2000, "input"))
            for job in jobs
        ]
        got: list[list[bytes]] = [[], [], []]
        while sum(map(len, got)) < 900:  # all but the end, which waits for input
            if not ch.pending():
                select.select([ch.fileno()], [], [], 10)
            for stream, out in zip(streams, got, strict=True):
                out += stream.read(block=False)
        for job in jobs:
            ch.unary(f"{SERVICE}/TaskInput", task_input(job, b"go"))
        for stream, out in zip(streams, got, strict=True):
            read_all(stream, out)
    for out in got:
        events = [event(m) for m in out]
        assert [e.task_id for e in events] == list(range(302))
        assert events[300].data == b"go"


def test_server_abort_mid_stream_raises_after_the_earlier_messages(agent: AgentProcess) -> None:
    with AgentClient("127.0.0.1", agent.port) as client:
        stream = client.stream(
            "LaunchTasks",
            job_id=next(_job_ids),
            argv=script("emit", 3, 100, "abort", "RESOURCE_EXHAUSTED", "out of ptys"),
        )
        events: list[protowire.Message] = []
        with pytest.raises(RpcError) as caught:
            read_all(stream, events)
        assert (caught.value.code, caught.value.details) == ("RESOURCE_EXHAUSTED", "out of ptys")
        assert [e.task_id for e in events] == [0, 1, 2]
        with pytest.raises(RpcError, match="RESOURCE_EXHAUSTED"):
            stream.read(block=False)  # the error stays
        assert not stream.done
        assert not client.pending()
        assert client.call("Ping").name  # the connection is still good


def test_cancel_reaches_the_server_handler(agent: AgentProcess) -> None:
    job = next(_job_ids)
    with AgentClient("127.0.0.1", agent.port) as client:
        stream = client.stream("LaunchTasks", job_id=job, argv=script("emit", 2, 10, "hang"))
        events: list[protowire.Message] = []
        while len(events) < 2:
            events += stream.read(block=True)
        stream.cancel()
        with pytest.raises(RpcError) as caught:
            stream.read(block=True)
        assert caught.value.code == "CANCELLED"
        wait_until(lambda: job in agent.log()["cancelled"])
        assert client.call("Ping").name  # the same connection goes on


def test_deadline_of_a_stream_is_deadline_exceeded(agent: AgentProcess) -> None:
    with Channel("127.0.0.1", agent.port) as ch:
        stream = ch.start_stream(
            f"{SERVICE}/LaunchTasks", launch(next(_job_ids), "emit", 1, 10, "hang"), timeout=0.5
        )
        started = time.monotonic()
        raw: list[bytes] = []
        with pytest.raises(RpcError) as caught:
            read_all(stream, raw)
        assert caught.value.code == "DEADLINE_EXCEEDED"
        assert len(raw) == 1
        assert 0.4 < time.monotonic() - started < 10


def test_deadline_while_polling_expires_one_stream_and_spares_the_other(
    agent: AgentProcess,
) -> None:
    short, long = next(_job_ids), next(_job_ids)
    with Channel("127.0.0.1", agent.port) as ch:
        doomed = ch.start_stream(f"{SERVICE}/LaunchTasks", launch(short, "hang"), timeout=0.3)
        kept = ch.start_stream(f"{SERVICE}/LaunchTasks", launch(long, "input"), timeout=30)
        with pytest.raises(RpcError) as caught:
            while True:
                select.select([ch.fileno()], [], [], 0.05)
                assert doomed.read(block=False) == []
                assert kept.read(block=False) == []
        assert caught.value.code == "DEADLINE_EXCEEDED"
        ch.unary(f"{SERVICE}/TaskInput", task_input(long, b"still here"))
        raw: list[bytes] = []
        read_all(kept, raw)
        assert [event(m).data for m in raw] == [b"still here", b""]
        wait_until(lambda: short in agent.log()["cancelled"])


def test_unary_deadline_leaves_the_open_stream_alone(agent: AgentProcess) -> None:
    job = next(_job_ids)
    signal_0 = protowire.encode("minislurm.v1.SignalTasksRequest", {"job_id": job, "signal": 0})
    with Channel("127.0.0.1", agent.port, timeout=30) as ch:
        stream = ch.start_stream(f"{SERVICE}/LaunchTasks", launch(job, "emit", 2, 9, "input"))
        fd = ch.fileno()
        with pytest.raises(RpcError) as caught:
            ch.unary(f"{SERVICE}/SignalTasks", signal_0, timeout=0.3)
        assert caught.value.code == "DEADLINE_EXCEEDED"
        ch.unary(f"{SERVICE}/TaskInput", task_input(job, b"on"))
        raw: list[bytes] = []
        read_all(stream, raw)
        assert [event(m).task_id for m in raw] == [0, 1, 2, 3]
        assert ch.fileno() == fd  # the same connection throughout


def test_connection_refused_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with AgentClient("127.0.0.1", port, timeout=5) as client, pytest.raises(RpcError) as caught:
        client.stream("LaunchTasks", job_id=1)
    assert caught.value.code == "UNAVAILABLE"


def test_agent_dying_mid_stream_is_unavailable() -> None:
    doomed = AgentProcess()
    try:
        with AgentClient("127.0.0.1", doomed.port) as client:
            stream = client.stream("LaunchTasks", job_id=1, argv=script("emit", 1, 5, "hang"))
            assert len(stream.read(block=True)) == 1
            doomed.stop()
            with pytest.raises(RpcError) as caught:
                stream.read(block=True)
            assert caught.value.code == "UNAVAILABLE"
    finally:
        doomed.stop()


def test_agent_client_checks_method_kinds(agent: AgentProcess) -> None:
    with AgentClient("127.0.0.1", agent.port) as client:
        with pytest.raises(ValueError, match="is a streaming method"):
            client.call("LaunchTasks")
        with pytest.raises(ValueError, match="is a unary method"):
            client.stream("TaskInput")
        with pytest.raises(ValueError, match="no method 'Nope'"):
            client.stream("Nope")
        assert client.fileno() == -1  # nothing connected yet
        assert client.call("Ping").name
        assert client.fileno() >= 0


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    asyncio.run(serve())
