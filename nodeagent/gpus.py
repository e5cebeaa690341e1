"""GPU discovery: real NVIDIA GPUs through ``nvidia-smi``, or fake devices from config.

``GpuDiscovery`` is the interface; ``gpu_discovery`` picks the implementation
from gres.conf (``AutoDetect=nvml|nvidia``, ``File=/dev/nvidia[0-3]``,
``Count=8``) or the agent's ``--fake-gpus`` flag.

The links between the GPUs come from gres.conf's ``Links=`` lines when it
has them, else, for real GPUs, from ``nvidia-smi topo -m`` (``NV18``: 18
NVLinks; ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``: none, PCIe); fake
GPUs without ``Links=`` have none.

Imports minislurm.gresconf and minislurm.gpulinks.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from typing import Protocol

from minislurm.gpulinks import SELF, GpuLinks
from minislurm.gresconf import GresConfig, link_rows

log = logging.getLogger(__name__)

LinkRows = tuple[tuple[int, ...], ...]  # gres.conf's Links=, one row per GPU line


@dataclass(frozen=True)
class Gpu:
    """One GPU: its device index (what CUDA_VISIBLE_DEVICES names) and identity."""

    index: int
    name: str = ""
    uuid: str = ""
    memory_mb: int = 0
    device: str = ""  # its device file (ConstrainDevices); "": none (fake GPUs), unknown
    pci_bus_id: str = ""  # as nvidia-smi writes it: 00000000:07:00.0


class GpuDiscovery(Protocol):
    """Finds the GPUs of this node."""

    @property
    def usage(self) -> str:
        """How their usage is read: "nvidia-smi", "fake" (nodeagent.gpuusage) or "" (not)."""
        ...

    def discover(self) -> list[Gpu]:
        """The node's GPUs, by index."""
        ...

    def links(self) -> GpuLinks | None:
        """The links between the node's GPUs (None: unknown, the GPUs are all alike)."""
        ...


class GpuDiscoveryError(Exception):
    """GPUs were configured but could not be found."""


@dataclass(frozen=True)
class FakeGpus:
    """``count`` pretend devices with indices 0..count-1 (tests, laptops, demos)."""

    count: int
    link_rows: LinkRows = ()  # gres.conf's Links=, by device index
    usage: str = "fake"

    def discover(self) -> list[Gpu]:
        """The fake GPUs."""
        return [Gpu(i, name="fake") for i in range(self.count)]

    def links(self) -> GpuLinks | None:
        """The links gres.conf gives them, if any."""
        return _configured(tuple(range(self.count)), self.link_rows)


QUERY = "index,uuid,name,memory.total,pci.bus_id"
DRIVER_GPUS = "/proc/driver/nvidia/gpus"  # the driver's: a directory per GPU, by PCI address


def parse_nvidia_smi(text: str) -> list[Gpu]:
    """Parse ``nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id --format=csv,...``.

    Args:
        text: its output (``noheader,nounits``), one GPU per line:
            ``0, GPU-8f..., NVIDIA H100 80GB HBM3, 81559, 00000000:07:00.0``.

    Returns:
        The GPUs, by index (their device files unknown: :func:`device_file`).

    Raises:
        GpuDiscoveryError: a line does not have the five fields.
    """
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 5 or not fields[0].isdigit():
            raise GpuDiscoveryError(f"unexpected nvidia-smi line: {line!r}")
        memory = int(fields[3]) if fields[3].isdigit() else 0
        gpus.append(Gpu(int(fields[0]), fields[2], fields[1], memory, pci_bus_id=fields[4]))
    return sorted(gpus, key=lambda g: g.index)


def device_file(pci_bus_id: str, driver: str = DRIVER_GPUS) -> str:
    """A GPU's device file: ``/dev/nvidia<its minor number>``, as its driver says.

    The minor number is not nvidia-smi's index (that follows the PCI
    addresses; the minor numbers, the order the driver found the GPUs in),
    so it is read from the driver's ``information`` file of the GPU's PCI
    address (``Device Minor:``).

    Args:
        pci_bus_id: nvidia-smi's ``00000000:07:00.0`` (the driver's ``0000:07:00.0``).
        driver: the driver's directory of GPUs.

    Returns:
        The path; "" when the driver does not say.
    """
    domain, _, rest = pci_bus_id.partition(":")
    try:
        address = f"{int(domain, 16):04x}:{rest.lower()}"
        with open(os.path.join(driver, address, "information")) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "Device Minor":
                    return f"/dev/nvidia{int(value)}"
    except (OSError, ValueError):
        pass
    return ""


_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # nvidia-smi underlines the matrix's header
_GPU = re.compile(r"GPU\d+")
_NVLINKS = re.compile(r"NV(\d+)")


def parse_topology(text: str) -> GpuLinks:
    """Parse ``nvidia-smi topo -m``: the links between the GPUs.

    The matrix's header names its columns (``GPU0 GPU1 ... NIC0 ... CPU
    Affinity``); each ``GPUn`` row gives ``X`` for the GPU itself, ``NV#``
    for # NVLinks, and ``PIX``/``PXB``/``PHB``/``NODE``/``SYS`` for a path
    over PCIe alone (no link). NIC rows and the legend are passed over.

    Args:
        text: its output.

    Returns:
        The link map, by the GPUs' indices.

    Raises:
        GpuDiscoveryError: no matrix of GPUs, a GPU row missing or short, or
            links that do not agree.
    """
    columns: list[int] = []
    rows: dict[int, tuple[int, ...]] = {}
    for raw in text.splitlines():
        line = _ESCAPE.sub("", raw)
        words = line.split()
        if not columns and words and _GPU.fullmatch(words[0]) and line[:1].isspace():
            columns = [int(w[3:]) for w in itertools.takewhile(_GPU.fullmatch, words)]
        elif columns and words and _GPU.fullmatch(words[0]):
            cells = words[1 : len(columns) + 1]
            if len(cells) < len(columns):
                raise GpuDiscoveryError(f"short nvidia-smi topo row: {raw.strip()!r}")
            rows[int(words[0][3:])] = tuple(map(_link, cells))
    if not columns or sorted(rows) != sorted(columns):
        raise GpuDiscoveryError("nvidia-smi topo -m gave no matrix of its GPUs")
    try:
        return GpuLinks(tuple(columns), tuple(rows[gpu] for gpu in columns))
    except ValueError as err:
        raise GpuDiscoveryError(f"nvidia-smi topo -m: {err}") from None


