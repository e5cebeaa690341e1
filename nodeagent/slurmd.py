"""One slurmd process: the nodes it serves and its conversation with the controller.

A slurmd serves one node, or many (``slurmd -N 'n[1-128]'``, Slurm's
multiple-slurmd idea, to emulate a large cluster on one machine). Each node
is an :class:`~nodeagent.agent.Agent` with its own spool, jobs and reports;
the process has one channel to the controller, registers all its nodes in
one ``RegisterNodes`` call and reports them alive in one ``Heartbeats`` call
per interval, so a thousand emulated nodes cost the controller a handful of
calls, not a thousand. Killing the process is the failure of all its nodes.

Imports nodeagent.agent, nodeagent.health, nodeagent.stepdpool, nodeagent.resources and
minislurm.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

import grpc

from minislurm.config import SlurmConfig, load_slurm_conf
from minislurm.daemon import GRPC_OPTIONS, KEEPALIVE_MS
from minislurm.security.authgrpc import SignCalls, daemon_signer
from minislurm.site.programs import run_programs
from minislurm.wire import tls
from minislurm.wire.rpc import minislurm_pb2 as pb
from nodeagent.agent import CALL_TIMEOUT, RETRY_MAX_SECONDS, Agent, AgentSettings
from nodeagent.controllers import Controllers
from nodeagent.health import HealthChecks, NodeView
from nodeagent.resources import NodeResources, current_load
from nodeagent.stepdpool import StepdPool
from nodeagent.steps import LaunchedJobs

log = logging.getLogger(__name__)

ALIVE_SECONDS = 1.0
# The controllers' channels try to reconnect within 2 s (gRPC's default backoff grows to
# 120 s), give a connection 2 s to open (20 s), and ping the controller every 2 s:
# a controller that comes back, or a backup that takes over, hears the nodes at once,
# and a call to a controller cut off from the network fails in seconds, when its
# pings go unanswered, rather than at its deadline (the next goes to the next one).
CONTROLLER_OPTIONS = [
    *GRPC_OPTIONS,
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", int(RETRY_MAX_SECONDS * 1000)),
    ("grpc.min_reconnect_backoff_ms", int(RETRY_MAX_SECONDS * 1000)),
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_MS),
    ("grpc.keepalive_permit_without_calls", 1),
]
REBOOT_PROGRAM_TIMEOUT = 300  # seconds RebootProgram may run (a real one does not return)


class Slurmd:
    """The agents of one process, and the calls they share.

    Args:
        nodes: each node's settings and resources.
        conf: the configuration.
        controller: the controller's ``host:port``.
        key: the cluster's key (signs the calls to the controller).
    """

    def __init__(
        self,
        nodes: Sequence[tuple[AgentSettings, NodeResources]],
        conf: SlurmConfig,
        controller: str,
        key: bytes,
    ) -> None:
        self.stepds = StepdPool()
        addresses = [controller]
        addresses += [f"{addr}:{conf.controller_port}" for _, addr in conf.backup_controllers]
        signer = SignCalls(daemon_signer(conf.auth_type, key))
        channels = [
            tls.aio_channel(address, conf.tls_files("slurmd"), CONTROLLER_OPTIONS, [signer])
            for address in addresses
        ]
        ctld = Controllers(channels, addresses)
        self._ctld = ctld
        jobs = LaunchedJobs()
        self.agents = {
            settings.node_name: Agent(settings, resources, self.stepds, ctld, jobs)
            for settings, resources in nodes
        }
        self.health = HealthChecks(
            conf.health_check_program,
            conf.health_check_interval,
            conf.health_check_node_state,
            nodes[0][0].conf_path if nodes else "",
        )
        self.port = 0
        self.heartbeat_interval = 5.0
        # A heartbeat is worth waiting for while the node is not yet declared DOWN: a busy
        # controller hears it late, and a call given up on is one it never hears.
        self._beat_timeout = max(CALL_TIMEOUT, float(conf.slurmd_timeout))
        self._tasks: list[asyncio.Task[None]] = []
        self._health: asyncio.Task[None] | None = None
        self._conf = conf
        self._wake = asyncio.Event()  # a node must register before the next heartbeat

    def agent(self, node: str) -> Agent | None:
        """The agent of a node this process serves.

        Args:
            node: the node's name; "" names the only node of a one-node slurmd.

        Returns:
            Its agent, or None when this process does not serve it.
        """
        if not node and len(self.agents) == 1:
            return next(iter(self.agents.values()))
        return self.agents.get(node)

    async def adopt(self) -> None:
        """Find every node's jobs and steps that ran on while slurmd was away (before serving)."""
        for agent in self.agents.values():
            await agent.adopt()

    async def start(self, port: int) -> None:
        """Register, heartbeat and report in the background (after :meth:`adopt`).

        Args:
            port: the port the server is bound to.
        """
        self.port = port
        loop = asyncio.get_running_loop()
        for agent in self.agents.values():
            agent.start()
        self._health = loop.create_task(self.health.run(self._node_views), name="health check")
        self._tasks = [
            loop.create_task(self._heartbeat_loop(), name="heartbeat"),
            loop.create_task(self._alive_loop(), name="alive"),
        ]

    def reconfigure(self) -> list[str]:
        """``scontrol reconfigure``: re-read slurm.conf for every node served here.

        What a running slurmd can change does (Prolog, Epilog, Task programs,
        health checks, KillWait, JobAcctGatherFrequency, RebootProgram); a
        node's own definition, ports and spool wait for a restart.

        Returns:
            What changed that only a restart applies.

        Raises:
            ConfigError: the file does not read (nothing is changed).
        """
        conf = load_slurm_conf(self._conf.path)
        waiting = [
            f"NodeName={name}" for name in self.agents if conf.node(name) != self._conf.node(name)
        ]
        if (conf.slurmd_port, conf.slurmd_spool_dir) != (
            self._conf.slurmd_port,
            self._conf.slurmd_spool_dir,
        ):
            waiting.append("SlurmdPort or SlurmdSpoolDir")
        self._conf = conf
        for agent in self.agents.values():
            agent.reconfigure(conf)
        self._beat_timeout = max(CALL_TIMEOUT, float(conf.slurmd_timeout))
        self.health.program = conf.health_check_program
        self.health.interval = conf.health_check_interval
        self.health.states = conf.health_check_node_state
        if self._health is not None:
            self._health.cancel()
            loop = asyncio.get_running_loop()
            self._health = loop.create_task(self.health.run(self._node_views), name="health check")
        log.info("reconfigured from %s", conf.path)
        for what in waiting:
            log.warning("reconfigure: %s changed; it applies once slurmd restarts", what)
        return waiting

    def reboot(self, agent: Agent) -> None:
        """``scontrol reboot``: the node restarts, as a rebooted node's slurmd would.

        RebootProgram runs first when there is one (on a real machine it does
        not come back); then the node has a new boot and start time, its
        health check runs once, and it registers again. The call returns at
        once: the controller hears of the reboot through that registration.

        Args:
            agent: the node's agent.
        """
        task = asyncio.get_running_loop().create_task(self._reboot(agent), name="reboot")
        self._tasks.append(task)

    async def _reboot(self, agent: Agent) -> None:
        node = agent.settings.node_name
        program = self._conf.reboot_program
        log.info("node=%s rebooting%s", node, f" with {program}" if program else "")
        if program:
            env = self.health.environment(node)
            await run_programs([program], env, REBOOT_PROGRAM_TIMEOUT, f"node={node} reboot")
        agent.boot_time = agent.start_time = time.time()
        await self.health.check(node)
        agent.registered = False
        self._wake.set()

    def _node_views(self) -> list[NodeView]:
        return [(name, a.node_state, a.drained) for name, a in self.agents.items()]

    async def stop(self) -> None:
        """Stop talking to the controller (running steps are left running)."""
        tasks = [*self._tasks, *([self._health] if self._health is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for agent in self.agents.values():
            await agent.stop()
        self.stepds.close()
        await self._ctld.close()

    async def _register(self, agents: list[Agent]) -> None:
        request = pb.RegisterNodesRequest(nodes=[a.registration(self.port) for a in agents])
        reply = await self._ctld.RegisterNodes(request, timeout=CALL_TIMEOUT)
        for agent, answer in zip(agents, reply.nodes, strict=True):
            self.heartbeat_interval = float(answer.heartbeat_interval or 5)
            agent.accepted(answer)
        log.info("registered %d node(s) with the controller at %s", len(agents), self._ctld.address)

    async def _beat(self, agents: list[Agent]) -> None:
        load, free = current_load()
        gpus = await asyncio.to_thread(lambda: [a.gpu_usage() for a in agents])
        request = pb.HeartbeatsRequest(
            nodes=[a.heartbeat(load, free, g) for a, g in zip(agents, gpus, strict=True)]
        )
        reply = await self._ctld.Heartbeats(request, timeout=self._beat_timeout)
        for agent, answer in zip(agents, reply.nodes, strict=True):
            if answer.reregister:
                agent.registered = False
            agent.node_state, agent.drained = answer.state, answer.drained

    async def _heartbeat_loop(self) -> None:
        await self.health.check_all(self.agents)  # before the nodes register, as Slurm's
        delay = 0.1
        while True:
            agents = list(self.agents.values())
            try:
                unregistered = [a for a in agents if not a.registered]
                if unregistered:
                    await self._register(unregistered)
                else:
                    await self._beat(agents)
                    if not all(a.registered for a in agents):
                        continue
                delay = 0.1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.heartbeat_interval)
                self._wake.clear()
            except grpc.aio.AioRpcError as err:
                # Registrations stand: a controller that restarted meanwhile asks for them
                # again in its answer to the next heartbeat. Registering every node again
                # because a busy controller answered late only made it busier.
                log.debug("controller unreachable: %s", err.details())
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def _alive_loop(self) -> None:
        """Touch each node's alive file each second, whether or not the controller answers."""
        while True:
            await asyncio.sleep(ALIVE_SECONDS)
            for agent in self.agents.values():
                try:
                    agent.launcher.touch_alive()
                except OSError as err:
                    log.warning("cannot touch the alive file: %s", err)
