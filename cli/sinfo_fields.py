"""sinfo's records and fields: how nodes are grouped, and each ``-o`` code's value.

sinfo prints one line per group ("record") of nodes that agree on every
field shown (per partition, or per node with ``-N``); values are computed from
NodeInfo and PartitionInfo reply messages as Slurm 22.05's sinfo prints them.

Pure functions; imports cli.fmt and minislurm's lean modules only, none of
ctld or nodeagent.
"""

from __future__ import annotations

from cli import fmt
from cli.scontrol_show import reason_user
from minislurm import hostlist, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from cli.sinfo import View
    from minislurm.wire.protowire import Message

    Getter = Callable[["Record"], str]

MIN_FIELD_WIDTH = 9  # Slurm's MIN_PART_FIELD_SIZE / MIN_NODE_FIELD_SIZE for %#P, %#N
_BASE_RANK = {"UNKNOWN": 0, "DOWN": 1, "IDLE": 2, "ALLOCATED": 3, "MIXED": 5, "FUTURE": 6}
STATE_WORDS = {
    "alloc": "ALLOCATED",
    "allocated": "ALLOCATED",
    "mix": "MIXED",
    "mixed": "MIXED",
    "idle": "IDLE",
    "down": "DOWN",
    "unk": "UNKNOWN",
    "unknown": "UNKNOWN",
    "future": "FUTURE",
    "futr": "FUTURE",
}
OTHER_STATES = frozenset(
    (
        "drain",
        "drained",
        "draining",
        "drng",
        "no_respond",
        "npc",
        "fail",
        "comp",
        "completing",
        "resv",
        "reserved",
        "maint",
        "cloud",
        "perfctrs",
        "planned",
        "power_down",
        "powered_down",
        "powering_down",
        "powering_up",
        "reboot",
        "reboot^",
        "reboot_issued",
        "reboot_requested",
    )
)
_FLAG_RANK = {"DRAIN": 0x200, "COMPLETING": 0x400, "NOT_RESPONDING": 0x800, "FAIL": 0x2000}


class Record:
    """A group of nodes printed as one line, with its partition (None: none or several)."""

    __slots__ = ("nodes", "part")

    def __init__(self, part: Message | None, nodes: list[Message] | None = None) -> None:
        self.part = part
        self.nodes = nodes or []


def base_state(node: Message) -> str:
    """A node's base state word (``MIXED`` of ``MIXED*+DRAIN``).

    Args:
        node: a NodeInfo.

    Returns:
        The base state.
    """
    return str(node.state).split("+", 1)[0].rstrip("*")


def state_rank(node: Message) -> int:
    """Slurm's numeric node state (base plus flag bits), which ``-t`` sorts on.

    Args:
        node: a NodeInfo.

    Returns:
        The number.
    """
    return _BASE_RANK.get(base_state(node), 0) + sum(_FLAG_RANK.get(f, 0) for f in node.flags)


def is_drained(node: Message) -> bool:
    """Drain flag on a node that runs nothing (``drained``, not ``draining``).

    Args:
        node: a NodeInfo.

    Returns:
        True when drained.
    """
    return "DRAIN" in node.flags and base_state(node) not in ("ALLOCATED", "MIXED")


def _unavailable(node: Message) -> bool:
    return base_state(node) == "DOWN" or "DRAIN" in node.flags or "FAIL" in node.flags


def cpu_counts(nodes: list[Message]) -> str:
    """``%C``: CPUs allocated/idle/other/total.

    Args:
        nodes: the record's nodes.

    Returns:
        e.g. ``3/5/0/8``; CPUs of drained or down nodes that are not allocated count as other.
    """
    alloc = idle = other = total = 0
    for node in nodes:
        alloc += node.alloc_cpus
        total += node.cpus
        if _unavailable(node):
            other += node.cpus - node.alloc_cpus
        else:
            idle += node.cpus - node.alloc_cpus
    return f"{alloc}/{idle}/{other}/{total}"


def node_counts(nodes: list[Message], with_other: bool) -> str:
    """``%A`` (allocated/idle) or ``%F`` (allocated/idle/other/total) node counts.

    Args:
        nodes: the record's nodes.
        with_other: the ``%F`` form.

    Returns:
        The counts.
    """
    alloc = sum(1 for n in nodes if n.alloc_cpus)
    other = sum(1 for n in nodes if not n.alloc_cpus and _unavailable(n))
    idle = len(nodes) - alloc - other
    if with_other:
        return f"{alloc}/{idle}/{other}/{len(nodes)}"
    return f"{alloc}/{idle}"


