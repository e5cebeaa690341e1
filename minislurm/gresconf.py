"""gres.conf: the generic resources (GPUs) of one node, as its slurmd reads them.

``load_gres_conf`` reads the lines of gres.conf that apply to one node, in
Slurm's syntax (``gres.conf.5``; ``src/common/gres.c``): a malformed value is
a ``ConfigError`` naming file, line, key and value; a key Slurm does not
document is a warning.

Imports only minislurm.conffile, minislurm.config (its value checks) and
minislurm.hostlist.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from minislurm import hostlist
from minislurm.conffile import ConfRecord, parse_file
from minislurm.config import _to_choice, _to_int, _value

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GresConfig:
    """One gres.conf entry for a node. ``count`` 0 with ``autodetect`` means "discover"."""

    name: str
    type: str = ""
    count: int = 1
    files: tuple[str, ...] = ()
    autodetect: str = "off"


_GRES_KEYS = ("NodeName", "Name", "Type", "File", "Count", "AutoDetect")
_GRES_IGNORED = ("Cores", "CoreSpec", "Links", "Flags", "MultipleFiles")
_AUTODETECT = ("nvml", "nvidia", "rsmi", "oneapi", "off")


def load_gres_conf(path: str, node_name: str) -> list[GresConfig]:
    """Read the gres.conf entries that apply to one node.

    Lines with ``NodeName=`` (a hostlist) apply to those nodes only; others
    to every node. ``AutoDetect=`` on a line without ``Name=`` sets the mode
    for all (or the named) nodes. ``File=/dev/nvidia[0-7]`` is expanded like a
    hostlist and the count is the number of files.

    Args:
        path: the gres.conf; a missing file means no entries.
        node_name: the node whose entries are wanted.

    Returns:
        The node's entries in file order. When it has none but an AutoDetect
        mode other than ``off`` applies, one ``GresConfig("gpu", count=0,
        autodetect=mode)`` asking the agent to discover its GPUs.

    Raises:
        ConfigError: a malformed line, or an invalid value.
    """
    if not os.path.exists(path):
        return []
    autodetect = "off"
    lines: list[tuple[ConfRecord, dict[str, str]]] = []
    for record in parse_file(path, _GRES_KEYS + _GRES_IGNORED):
        attrs = _gres_attributes(record)
        if "NodeName" in attrs:
            selected = _value(record, "NodeName", attrs["NodeName"], hostlist.expand)
            if node_name not in selected:
                continue
        if "Name" in attrs:
            lines.append((record, attrs))
        elif "AutoDetect" in attrs:
            autodetect = attrs["AutoDetect"]
    entries = [_gres_entry(record, attrs, autodetect) for record, attrs in lines]
    if not entries and autodetect != "off":
        return [GresConfig("gpu", count=0, autodetect=autodetect)]
    return entries


def _gres_attributes(record: ConfRecord) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key, text in record.pairs:
        if key == "AutoDetect":
            text = _value(record, key, text, _to_choice, _AUTODETECT)
        if key in _GRES_KEYS:
            attrs[key] = text
        elif key not in _GRES_IGNORED:
            logger.warning("%s:%d: unknown key %s", record.path, record.line, key)
    return attrs


def _gres_entry(record: ConfRecord, attrs: dict[str, str], autodetect: str) -> GresConfig:
    files: tuple[str, ...] = ()
    if "File" in attrs:
        files = tuple(_value(record, "File", attrs["File"], hostlist.expand))
    count = len(files) or 1
    if "Count" in attrs:
        count = _value(record, "Count", attrs["Count"], _gres_count)
        if files and count != len(files):
            raise record.error(f"Count={count} does not match the {len(files)} files of File")
    return GresConfig(
        name=attrs["Name"],
        type=attrs.get("Type", ""),
        count=count,
        files=files,
        autodetect=attrs.get("AutoDetect", autodetect),
    )


def _gres_count(text: str) -> int:
    """A gres Count: an integer with an optional K, M, G or T (powers of 1024)."""
    factors = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    suffix = text[-1:].upper()
    if suffix in factors:
        return _to_int(text[:-1]) * factors[suffix]
    return _to_int(text)
