"""cgroup.conf: how a node's slurmd confines its jobs' steps in cgroups (``task/cgroup``).

``load_cgroup_conf`` reads the keys of Slurm's ``cgroup.conf.5`` that
minislurm acts on (the memory and device constraints, which cgroup version,
where it is mounted), in Slurm's syntax: a malformed value is a
``ConfigError`` naming file, line, key and value; a documented key we do
not act on is accepted silently; any other key is a warning. A missing file
is Slurm's defaults: nothing constrained.

Imports only minislurm.conffile and minislurm.config (its value checks).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from minislurm.conffile import parse_file
from minislurm.config import _to_bool, _to_choice, _value

logger = logging.getLogger(__name__)

PLUGINS = ("autodetect", "cgroup/v1", "cgroup/v2", "disabled")
DEFAULT_MOUNTPOINT = "/sys/fs/cgroup"


@dataclass(frozen=True)
class CgroupConfig:
    """What cgroup.conf says; the defaults are Slurm's."""

    plugin: str = "autodetect"  # CgroupPlugin
    mountpoint: str = DEFAULT_MOUNTPOINT  # CgroupMountpoint
    constrain_ram: bool = False  # ConstrainRAMSpace
    allowed_ram: float = 100.0  # AllowedRAMSpace: percent of the allocated memory
    constrain_swap: bool = False  # ConstrainSwapSpace
    allowed_swap: float = 0.0  # AllowedSwapSpace: percent of the allocated memory
    min_ram: int = 30  # MinRAMSpace: MiB, the least a limit is set to
    constrain_devices: bool = False  # ConstrainDevices: GPUs not allocated are not opened

    @property
    def constrains_memory(self) -> bool:
        """Whether a job's memory is limited (ConstrainSwapSpace alone implies RAM too)."""
        return self.constrain_ram or self.constrain_swap


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a percentage") from None
    if not 0 <= value <= 1000:
        raise ValueError("expected a percentage from 0 to 1000")
    return value


def _mib(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError("expected a number of MiB")
    return int(text)


_KEYS = {
    "CgroupPlugin": ("plugin", lambda text: _to_choice(text, PLUGINS)),
    "CgroupMountpoint": ("mountpoint", lambda text: text.rstrip("/") or "/"),
    "ConstrainRAMSpace": ("constrain_ram", _to_bool),
    "AllowedRAMSpace": ("allowed_ram", _percent),
    "ConstrainSwapSpace": ("constrain_swap", _to_bool),
    "AllowedSwapSpace": ("allowed_swap", _percent),
    "MinRAMSpace": ("min_ram", _mib),
    "ConstrainDevices": ("constrain_devices", _to_bool),
}
_IGNORED = (
    "AllowedKmemSpace",
    "CgroupAutomount",
    "CgroupJobIdPaths",
    "CgroupReleaseAgentDir",
    "CgroupSlice",
    "ConstrainCores",
    "ConstrainKmemSpace",
    "EnableControllers",
    "EnableExtraControllers",
    "IgnoreSystemd",
    "IgnoreSystemdOnFailure",
    "MaxKmemPercent",
    "MaxRAMPercent",
    "MaxSwapPercent",
    "MemorySwappiness",
    "MinKmemSpace",
    "SignalChildrenProcesses",
    "SystemdTimeout",
)


def load_cgroup_conf(path: str) -> CgroupConfig:
    """Read cgroup.conf.

    Args:
        path: the file; a missing one means Slurm's defaults.

    Returns:
        The configuration.

    Raises:
        ConfigError: a malformed line, or an invalid value.
    """
    if not os.path.exists(path):
        return CgroupConfig()
    values: dict[str, object] = {}
    for record in parse_file(path, (*_KEYS, *_IGNORED)):
        for key, text in record.pairs:
            if key in _KEYS:
                field, convert = _KEYS[key]
                values[field] = _value(record, key, text, convert)
            elif key not in _IGNORED:
                logger.warning("%s:%d: unknown key %s", record.path, record.line, key)
    return CgroupConfig(**values)  # type: ignore[arg-type]