def _min_plus(values: list[int]) -> str:
    """Slurm's ``8+``: the smallest value, ``+`` when some are larger."""
    if not values:
        return "0"
    low = min(values)
    return f"{low}+" if max(values) > low else str(low)


def _low_high(values: list[str]) -> str:
    if not values:
        return "N/A"
    low, high = min(values), max(values)
    return low if low == high else f"{low}-{high}"


def _first(record: Record, read: Callable[[Message], str], empty: str = "n/a") -> str:
    return read(record.nodes[0]) if record.nodes else empty


def partition_name(record: Record, width: int = 0) -> str:
    """``%P``: the partition's name, ``*`` marking the default (fitted into ``width``).

    Args:
        record: the record.
        width: the column width (Slurm overwrites the last character with ``*``
            when the name does not fit).

    Returns:
        The name, or ``n/a``.
    """
    part = record.part
    if part is None:
        return "n/a"
    name = str(part.name)
    if not part.default:
        return name
    if width == 0 or len(name) < width:
        return name + "*"
    return name[: width - 1] + "*"


def _part(record: Record, read: Callable[[Message], str]) -> str:
    return read(record.part) if record.part is not None else "n/a"


def _job_size(part: Message) -> str:
    low = max(int(part.min_nodes), 1)
    high = "infinite" if part.max_nodes in (0, units.INFINITE) else str(part.max_nodes)
    return str(low) if high == str(low) else f"{low}-{high}"


def _default_time(part: Message) -> str:
    return units.format_limit_sinfo(part.default_time) if part.has("default_time") else "n/a"


def _avail(part: Message) -> str:
    state = str(part.state or "UP").lower()
    return "inact" if state == "inactive" else state


def _names(record: Record, read: Callable[[Message], str]) -> str:
    return hostlist.compress([read(n) for n in record.nodes], sort=True)


def _reason_time(node: Message) -> str:
    return fmt.timestamp_or(node.reason_time, "Unknown") if node.reason else "Unknown"


def _user(node: Message, long: bool) -> str:
    if not node.reason:
        return "Unknown"
    name = reason_user(node)
    who = str(node.reason_user)
    return f"{name}({who})" if long and who.isdigit() else name


def _sct(node: Message) -> str:
    return f"{node.sockets or 1}:{node.cores_per_socket or 1}:{node.threads_per_core or 1}"


