"""GPU discovery: real NVIDIA GPUs through ``nvidia-smi``, or fake devices from config.

``GpuDiscovery`` is the interface; ``gpu_discovery`` picks the implementation
from gres.conf (``AutoDetect=nvml|nvidia``, ``File=/dev/nvidia[0-3]``,
``Count=8``) or the agent's ``--fake-gpus`` flag.

Imports minislurm.config.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Protocol

from minislurm.gresconf import GresConfig


@dataclass(frozen=True)
class Gpu:
    """One GPU: its device index (what CUDA_VISIBLE_DEVICES names) and identity."""

    index: int
    name: str = ""
    uuid: str = ""
    memory_mb: int = 0


class GpuDiscovery(Protocol):
    """Finds the GPUs of this node."""

    def discover(self) -> list[Gpu]:
        """The node's GPUs, by index."""
        ...


class GpuDiscoveryError(Exception):
    """GPUs were configured but could not be found."""


@dataclass(frozen=True)
class FakeGpus:
    """``count`` pretend devices with indices 0..count-1 (tests, laptops, demos)."""

    count: int

    def discover(self) -> list[Gpu]:
        """The fake GPUs."""
        return [Gpu(i, name="fake") for i in range(self.count)]


QUERY = "index,uuid,name,memory.total"


def parse_nvidia_smi(text: str) -> list[Gpu]:
    """Parse ``nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits``.

    Args:
        text: its output, one GPU per line: ``0, GPU-8f..., NVIDIA H100 80GB HBM3, 81559``.

    Returns:
        The GPUs, by index.

    Raises:
        GpuDiscoveryError: a line does not have the four fields.
    """
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 4 or not fields[0].isdigit():
            raise GpuDiscoveryError(f"unexpected nvidia-smi line: {line!r}")
        memory = int(fields[3]) if fields[3].isdigit() else 0
        gpus.append(Gpu(int(fields[0]), name=fields[2], uuid=fields[1], memory_mb=memory))
    return sorted(gpus, key=lambda g: g.index)


@dataclass(frozen=True)
class NvidiaSmiGpus:
    """Real NVIDIA GPUs, as ``nvidia-smi`` lists them."""

    command: str = "nvidia-smi"

    def discover(self) -> list[Gpu]:
        """Run nvidia-smi and parse its answer.

        Raises:
            GpuDiscoveryError: nvidia-smi is missing or failed.
        """
        path = shutil.which(self.command)
        if path is None:
            raise GpuDiscoveryError(f"{self.command} not found")
        try:
            out = subprocess.run(
                [path, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
        except (subprocess.SubprocessError, OSError) as err:
            raise GpuDiscoveryError(f"{self.command} failed: {err}") from None
        return parse_nvidia_smi(out)


@dataclass(frozen=True)
class DeviceFileGpus:
    """GPUs named by device files (``File=/dev/nvidia[0-7]``): the index is the file's number."""

    files: tuple[str, ...]

    def discover(self) -> list[Gpu]:
        """One GPU per device file whose name ends in a number."""
        gpus = []
        for path in self.files:
            digits = os.path.basename(path).lstrip("abcdefghijklmnopqrstuvwxyz_-")
            if not digits.isdigit():
                raise GpuDiscoveryError(f"cannot tell the GPU index of {path}")
            gpus.append(Gpu(int(digits)))
        return sorted(gpus, key=lambda g: g.index)


def gpu_discovery(gres: list[GresConfig], fake_gpus: int | None) -> GpuDiscovery:
    """Choose how this node finds its GPUs.

    Args:
        gres: the node's gres.conf lines.
        fake_gpus: the ``--fake-gpus`` flag, which wins when given.

    Returns:
        The discovery to use (no GPUs when nothing is configured).
    """
    if fake_gpus is not None:
        return FakeGpus(fake_gpus)
    gpu_lines = [g for g in gres if g.name == "gpu"]
    if any(g.autodetect in ("nvml", "nvidia") for g in gpu_lines):
        return NvidiaSmiGpus()
    files = tuple(f for g in gpu_lines for f in g.files)
    if files:
        return DeviceFileGpus(files)
    return FakeGpus(sum(g.count for g in gpu_lines))