def _link(cell: str) -> int:
    """One cell of the matrix: -1 for the GPU itself, N for NV<N>, 0 for a PCIe path."""
    if cell == "X":
        return SELF
    nvlinks = _NVLINKS.fullmatch(cell)
    return int(nvlinks.group(1)) if nvlinks else 0


@dataclass(frozen=True)
class NvidiaSmiGpus:
    """Real NVIDIA GPUs, as ``nvidia-smi`` lists them."""

    command: str = "nvidia-smi"
    link_rows: LinkRows = ()  # gres.conf's Links=, which win over nvidia-smi topo -m
    usage: str = "nvidia-smi"
    driver: str = DRIVER_GPUS  # where the driver tells each GPU's device file

    def discover(self) -> list[Gpu]:
        """Run nvidia-smi and parse its answer; each GPU's device file from its driver.

        Raises:
            GpuDiscoveryError: nvidia-smi is missing or failed.
        """
        gpus = [replace(g, device=device_file(g.pci_bus_id, self.driver)) for g in self._listed()]
        unknown = [str(g.index) for g in gpus if not g.device]
        if unknown:
            log.warning(
                "GPU %s: no device minor number in %s: ConstrainDevices cannot deny %s",
                ",".join(unknown),
                self.driver,
                "them" if len(unknown) > 1 else "it",
            )
        return gpus

    def links(self) -> GpuLinks | None:
        """The links of gres.conf, else of ``nvidia-smi topo -m`` (None when it fails)."""
        if self.link_rows:
            return _configured(tuple(g.index for g in self._listed()), self.link_rows)
        try:
            return parse_topology(self._run("topo", "-m"))
        except GpuDiscoveryError as err:
            log.warning("GPU links unknown: %s", err)
            return None

    def _listed(self) -> list[Gpu]:
        return parse_nvidia_smi(self._run(f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"))

    def _run(self, *args: str) -> str:
        path = shutil.which(self.command)
        if path is None:
            raise GpuDiscoveryError(f"{self.command} not found")
        try:
            return subprocess.run(
                [path, *args], capture_output=True, text=True, timeout=30, check=True
            ).stdout
        except (subprocess.SubprocessError, OSError) as err:
            raise GpuDiscoveryError(f"{self.command} failed: {err}") from None


@dataclass(frozen=True)
class DeviceFileGpus:
    """GPUs named by device files (``File=/dev/nvidia[0-7]``): the index is the file's number."""

    files: tuple[str, ...]
    link_rows: LinkRows = ()  # gres.conf's Links=, one row per file

    @property
    def usage(self) -> str:
        """nvidia-smi's, where it is installed."""
        return "nvidia-smi" if shutil.which("nvidia-smi") else ""

    def discover(self) -> list[Gpu]:
        """One GPU per device file whose name ends in a number."""
        found = (Gpu(i, device=f) for i, f in zip(self._indices(), self.files, strict=True))
        return sorted(found, key=lambda g: g.index)

    def links(self) -> GpuLinks | None:
        """The links gres.conf gives the files' GPUs, if any."""
        return _configured(self._indices(), self.link_rows)

    def _indices(self) -> tuple[int, ...]:
        """The files' GPU indices, in the files' order."""
        indices = []
        for path in self.files:
            digits = os.path.basename(path).lstrip("abcdefghijklmnopqrstuvwxyz_-")
            if not digits.isdigit():
                raise GpuDiscoveryError(f"cannot tell the GPU index of {path}")
            indices.append(int(digits))
        return tuple(indices)


def _configured(gpus: tuple[int, ...], rows: LinkRows) -> GpuLinks | None:
    """The map of gres.conf's Links= rows over these GPUs, in device order (None: no rows).

    Raises:
        GpuDiscoveryError: the rows do not fit the GPUs found.
    """
    if not rows:
        return None
    try:
        return GpuLinks(gpus, rows)
    except ValueError as err:
        raise GpuDiscoveryError(f"gres.conf Links=: {err}") from None


def gpu_discovery(gres: list[GresConfig], fake_gpus: int | None) -> GpuDiscovery:
    """Choose how this node finds its GPUs.

    Args:
        gres: the node's gres.conf lines.
        fake_gpus: the ``--fake-gpus`` flag, which wins when given.

    Returns:
        The discovery to use (no GPUs when nothing is configured).
    """
    rows = link_rows(gres)
    if fake_gpus is not None:
        return FakeGpus(fake_gpus, rows if len(rows) == fake_gpus else ())
    gpu_lines = [g for g in gres if g.name == "gpu"]
    if any(g.autodetect in ("nvml", "nvidia") for g in gpu_lines):
        return NvidiaSmiGpus(link_rows=rows)
    files = tuple(f for g in gpu_lines for f in g.files)
    if files:
        return DeviceFileGpus(files, rows)
    return FakeGpus(sum(g.count for g in gpu_lines), rows)
