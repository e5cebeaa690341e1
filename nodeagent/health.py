"""HealthCheckProgram: the site's check of a node, run by slurmd as Slurm's slurmd runs it.

It runs for each node a slurmd serves (``SLURMD_NODENAME`` names the node:
several may share a host) before the node registers, then every
``HealthCheckInterval`` seconds on the nodes whose state
``HealthCheckNodeState`` names, all at once or, with ``CYCLE``, one after
the other through the interval; ``START_ONLY`` runs it only at the start.
As on Slurm, the program itself drains a sick node (``scontrol update
nodename=$SLURMD_NODENAME state=drain reason=...``); its failure is
only logged. Beyond Slurm's environment it gets ``SLURM_CONF`` and a
``PATH`` that finds this installation's commands, so that its
``scontrol`` reaches this cluster.

Imports the standard library and minislurm.site.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterable

from minislurm.site.programs import run_programs

TIMEOUT = 60  # seconds a check may run, as Slurm's slurmd allows it
CONCURRENT = 16  # checks a slurmd process runs at once
NodeView = tuple[str, str, bool]  # a node's name, its state (IDLE, MIXED...), whether drained


def wanted(states: Iterable[str], node_state: str, drained: bool) -> bool:
    """Whether a node in ``node_state`` gets the periodic check (HealthCheckNodeState).

    Args:
        states: HealthCheckNodeState's words.
        node_state: the node's state as the controller last said it.
        drained: whether it has the DRAIN flag.

    Returns:
        True when one of the words names the node's state.
    """
    kinds = set(states)
    if "START_ONLY" in kinds:
        return False
    kinds -= {"CYCLE"}
    if not kinds or "ANY" in kinds:
        return True
    return (
        ("IDLE" in kinds and node_state == "IDLE")
        or ("NONDRAINED_IDLE" in kinds and node_state == "IDLE" and not drained)
        or ("ALLOC" in kinds and node_state == "ALLOCATED")
        or ("MIXED" in kinds and node_state == "MIXED")
    )


class HealthChecks:
    """The health checks of one slurmd process's nodes.

    Args:
        program: HealthCheckProgram ("": none).
        interval: HealthCheckInterval, seconds (0: only at the start).
        states: HealthCheckNodeState.
        conf_path: slurm.conf, for the program's ``scontrol``.
    """

    def __init__(self, program: str, interval: int, states: tuple[str, ...], conf_path: str):
        self.program, self.interval, self.states = program, interval, states
        bindir = os.path.dirname(sys.executable)
        self._env = {"SLURM_CONF": conf_path, "PATH": f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin"}
        self._slots = asyncio.Semaphore(CONCURRENT)

    async def check(self, node: str) -> bool:
        """Run the program for one node.

        Args:
            node: the node it checks.

        Returns:
            Whether it succeeded (a failure is only logged, as Slurm's).
        """
        if not self.program:
            return True
        async with self._slots:
            env = self.environment(node)
            failure = await run_programs([self.program], env, TIMEOUT, f"node={node} health check")
        return failure is None

    def environment(self, node: str) -> dict[str, str]:
        """The environment of a program slurmd runs for a node (its check, its RebootProgram)."""
        return {**self._env, "SLURMD_NODENAME": node}

    async def check_all(self, nodes: Iterable[str]) -> None:
        """Run the program for every node, some at once (at slurmd's start).

        Args:
            nodes: the nodes.
        """
        if self.program:
            await asyncio.gather(*(self.check(node) for node in nodes))

    async def run(self, nodes: Callable[[], list[NodeView]]) -> None:
        """Check the nodes every interval, for ever (nothing without a program or interval).

        Args:
            nodes: each node's name, state and drain flag, as last heard.
        """
        if not self.program or not self.interval or "START_ONLY" in self.states:
            return
        while True:
            if "CYCLE" in self.states:
                views = nodes()
                for name, state, drained in views:
                    await asyncio.sleep(self.interval / max(len(views), 1))
                    if wanted(self.states, state, drained):
                        await self.check(name)
            else:
                await asyncio.sleep(self.interval)
                views = nodes()
                await self.check_all(n for n, s, d in views if wanted(self.states, s, d))
