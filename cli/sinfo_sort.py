"""``sinfo -S`` (and ``SINFO_SORT``): Slurm's sort keys over sinfo's records.

The keys are sinfo's field letters, applied last to first; ``-`` before a
letter reverses it, ``#`` before ``P`` sorts partitions in their order of
configuration rather than by name; letters Slurm does not sort on, commas
and ``+`` are skipped, as in Slurm (``-S bogus`` is no error). Each key
compares what the record prints for it, numbers as numbers.

Imports cli.sinfo_fields and minislurm's lean modules.
"""

from __future__ import annotations

from collections.abc import Callable

from cli import sinfo_fields as fields
from minislurm import units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

Key = Callable[[fields.Record], object]
_PART_STATES = {"INACTIVE": 0, "DOWN": 1, "DRAIN": 2, "UP": 3}  # Slurm's state_up order


def _least(record: fields.Record, read: Callable[[Message], object]) -> object:
    values = [read(node) for node in record.nodes]
    return min(values, default=0)  # type: ignore[type-var]


def _part(record: fields.Record, read: Callable[[Message], object], empty: object = "") -> object:
    return read(record.part) if record.part is not None else empty


def _first(record: fields.Record, read: Callable[[Message], object]) -> object:
    return read(record.nodes[0]) if record.nodes else ""


def _limit(minutes: int) -> int:
    return 1 << 40 if minutes == units.INFINITE else minutes


KEYS: dict[str, Key] = {
    "a": lambda r: _part(r, lambda p: _PART_STATES.get(p.state, 0), 0),
    "A": lambda r: sum(1 for n in r.nodes if fields.base_state(n) in ("ALLOCATED", "MIXED")),
    "b": lambda r: _first(r, lambda n: n.features),
    "c": lambda r: _least(r, lambda n: n.cpus),
    "d": lambda r: 0,
    "D": lambda r: len(r.nodes),
    "e": lambda r: _least(r, lambda n: n.free_memory),
    "E": lambda r: _first(r, lambda n: n.reason),
    "f": lambda r: _first(r, lambda n: n.features),
    "F": lambda r: sum(1 for n in r.nodes if fields.base_state(n) in ("ALLOCATED", "MIXED")),
    "g": lambda r: _part(r, lambda p: p.allow_groups or "ALL"),
    "h": lambda r: _part(r, lambda p: p.over_subscribe or "NO"),
    "H": lambda r: _first(r, lambda n: n.reason_time),
    "l": lambda r: _part(r, lambda p: _limit(p.max_time), 0),
    "m": lambda r: _least(r, lambda n: n.real_memory),
    "M": lambda r: _part(r, lambda p: p.preempt_mode),
    "n": lambda r: _first(r, lambda n: fields.natural_key(n.hostname or n.name)),
    "N": lambda r: _first(r, lambda n: fields.natural_key(n.name)),
    "o": lambda r: _first(r, lambda n: fields.natural_key(n.addr or n.name)),
    "O": lambda r: _least(r, lambda n: n.cpu_load),
    "p": lambda r: _part(r, lambda p: p.priority_tier, 0),
    "P": lambda r: _part(r, lambda p: p.name),
    "r": lambda r: 0,
    "R": lambda r: _part(r, lambda p: p.name),
    "s": lambda r: _part(r, lambda p: (p.min_nodes, _limit(p.max_nodes)), (0, 0)),
    "S": lambda r: _part(r, lambda p: p.priority_job_factor, 0),
    "t": lambda r: _first(r, fields.state_rank),
    "T": lambda r: _first(r, fields.state_rank),
    "u": lambda r: _first(r, lambda n: str(n.reason_user)),
    "U": lambda r: _first(r, lambda n: str(n.reason_user)),
    "V": lambda r: 0,
    "w": lambda r: _least(r, lambda n: n.weight or 1),
    "X": lambda r: _least(r, lambda n: n.sockets or 1),
    "Y": lambda r: _least(r, lambda n: n.cores_per_socket or 1),
    "Z": lambda r: _least(r, lambda n: n.threads_per_core or 1),
    "z": lambda r: _least(
        r, lambda n: (n.sockets or 1, n.cores_per_socket or 1, n.threads_per_core or 1)
    ),
}


def sort_records(
    records: list[fields.Record], spec: str, parts: list[Message]
) -> list[fields.Record]:
    """The records in the order ``-S spec`` asks for.

    Args:
        records: the records.
        spec: the sort keys, e.g. ``#P,-t`` or ``-D``.
        parts: the partitions in configuration order (for ``#P``).

    Returns:
        The sorted records.
    """
    order = {p.name: i for i, p in enumerate(parts)}
    out = list(records)
    for i in range(len(spec) - 1, -1, -1):
        letter = spec[i]
        key = KEYS.get(letter)
        if key is None:
            continue
        before = spec[i - 1] if i > 0 else ""
        if before == "#" and letter in "PR":
            key = _in_config_order(order)
        out.sort(key=key, reverse=before == "-")  # type: ignore[arg-type]
    return out


def _in_config_order(order: dict[str, int]) -> Key:
    return lambda r: order.get(r.part.name, len(order)) if r.part is not None else len(order)