# code: (header, value(record)); width-dependent %P is handled by cli.sinfo.
FIELDS: dict[str, tuple[str, Getter]] = {
    "a": ("AVAIL", lambda r: _part(r, _avail)),
    "A": ("NODES(A/I)", lambda r: node_counts(r.nodes, False)),
    "b": ("ACTIVE_FEATURES", lambda r: _first(r, lambda n: n.features or "(null)")),
    "B": ("MAX_CPUS_PER_NODE", lambda r: "UNLIMITED"),
    "c": ("CPUS", lambda r: _min_plus([n.cpus for n in r.nodes])),
    "C": ("CPUS(A/I/O/T)", lambda r: cpu_counts(r.nodes)),
    "d": ("TMP_DISK", lambda r: "0"),
    "D": ("NODES", lambda r: str(len(r.nodes))),
    "e": ("FREE_MEM", lambda r: _low_high([str(n.free_memory) for n in r.nodes])),
    "E": ("REASON", lambda r: _first(r, lambda n: n.reason or "none", "none")),
    "f": ("AVAIL_FEATURES", lambda r: _first(r, lambda n: n.features or "(null)")),
    "F": ("NODES(A/I/O/T)", lambda r: node_counts(r.nodes, True)),
    "g": ("GROUPS", lambda r: _part(r, lambda p: (p.allow_groups or "ALL").replace("ALL", "all"))),
    "G": ("GRES", lambda r: _first(r, lambda n: n.gres or "(null)")),
    "h": ("OVERSUBSCRIBE", lambda r: _part(r, lambda p: p.over_subscribe or "NO")),
    "H": ("TIMESTAMP", lambda r: _first(r, _reason_time, "Unknown")),
    "I": ("PRIO_JOB_FACTOR", lambda r: _part(r, lambda p: str(p.priority_job_factor))),
    "l": ("TIMELIMIT", lambda r: _part(r, lambda p: units.format_limit_sinfo(p.max_time))),
    "L": ("DEFAULTTIME", lambda r: _part(r, _default_time)),
    "m": ("MEMORY", lambda r: _min_plus([n.real_memory for n in r.nodes])),
    "M": ("PREEMPT_MODE", lambda r: _part(r, lambda p: p.preempt_mode or "OFF")),
    "n": ("HOSTNAMES", lambda r: _names(r, lambda n: n.hostname or n.name)),
    "N": ("NODELIST", lambda r: _names(r, lambda n: n.name)),
    "o": ("NODE_ADDR", lambda r: _names(r, lambda n: n.addr or n.name)),
    "O": ("CPU_LOAD", lambda r: _low_high([f"{n.cpu_load:.2f}" for n in r.nodes])),
    "p": ("PRIO_TIER", lambda r: _part(r, lambda p: str(p.priority_tier))),
    "P": ("PARTITION", lambda r: partition_name(r)),
    "r": ("ROOT", lambda r: _part(r, lambda p: "no")),
    "R": ("PARTITION", lambda r: _part(r, lambda p: p.name)),
    "s": ("JOB_SIZE", lambda r: _part(r, _job_size)),
    "S": ("ALLOCNODES", lambda r: _part(r, lambda p: "all")),
    "t": ("STATE", lambda r: _first(r, lambda n: n.state_compact)),
    "T": ("STATE", lambda r: _first(r, lambda n: n.state_long)),
    "u": ("USER", lambda r: _first(r, lambda n: _user(n, False), "Unknown")),
    "U": ("USER", lambda r: _first(r, lambda n: _user(n, True), "Unknown")),
    "v": ("VERSION", lambda r: _first(r, lambda n: n.version or "N/A")),
    "V": ("CLUSTER", lambda r: "N/A"),
    "w": ("WEIGHT", lambda r: _min_plus([n.weight or 1 for n in r.nodes])),
    "X": ("SOCKETS", lambda r: _min_plus([n.sockets or 1 for n in r.nodes])),
    "Y": ("CORES", lambda r: _min_plus([n.cores_per_socket or 1 for n in r.nodes])),
    "Z": ("THREADS", lambda r: _min_plus([n.threads_per_core or 1 for n in r.nodes])),
    "z": ("S:C:T", lambda r: _first(r, _sct)),
}

# Node values that split groups; the second set only with -e/--exact.
NODE_KEYS: dict[str, Callable[[Message], object]] = {
    "t": lambda n: (n.state_compact, state_rank(n)),
    "T": lambda n: (n.state_long, state_rank(n)),
    "E": lambda n: n.reason,
    "H": lambda n: n.reason_time,
    "u": lambda n: n.reason_user,
    "U": lambda n: n.reason_user,
    "f": lambda n: n.features,
    "b": lambda n: n.features,
    "G": lambda n: n.gres,
    "v": lambda n: n.version,
    "n": lambda n: n.name,
    "o": lambda n: n.name,
    "z": _sct,
}
EXACT_KEYS: dict[str, Callable[[Message], object]] = {
    "c": lambda n: n.cpus,
    "m": lambda n: n.real_memory,
    "w": lambda n: n.weight,
    "X": lambda n: n.sockets,
    "Y": lambda n: n.cores_per_socket,
    "Z": lambda n: n.threads_per_core,
    "O": lambda n: n.cpu_load,
    "e": lambda n: n.free_memory,
}
PARTITION_CODES = frozenset("aBghIlLMpPrRsS")

# -O names (lower case) and their -o codes.
LONG_NAMES = {
    "allocnodes": "S",
    "available": "a",
    "cluster": "V",
    "cores": "Y",
    "cpus": "c",
    "cpusload": "O",
    "cpusstate": "C",
    "defaulttime": "L",
    "disk": "d",
    "features": "f",
    "features_act": "b",
    "freemem": "e",
    "gres": "G",
    "groups": "g",
    "maxcpuspernode": "B",
    "memory": "m",
    "nodeaddr": "o",
    "nodeai": "A",
    "nodeaiot": "F",
    "nodehost": "n",
    "nodelist": "N",
    "nodes": "D",
    "oversubscribe": "h",
    "partition": "P",
    "partitionname": "R",
    "preemptmode": "M",
    "priorityjobfactor": "I",
    "prioritytier": "p",
    "reason": "E",
    "root": "r",
    "size": "s",
    "socketcorethread": "z",
    "sockets": "X",
    "statecompact": "t",
    "statelong": "T",
    "threads": "Z",
    "time": "l",
    "timestamp": "H",
    "user": "u",
    "userlong": "U",
    "version": "v",
    "weight": "w",
}


