"""gres.conf: the generic resources (GPUs) of one node, as its slurmd reads them.

``load_gres_conf`` reads the lines of gres.conf that apply to one node, in
Slurm's syntax (``gres.conf.5``; ``src/common/gres.c``): a malformed value is
a ``ConfigError`` naming file, line, key and value; a key Slurm does not
document is a warning.

``Links=`` describes one GPU per line: a comma-separated number per GPU of
the node, in device order (the order of its GPU lines), of the links
between this GPU and that one: -1 for itself, 0 for none (PCIe), more for
more NVLinks. The lines of a node must agree (what line i says of GPU j,
line j says of GPU i). ``Cores=`` (``0-15,32-47``) names the cores close to
the line's devices; it is read and checked, and kept.

Imports only minislurm.conffile, minislurm.config (its value checks),
minislurm.gpulinks and minislurm.hostlist.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from minislurm import hostlist
from minislurm.conffile import ConfRecord, parse_file
from minislurm.config import _to_choice, _to_int, _value
from minislurm.gpulinks import SELF

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GresConfig:
    """One gres.conf entry for a node. ``count`` 0 with ``autodetect`` means "discover"."""

    name: str
    type: str = ""
    count: int = 1
    files: tuple[str, ...] = ()
    autodetect: str = "off"
    links: tuple[int, ...] = ()  # Links=: one device's links to each GPU of the node
    cores: tuple[int, ...] = ()  # Cores=: the cores close to its devices


_GRES_KEYS = ("NodeName", "Name", "Type", "File", "Count", "AutoDetect", "Links", "Cores")
_GRES_IGNORED = ("CoreSpec", "Flags", "MultipleFiles")
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
    _check_links([(r, e) for (r, _), e in zip(lines, entries, strict=True) if e.name == "gpu"])
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
        links=_value(record, "Links", attrs["Links"], _links) if "Links" in attrs else (),
        cores=_value(record, "Cores", attrs["Cores"], _cores) if "Cores" in attrs else (),
    )


def link_rows(entries: list[GresConfig]) -> tuple[tuple[int, ...], ...]:
    """The node's GPU link matrix from its lines' ``Links=``, in device order.

    Args:
        entries: the node's entries, as :func:`load_gres_conf` returns them.

    Returns:
        One row per GPU; none when the lines give no links.
    """
    return tuple(e.links for e in entries if e.name == "gpu" and e.links)


def _check_links(gpu_lines: list[tuple[ConfRecord, GresConfig]]) -> None:
    """Links= on one GPU line asks it of every GPU line of the node, each of one device."""
    if not any(entry.links for _, entry in gpu_lines):
        return
    n = len(gpu_lines)
    for place, (record, entry) in enumerate(gpu_lines):
        if not entry.links:
            raise record.error("Links= is given for other GPUs of this node but not here")
        if entry.count != 1:
            raise record.error(f"Links= describes one device; this line has {entry.count}")
        if len(entry.links) != n:
            raise record.error(f"Links= has {len(entry.links)} entries for the node's {n} GPUs")
        if entry.links.index(SELF) != place:
            raise record.error(f"Links= must have its -1 at this GPU's place, {place}")
        for other, (_, seen) in enumerate(gpu_lines[:place]):
            if seen.links[place] != entry.links[other]:
                raise record.error(
                    f"Links= says {entry.links[other]} links to GPU {other}, "
                    f"whose line says {seen.links[place]}"
                )


def _links(text: str) -> tuple[int, ...]:
    """``-1,4,4,0``: numbers >= -1, one of them -1 (the device itself)."""
    values = []
    for item in text.split(","):
        number = item.strip()
        if not (number.isascii() and number.lstrip("-").isdigit()) or number.count("-") > 1:
            raise ValueError("expected comma-separated numbers")
        values.append(int(number))
    if min(values) < SELF or values.count(SELF) != 1:
        raise ValueError("expected one -1 (the device itself) and no other negative number")
    return tuple(values)


def _cores(text: str) -> tuple[int, ...]:
    """``0-3,8,10-11``: core numbers and ascending ranges of them."""
    cores: list[int] = []
    for item in text.split(","):
        first, dash, last = item.strip().partition("-")
        low = _to_int(first)
        high = _to_int(last) if dash else low
        if high < low:
            raise ValueError(f"range {item!r} goes down")
        cores.extend(range(low, high + 1))
    return tuple(sorted(set(cores)))


def _gres_count(text: str) -> int:
    """A gres Count: an integer with an optional K, M, G or T (powers of 1024)."""
    factors = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    suffix = text[-1:].upper()
    if suffix in factors:
        return _to_int(text[:-1]) * factors[suffix]
    return _to_int(text)
