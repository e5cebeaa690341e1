"""What this node has: CPUs, memory, GPUs, and its current load.

Discovered with psutil and GPU discovery; with ``SlurmdParameters=
config_overrides`` (local clusters, tests), slurm.conf's numbers stand in for
what the hardware says, as in Slurm.

Imports nodeagent.gpus and minislurm.config.
"""

from __future__ import annotations

import logging
import os
import platform
import socket
from dataclasses import dataclass

import psutil

from minislurm.config import NodeConfig
from nodeagent.gpus import GpuDiscovery

log = logging.getLogger(__name__)

MIB = 1024 * 1024


@dataclass(frozen=True)
class NodeResources:
    """The node's hardware as registered with the controller."""

    hostname: str
    cpus: int
    real_memory: int  # MiB
    gpus: tuple[int, ...]
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    arch: str
    os: str
    boot_time: float
    gpu_links: tuple[int, ...] = ()  # the links between the GPUs, row by row (): unknown
    gpu_usage: str = ""  # how their usage is read (GpuDiscovery.usage)
    gpu_files: tuple[tuple[int, str], ...] = ()  # each GPU's index and device file, if any


def discover(node: NodeConfig | None, gpus: GpuDiscovery, config_overrides: bool) -> NodeResources:
    """Find this node's resources.

    Args:
        node: this node's slurm.conf line, if any.
        gpus: how to find GPUs.
        config_overrides: take CPUs, memory and layout from slurm.conf.

    Returns:
        The resources.

    Raises:
        nodeagent.gpus.GpuDiscoveryError: configured GPUs cannot be found.
    """
    uname = os.uname()
    discovered = gpus.discover()
    found = tuple(g.index for g in discovered)
    links = gpus.links()
    flat: tuple[int, ...] = ()
    if links is not None and sorted(links.gpus) == sorted(found):
        flat = tuple(links.between(a, b) for a in found for b in found)
    elif links is not None:
        log.warning("GPU links are for GPUs %s, not %s: not used", list(links.gpus), list(found))
    cpus = psutil.cpu_count(logical=True) or 1
    memory = psutil.virtual_memory().total // MIB
    sockets, cores, threads = 1, cpus, 1
    if node is not None and config_overrides:
        cpus, memory = node.cpus, node.real_memory_mb
        sockets, cores, threads = node.sockets, node.cores_per_socket, node.threads_per_core
    return NodeResources(
        hostname=socket.gethostname(),
        cpus=cpus,
        real_memory=memory,
        gpus=found,
        sockets=sockets,
        cores_per_socket=cores,
        threads_per_core=threads,
        arch=platform.machine(),
        os=f"{uname.sysname} {uname.release} {uname.version}",
        boot_time=psutil.boot_time(),
        gpu_links=flat,
        gpu_usage=gpus.usage if found else "",
        gpu_files=tuple((g.index, g.device) for g in discovered if g.device),
    )


def current_load() -> tuple[float, int]:
    """The one-minute load average and free memory (MiB), for heartbeats.

    Returns:
        ``(load, free_mib)``.
    """
    return os.getloadavg()[0], psutil.virtual_memory().available // MIB