def has_state(node: Message, word: str) -> bool:
    """Whether a node is in a state ``-t`` names.

    Args:
        node: a NodeInfo.
        word: a lower-case state word.

    Returns:
        True when it matches (``drain`` means drained or draining).
    """
    flags = node.flags
    if word in STATE_WORDS:
        return base_state(node) == STATE_WORDS[word]
    if word == "drain":
        return "DRAIN" in flags
    if word == "drained":
        return is_drained(node)
    if word in ("draining", "drng"):
        return "DRAIN" in flags and not is_drained(node)
    if word in ("no_respond", "npc"):
        return "NOT_RESPONDING" in flags
    return word.upper() in flags


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Order host names as people do: ``n2`` before ``n10``.

    Args:
        name: a host name.

    Returns:
        A sort key of alternating text and number parts.
    """
    parts: list[tuple[int, int | str]] = []
    start = 0
    for i in range(1, len(name) + 1):
        if i == len(name) or name[i].isdigit() != name[start].isdigit():
            chunk = name[start:i]
            parts.append((1, int(chunk)) if chunk.isdigit() else (0, chunk))
            start = i
    return tuple(parts)


# --------------------------------------------------------------------------- records


def node_shown(node: Message, view: View) -> bool:
    """Whether a node passes the node filters (-n, -t, -d, -r, and -R's states).

    Args:
        node: a NodeInfo.
        view: the view.

    Returns:
        True to show it.
    """
    responding = "NOT_RESPONDING" not in node.flags
    if view.reasons and not (
        base_state(node) == "DOWN" or "DRAIN" in node.flags or "FAIL" in node.flags
    ):
        return False
    return (
        (not view.nodes or node.name in view.nodes)
        and (not view.states or any(has_state(node, word) for word in view.states))
        and not (view.dead and responding)
        and not (view.responding and not responding)
    )


def node_records(nodes: list[Message], parts: list[Message], view: View) -> list[Record]:
    """``-N``: one record per node and partition, by node name then partition order.

    Args:
        nodes: the nodes.
        parts: the partitions shown, in configuration order.
        view: the view.

    Returns:
        The records.
    """
    members = {p.name: set(hostlist.expand(p.nodes)) for p in parts}
    records = []
    for node in sorted(nodes, key=lambda n: natural_key(n.name)):
        if not node_shown(node, view):
            continue
        homes = [p for p in parts if node.name in members[p.name]]
        records += [Record(p, [node]) for p in homes]
        if not homes and not view.partitions:
            records.append(Record(None, [node]))
    return records


def partition_records(
    nodes: list[Message], parts: list[Message], view: View, codes: set[str]
) -> list[Record]:
    """Group nodes into records: same partition values and same node values
    for every field shown (``-e`` adds CPUs, memory and the like).

    Args:
        nodes: the nodes.
        parts: the partitions shown, in configuration order.
        view: the view.
        codes: the field codes of the format.

    Returns:
        The records; a partition without a node to show gets an empty one.
    """
    by_name = {n.name: n for n in nodes}
    keys = [NODE_KEYS[c] for c in sorted(codes) if c in NODE_KEYS]
    if view.exact:
        keys += [EXACT_KEYS[c] for c in sorted(codes) if c in EXACT_KEYS]
    part_codes = sorted(codes & PARTITION_CODES)
    records: list[Record] = []
    index: dict[tuple[object, ...], Record] = {}
    for part in parts:
        shown = [
            by_name[name]
            for name in hostlist.expand(part.nodes)
            if name in by_name and node_shown(by_name[name], view)
        ]
        if not shown:
            if codes & {"P", "R"} and not view.reasons:  # Slurm lists the empty partition
                records.append(Record(part))
            continue
        part_key = tuple(FIELDS[c][1](Record(part)) for c in part_codes)
        for node in shown:
            key = (part_key, *(read(node) for read in keys))
            record = index.get(key)
            if record is None:
                record = index[key] = Record(part)
                records.append(record)
            if all(n.name != node.name for n in record.nodes):
                record.nodes.append(node)
    order = {p.name: i for i, p in enumerate(parts)}
    records.sort(key=lambda r: state_rank(r.nodes[0]) if r.nodes else -1, reverse=True)
    records.sort(key=lambda r: order[r.part.name] if r.part is not None else len(order))
    return records
