"""Typed configuration for the daemons, read from slurm.conf and topology.conf.

``load_slurm_conf`` builds one frozen ``SlurmConfig`` (with a ``NodeConfig`` per
node and a ``PartitionConfig`` per partition) from the records of
``minislurm.conffile``, validating every value (gres.conf is
``minislurm.gresconf``'s). Slurm's meaning of each key is kept
(``src/common/read_config.c``): a malformed value is a
``ConfigError`` naming file, line, key and value; a key Slurm does not
document is a warning; a documented key we do not implement is accepted
silently (``IGNORED_KEYS``).

Only the daemons import this module, so it may import what it needs from the
standard library; of our packages it imports only ``minislurm.conffile``,
``minislurm.confkeys`` (the keys and their kinds), ``minislurm.errors``,
``minislurm.hostlist``, ``minislurm.tlsconf``, ``minislurm.topology`` and
``minislurm.units``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
from typing import Any

from minislurm import hostlist, tlsconf
from minislurm.conffile import (
    DEFAULT_INTERACTIVE_STEP_OPTIONS,
    DEFAULT_KILL_WAIT,
    ConfRecord,
    parse_file,
    parse_port,
    parse_slurmctld_host,
)
from minislurm.confkeys import (
    _ALL_KEYS,
    _CHOICES,
    _CONTROLLER_KEYS,
    _FALSE,
    _GLOBAL_KEYS,
    _NODE_KEYS,
    _NODE_STATES,
    _OVERSUBSCRIBE,
    _PARTITION_KEYS,
    _PARTITION_STATES,
    _TRUE,
    _UNSUPPORTED_LINES,
    HEALTH_CHECK_STATES,
    IGNORED_KEYS,
    PREEMPT_MODES,
    PROLOG_FLAGS,
)
from minislurm.topology import Topology, load_topology, topology_conf_path
from minislurm.units import INFINITE, parse_gres, parse_time_limit

logger = logging.getLogger(__name__)

Gres = tuple[str, str, int]
"""One generic resource: ``(name, type_or_empty, count)``, as ``units.parse_gres`` gives."""


@dataclass(frozen=True)
class NodeConfig:
    """One node as slurm.conf describes it (one per name of a ``NodeName=`` line)."""

    name: str
    addr: str
    hostname: str
    port: int | None = None  # None: the cluster's SlurmdPort
    cpus: int = 1
    boards: int = 1
    sockets: int = 1
    cores_per_socket: int = 1
    threads_per_core: int = 1
    real_memory_mb: int = 1
    tmp_disk_mb: int = 0
    gres: tuple[Gres, ...] = ()
    state: str = "UNKNOWN"
    weight: int = 1
    features: tuple[str, ...] = ()

    def gres_count(self, name: str) -> int:
        """Return how many of a gres (``gpu``) the node has, all types together."""
        return sum(count for gres_name, _, count in self.gres if gres_name == name)


@dataclass(frozen=True)
class PartitionConfig:
    """One partition as a ``PartitionName=`` line describes it; times are in minutes."""

    name: str
    nodes: tuple[str, ...] = ()
    default: bool = False
    max_time: int = INFINITE
    default_time: int | None = None  # None: unset (scontrol prints NONE)
    max_nodes: int = INFINITE
    min_nodes: int = 0
    priority_tier: int = 1
    priority_job_factor: int = 1
    allow_accounts: tuple[str, ...] | None = None  # None: ALL
    allow_groups: tuple[str, ...] | None = None  # None: ALL
    state: str = "UP"
    over_subscribe: str = "NO"
    tres_billing_weights: str = ""  # "CPU=1.0,GRES/gpu=2.0"; "": usage is charged per CPU
    preempt_mode: str = ""  # PreemptMode: OFF, CANCEL, REQUEUE; "": the global one


@dataclass(frozen=True)
class SlurmConfig:
    """The whole of slurm.conf; times are minutes except where a name says seconds."""

    path: str = ""
    cluster_name: str = "cluster"
    controller_host: str = "localhost"
    controller_addr: str = "localhost"
    controller_port: int = 6817
    # Later SlurmctldHost lines: the backup controllers' names and addresses, in order.
    backup_controllers: tuple[tuple[str, str], ...] = ()
    # SlurmctldTimeout, seconds: a controller that has not renewed its role for this long
    # has lost it to a backup. Slurm's default is 120; the role here is renewed every
    # second by a thread of its own, so 5 tolerates four missed renewals and keeps a lost
    # controller to seconds.
    slurmctld_timeout: int = 5
    slurmd_port: int = 6818
    state_save_location: str = "/var/spool/slurmctld"
    slurm_user: str = "root"  # SlurmUser: slurmctld's user, trusted by the node agents
    slurmd_spool_dir: str = "/var/spool/slurmd"  # may hold %n (node name) and %h
    auth_type: str = "auth/hmac"
    tls_type: str = tlsconf.TLS_NONE  # TLSType: tls/openssl serves and dials gRPC over TLS
    tls_parameters: dict[str, str] = field(default_factory=dict)  # TLSParameters
    scheduler_type: str = "sched/backfill"
    scheduler_parameters: dict[str, str] = field(default_factory=dict)  # flag -> ""
    priority_type: str = "priority/basic"
    priority_weight_age: int = 0
    priority_weight_job_size: int = 0
    priority_weight_partition: int = 0
    priority_weight_fairshare: int = 0
    priority_weight_qos: int = 0
    priority_max_age: int = 7 * 24 * 60
    priority_decay_half_life: int = 7 * 24 * 60
    priority_favor_small: bool = False
    accounting_storage_enforce: tuple[str, ...] = ()  # associations, limits
    slurmd_timeout: int = 300  # seconds
    kill_wait: int = DEFAULT_KILL_WAIT  # seconds
    job_acct_gather_frequency: int = 30  # seconds between usage samples of a task; 0: none
    job_acct_gather_params: tuple[str, ...] = ()  # OverMemoryKill: --mem is enforced
    task_plugin: tuple[str, ...] = ()  # task/cgroup: steps confined as cgroup.conf says
    job_requeue: bool = True
    requeue_delay: int = 5  # seconds a requeued job waits (Slurm: about 120, fixed)
    preempt_type: str = "preempt/none"  # or preempt/partition_prio, preempt/qos
    preempt_mode: str = "OFF"  # what becomes of a preempted job: OFF, CANCEL, REQUEUE
    preempt_exempt_time: int = 0  # minutes a job runs before it may be preempted
    min_job_age: int = 300  # seconds
    max_array_size: int = 1001
    max_job_count: int = 10000
    gres_types: tuple[str, ...] = ()
    slurmd_parameters: tuple[str, ...] = ()
    select_type_parameters: tuple[str, ...] = ()
    launch_parameters: tuple[str, ...] = ()  # use_interactive_step: salloc's shell on a node
    interactive_step_options: str = DEFAULT_INTERACTIVE_STEP_OPTIONS  # srun's, for that shell
    metrics_type: str = ""  # MetricsType: metrics/openmetrics serves the controller's gauges
    metrics_port: int = 0  # MetricsPort (ours): their HTTP port; 0, any free one
    metrics_auth_users: tuple[str, ...] = ()  # MetricsAuthUsers: who may read them (a token)
    metrics_parameters: tuple[str, ...] = ()  # MetricsParameters: ignore_private_data
    private_data: tuple[str, ...] = ()  # PrivateData: jobs, nodes... (restricts the metrics)
    prolog: tuple[str, ...] = ()  # Prolog: programs (or globs) slurmd runs before a job's tasks
    epilog: tuple[str, ...] = ()  # Epilog: programs slurmd runs when a job ends on the node
    prolog_flags: tuple[str, ...] = ()  # PrologFlags: Alloc, NoHold, Serial...
    prolog_epilog_timeout: int = 0  # seconds; 0: wait for them as long as they run
    prolog_timeout: int = 0  # PrologTimeout; 0: PrologEpilogTimeout
    epilog_timeout: int = 0  # EpilogTimeout; 0: PrologEpilogTimeout
    prolog_slurmctld: tuple[str, ...] = ()  # run by the controller at a job's allocation
    epilog_slurmctld: tuple[str, ...] = ()  # run by the controller at a job's end
    task_prolog: str = ""  # TaskProlog: run as the user before each task; sets its environment
    task_epilog: str = ""  # TaskEpilog: run as the user after each task
    srun_prolog: str = ""  # SrunProlog: srun runs it before a step
    srun_epilog: str = ""  # SrunEpilog: srun runs it after a step
    health_check_program: str = ""  # HealthCheckProgram: run by slurmd, as root
    health_check_interval: int = 0  # seconds between its runs; 0: only at slurmd's start
    health_check_node_state: tuple[str, ...] = ("ANY",)  # the nodes it runs on
    reboot_program: str = ""  # RebootProgram: what ``scontrol reboot`` runs on a node
    resume_timeout: int = 60  # ResumeTimeout: seconds a rebooting node has to come back
    topology_plugin: str = "topology/flat"
    topology_param: tuple[str, ...] = ()
    topology: Topology | None = None  # topology.conf, for topology/tree and topology/block
    nodes: tuple[NodeConfig, ...] = ()
    partitions: tuple[PartitionConfig, ...] = ()
    warnings: tuple[str, ...] = ()
    _nodes_by_name: dict[str, NodeConfig] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self._nodes_by_name.update((node.name, node) for node in self.nodes)

    def node(self, name: str) -> NodeConfig | None:
        """Return the node of this name, or None."""
        return self._nodes_by_name.get(name)

    def partition(self, name: str) -> PartitionConfig | None:
        """Return the partition of this name, or None."""
        return next((part for part in self.partitions if part.name == name), None)

    def default_partition(self) -> PartitionConfig | None:
        """Return the ``Default=YES`` partition, or None when there is none."""
        return next((part for part in self.partitions if part.default), None)

    def node_partitions(self, name: str) -> tuple[str, ...]:
        """Return the names of the partitions a node is in, in config order."""
        return tuple(part.name for part in self.partitions if name in part.nodes)

    def slurmd_address(self, name: str) -> tuple[str, int]:
        """Return ``(addr, port)`` of a node's slurmd. Raises KeyError for an unknown node."""
        node = self._nodes_by_name[name]
        return node.addr, self.slurmd_port if node.port is None else node.port

    def tls_files(self, role: str = "ctld") -> tuple[str, str, str] | None:
        """The CA, certificate and key ``role`` ("ctld"/"slurmd") uses under TLS, or None."""
        return tlsconf.tls_files(self.path, self.tls_type, self.tls_parameters, role)

    def slurmd_spool_dir_for(self, node_name: str) -> str:
        """Return SlurmdSpoolDir with ``%n`` (node name) and ``%h`` (its hostname) expanded."""
        node = self._nodes_by_name.get(node_name)
        hostname = node.hostname if node else node_name
        return self.slurmd_spool_dir.replace("%n", node_name).replace("%h", hostname)

    @property
    def controllers(self) -> tuple[tuple[str, str], ...]:
        """Every SlurmctldHost's name and address, the primary first, then its backups."""
        return ((self.controller_host, self.controller_addr), *self.backup_controllers)

    @property
    def memory_consumable(self) -> bool:
        """Whether jobs hold memory: ``SelectTypeParameters`` CR_*_Memory, Slurm's default."""
        params = self.select_type_parameters
        return not params or any(p.upper().endswith("MEMORY") for p in params)

    @property
    def enforce_memory(self) -> bool:
        """Whether a job or step over its memory is killed (JobAcctGatherParams=OverMemoryKill)."""
        return "OverMemoryKill" in self.job_acct_gather_params

    @property
    def task_cgroup(self) -> bool:
        """Whether steps run in cgroups as cgroup.conf says (``TaskPlugin=task/cgroup``)."""
        return "task/cgroup" in self.task_plugin

    @property
    def prolog_at_alloc(self) -> bool:
        """Whether Prolog runs at a job's allocation on all its nodes (``PrologFlags=Alloc``)."""
        return any(flag != "Serial" for flag in self.prolog_flags)

    @property
    def prolog_wait(self) -> int:
        """Seconds a Prolog may run before it is killed as failed; 0: no limit."""
        return self.prolog_timeout or self.prolog_epilog_timeout

    @property
    def epilog_wait(self) -> int:
        """Seconds an Epilog may run before it is killed as failed; 0: no limit."""
        return self.epilog_timeout or self.prolog_epilog_timeout

    @property
    def gres_conf_path(self) -> str:
        """Where gres.conf is: beside slurm.conf, as Slurm looks for it."""
        return os.path.join(os.path.dirname(self.path), "gres.conf")

    @property
    def cgroup_conf_path(self) -> str:
        """Where cgroup.conf is: beside slurm.conf, as Slurm looks for it."""
        return os.path.join(os.path.dirname(self.path), "cgroup.conf")


# --------------------------------------------------------------------------- values


def _to_int(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError("expected a non-negative integer")
    return int(text)


def _to_bool(text: str) -> bool:
    word = text.upper()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ValueError("expected YES or NO")


def _to_list(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _to_choice(text: str, choices: tuple[str, ...]) -> str:
    """The choice ``text`` names, case aside, spelt as in ``choices``."""
    word = next((choice for choice in choices if choice.lower() == text.lower()), None)
    if word is None:
        raise ValueError(f"expected one of {', '.join(choices)}")
    return word


def _to_oversubscribe(text: str) -> str:
    """``NO``, ``EXCLUSIVE``, or ``YES``/``FORCE`` with an optional ``:<jobs per resource>``."""
    word, colon, jobs = text.upper().partition(":")
    _to_choice(word, _OVERSUBSCRIBE)
    if colon and (word not in ("YES", "FORCE") or not _to_int(jobs)):
        raise ValueError("expected YES:<count> or FORCE:<count> with a positive count")
    return word + colon + jobs


# SchedulerParameters that take a number: name -> (least, greatest), as Slurm bounds them.
_SCHED_NUMBERS = {
    "bf_window": (1, 43200),  # minutes
    "bf_resolution": (1, 3600),  # seconds
    "bf_max_job_test": (1, 1_000_000),
    "max_switch_wait": (0, 0x7FFFFFFF),  # seconds
    "bf_interval": (1, 10800),  # seconds
    "bf_job_part_count_reserve": (0, 100_000),
    "default_queue_depth": (0, 1_000_000),
    "max_script_size": (1, 512 * 1024 * 1024),  # bytes
}


def parse_scheduler_parameters(text: str) -> dict[str, str]:
    """Parse a ``SchedulerParameters`` value as slurm.conf does, its numbers range-checked.

    Args:
        text: comma-separated ``name`` or ``name=value`` items.

    Returns:
        The items by name.

    Raises:
        ValueError: a number out of Slurm's range.
    """
    return _to_params(text)


def _to_params(text: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in _to_list(text):
        name, _, value = item.partition("=")
        if name in _SCHED_NUMBERS:
            least, greatest = _SCHED_NUMBERS[name]
            if not value.isascii() or not value.isdigit() or not least <= int(value) <= greatest:
                raise ValueError(f"{name} must be a number from {least} to {greatest}")
        params[name] = value
    return params


_ACCT_DATA_TYPES = frozenset(("task", "energy", "network", "filesystem"))


def _to_acct_freq(text: str) -> int:
    """JobAcctGatherFrequency: ``30``, or ``task=30,energy=0,...``; the task interval."""
    task = 30
    for item in _to_list(text):
        kind, eq, value = item.partition("=")
        if not eq:
            task = _to_int(kind)
        elif kind.lower() not in _ACCT_DATA_TYPES:
            raise ValueError(f"unknown data type {kind!r}")
        elif kind.lower() == "task":
            task = _to_int(value)
        else:
            _to_int(value)
    return task


STATE_DB_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


def _to_state_location(text: str) -> str:
    """StateSaveLocation: a directory (SQLite's file in it) or a PostgreSQL database's URL."""
    scheme, sep, _ = text.partition("://")
    if sep and scheme not in STATE_DB_SCHEMES:
        raise ValueError("expected a directory or a postgresql:// URL")
    return text


def _convert(text: str, kind: str) -> Any:
    """Convert a global key's value by its kind; raises ValueError when malformed."""
    if kind == "str":
        return text
    if kind == "lower":
        return text.lower()
    if kind == "int":
        return _to_int(text)
    if kind == "bool":
        return _to_bool(text)
    if kind == "port":
        return parse_port(text)
    if kind == "duration":
        return parse_time_limit(text, zero_is_infinite=False)
    if kind == "list":
        return _to_list(text)
    if kind == "params":
        return _to_params(text)
    if kind == "tlsparams":
        params = _to_params(text)
        tlsconf.check_parameters(params)
        return params
    if kind == "acctfreq":
        return _to_acct_freq(text)
    if kind == "stateloc":
        return _to_state_location(text)
    if kind == "prologflags":
        return tuple(_to_choice(flag, PROLOG_FLAGS) for flag in _to_list(text))
    if kind == "hcstates":
        states = tuple(_to_choice(state, HEALTH_CHECK_STATES) for state in _to_list(text))
        if not states:
            raise ValueError("expected a node state")
        return states
    return _to_choice(text, _CHOICES[kind])


def _value(record: ConfRecord, key: str, text: str, convert: Any, *args: Any) -> Any:
    """Run ``convert(text, *args)``, turning its ValueError into a ConfigError at ``record``."""
    try:
        return convert(text, *args)
    except ValueError as exc:
        raise record.error(f"invalid value for {key}: {text!r} ({exc})") from None


# --------------------------------------------------------------------------- slurm.conf


def load_slurm_conf(path: str) -> SlurmConfig:
    """Read slurm.conf (with its includes) into a validated SlurmConfig.

    Args:
        path: the slurm.conf.

    Returns:
        The configuration; ``warnings`` lists ``file:line: unknown key Foo``.

    Raises:
        ConfigError: the file is unreadable, a line is malformed, a value is
            invalid, a node is defined twice, or a partition names an unknown node.
    """
    builder = _Builder(path)
    for record in parse_file(path, _ALL_KEYS):
        builder.add(record)
    return builder.build()


class _Builder:
    """Collects records in file order (``DEFAULT`` lines apply to later lines)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.values: dict[str, Any] = {}
        self.controller: dict[str, tuple[ConfRecord, str]] = {}
        self.backups: list[tuple[str, str]] = []  # the SlurmctldHost lines after the first
        self.nodes: dict[str, NodeConfig] = {}
        self.partitions: list[tuple[ConfRecord, dict[str, tuple[ConfRecord, str]]]] = []
        self.node_defaults: dict[str, tuple[ConfRecord, str]] = {}
        self.partition_defaults: dict[str, tuple[ConfRecord, str]] = {}
        self.warnings: list[str] = []

    def warn(self, record: ConfRecord, message: str) -> None:
        self.warnings.append(f"{record.path}:{record.line}: {message}")

    def add(self, record: ConfRecord) -> None:
        if record.key == "NodeName":
            self.add_node_line(record)
        elif record.key == "PartitionName":
            self.add_partition_line(record)
        elif record.key in _UNSUPPORTED_LINES:
            self.warn(record, f"{record.key} lines are not supported; line ignored")
        else:
            for key, text in record.pairs:
                self.add_global(record, key, text)

    def add_global(self, record: ConfRecord, key: str, text: str) -> None:
        if key in _GLOBAL_KEYS:
            name, kind = _GLOBAL_KEYS[key]
            if kind in ("script", "scripts"):
                # Relative to slurm.conf's directory, as Slurm reads them; Prolog and
                # its kin may be given on several lines.
                path = os.path.join(os.path.dirname(record.path), text) if text else ""
                if kind == "script":
                    self.values[name] = path
                elif path:
                    self.values[name] = (*self.values.get(name, ()), path)
            else:
                self.values[name] = _value(record, key, text, _convert, kind)
        elif key in _CONTROLLER_KEYS:
            if key == "SlurmctldHost":
                name, addr = _value(record, key, text, parse_slurmctld_host)
                if key in self.controller:
                    names = [parse_slurmctld_host(self.controller[key][1])[0]]
                    if name in names + [backup for backup, _ in self.backups]:
                        raise record.error(f"duplicate SlurmctldHost {name}")
                    self.backups.append((name, addr))
            self.controller.setdefault(key, (record, text))  # the first is the primary
        elif key not in IGNORED_KEYS:
            self.warn(record, f"unknown key {key}")

    def _attributes(
        self, record: ConfRecord, known: list[str], defaults: dict[str, tuple[ConfRecord, str]]
    ) -> dict[str, tuple[ConfRecord, str]]:
        """Merge a line's pairs over the defaults, warning about unknown keys."""
        merged = dict(defaults)
        for key, text in record.pairs[1:]:
            if key in known:
                merged[key] = (record, text)
            elif key not in IGNORED_KEYS:
                self.warn(record, f"unknown key {key}")
        return merged

    def add_node_line(self, record: ConfRecord) -> None:
        attributes = self._attributes(record, _NODE_KEYS, self.node_defaults)
        if record.value.upper() == "DEFAULT":
            self.node_defaults = attributes
            return
        for node in _build_nodes(record, attributes):
            if node.name in self.nodes:
                raise record.error(f"duplicate node {node.name}")
            self.nodes[node.name] = node

    def add_partition_line(self, record: ConfRecord) -> None:
        attributes = self._attributes(record, _PARTITION_KEYS, self.partition_defaults)
        if record.value.upper() == "DEFAULT":
            self.partition_defaults = attributes
            return
        if any(seen.value == record.value for seen, _ in self.partitions):
            raise record.error(f"duplicate partition {record.value}")
        self.partitions.append((record, attributes))

    def build(self) -> SlurmConfig:
        host, addr = self._controller_address()
        partitions = [_build_partition(rec, attrs, self.nodes) for rec, attrs in self.partitions]
        defaults = [i for i, part in enumerate(partitions) if part.default]
        for i in defaults[:-1]:  # as in Slurm, the last Default=YES wins
            self.warn(self.partitions[i][0], "more than one default partition; the last wins")
            partitions[i] = replace(partitions[i], default=False)
        plugin = self.values.get("topology_plugin", "")
        params = self.values.get("topology_param", ())
        topo = load_topology(topology_conf_path(self.path), plugin, params, list(self.nodes))
        return SlurmConfig(
            path=self.path,
            controller_host=host,
            controller_addr=addr,
            backup_controllers=tuple(self.backups),
            topology=topo,
            nodes=tuple(self.nodes.values()),
            partitions=tuple(partitions),
            warnings=tuple(self.warnings),
            **self.values,
        )

    def _controller_address(self) -> tuple[str, str]:
        """The primary controller's name and address (Slurm requires one; we default)."""
        texts = {key: text for key, (_, text) in self.controller.items()}
        if "SlurmctldHost" in texts:
            return parse_slurmctld_host(texts["SlurmctldHost"])
        name = texts.get("ControlMachine") or texts.get("ControlAddr")
        if name:  # the names before SlurmctldHost, still accepted by Slurm 22.05
            return name, texts.get("ControlAddr") or name
        return "localhost", "localhost"


# --------------------------------------------------------------------------- nodes


def _build_nodes(
    record: ConfRecord, attributes: dict[str, tuple[ConfRecord, str]]
) -> list[NodeConfig]:
    """Make one NodeConfig per name of a ``NodeName=`` line."""
    names = _value(record, "NodeName", record.value, hostlist.expand)
    addrs = _per_node(record, attributes, "NodeAddr", names)
    hostnames = _per_node(record, attributes, "NodeHostname", names)
    ports = _per_node(record, attributes, "Port", names)
    common = _node_common(attributes)
    nodes = []
    for name, addr, node_host, port_text in zip(names, addrs, hostnames, ports, strict=True):
        port = None if port_text is None else _value(record, "Port", port_text, parse_port)
        nodes.append(
            NodeConfig(
                name=name, addr=addr or name, hostname=node_host or name, port=port, **common
            )
        )
    return nodes


def _per_node(
    record: ConfRecord, attributes: dict[str, tuple[ConfRecord, str]], key: str, names: list[str]
) -> list[str | None]:
    """Spread a hostlist-valued key (``NodeAddr=10.0.0.[1-4]``) over the line's nodes."""
    if key not in attributes:
        return [None] * len(names)
    where, text = attributes[key]
    values: list[str | None] = _value(where, key, text, hostlist.expand)
    if len(values) == 1:
        return values * len(names)
    if len(values) != len(names):
        raise where.error(f"{key} names {len(values)} values for {len(names)} nodes")
    return values


def _node_common(attributes: dict[str, tuple[ConfRecord, str]]) -> dict[str, Any]:
    """The attributes every node of a line shares, with Slurm's derived CPU topology."""
    ints = {}
    for key in ("CPUs", "Procs", "Boards", "Sockets", "SocketsPerBoard", "CoresPerSocket",
                "ThreadsPerCore", "RealMemory", "TmpDisk", "Weight"):  # fmt: skip
        if key in attributes:
            where, text = attributes[key]
            ints[key] = _value(where, key, text, _to_int)
    boards = ints.get("Boards", 1)
    sockets = ints.get("Sockets", boards * ints.get("SocketsPerBoard", 1))
    cores, threads = ints.get("CoresPerSocket", 1), ints.get("ThreadsPerCore", 1)
    cpus = ints.get("CPUs", ints.get("Procs", sockets * cores * threads))
    topology = ("Sockets", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
    if ("CPUs" in ints or "Procs" in ints) and not any(key in ints for key in topology):
        sockets = cpus  # Slurm: CPUs alone means that many single-core sockets
    common: dict[str, Any] = {
        "cpus": cpus, "boards": boards, "sockets": sockets, "cores_per_socket": cores,
        "threads_per_core": threads, "real_memory_mb": ints.get("RealMemory", 1),
        "tmp_disk_mb": ints.get("TmpDisk", 0), "weight": ints.get("Weight", 1),
    }  # fmt: skip
    if "Gres" in attributes:
        where, text = attributes["Gres"]
        common["gres"] = tuple(_value(where, "Gres", text, parse_gres))
    if "State" in attributes:
        where, text = attributes["State"]
        common["state"] = _value(where, "State", text, _to_choice, _NODE_STATES)
    for key in ("Feature", "Features"):
        if key in attributes:
            common["features"] = _to_list(attributes[key][1])
    return common


# --------------------------------------------------------------------------- partitions


def _build_partition(
    record: ConfRecord,
    attributes: dict[str, tuple[ConfRecord, str]],
    nodes: dict[str, NodeConfig],
) -> PartitionConfig:
    """Make the PartitionConfig of one ``PartitionName=`` line."""
    values: dict[str, Any] = {"name": record.value}
    for key, (where, text) in attributes.items():
        values.update(_partition_value(where, key, text, nodes))
    return PartitionConfig(**values)


def _partition_value(
    record: ConfRecord, key: str, text: str, nodes: dict[str, NodeConfig]
) -> dict[str, Any]:
    """Convert one partition attribute into its PartitionConfig field(s)."""
    if key == "Nodes":
        return {"nodes": _partition_nodes(record, text, nodes)}
    if key == "Default":
        return {"default": _value(record, key, text, _to_bool)}
    if key in ("MaxTime", "DefaultTime"):
        field_name = "max_time" if key == "MaxTime" else "default_time"
        return {field_name: _value(record, key, text, parse_time_limit)}
    if key == "MaxNodes":
        unlimited = text.upper() in ("UNLIMITED", "INFINITE")
        return {"max_nodes": INFINITE if unlimited else _value(record, key, text, _to_int)}
    simple_ints = {
        "MinNodes": "min_nodes", "PriorityTier": "priority_tier",
        "PriorityJobFactor": "priority_job_factor",
    }  # fmt: skip
    if key in simple_ints:
        return {simple_ints[key]: _value(record, key, text, _to_int)}
    if key in ("AllowAccounts", "AllowGroups"):
        names = None if text.upper() == "ALL" else _to_list(text)
        return {"allow_accounts" if key == "AllowAccounts" else "allow_groups": names}
    if key == "State":
        return {"state": _value(record, key, text, _to_choice, _PARTITION_STATES)}
    if key in ("OverSubscribe", "Shared"):  # Shared is OverSubscribe's old name
        return {"over_subscribe": _value(record, key, text, _to_oversubscribe)}
    if key == "TRESBillingWeights":
        return {"tres_billing_weights": _value(record, key, text, _to_billing_weights)}
    if key == "PreemptMode":
        return {"preempt_mode": _value(record, key, text, _to_choice, PREEMPT_MODES)}
    return {}


def _to_billing_weights(text: str) -> str:
    for item in _to_list(text):
        name, sep, value = item.partition("=")
        number = value[:-1] if value[-1:].upper() in ("K", "M", "G", "T") else value
        try:
            float(number)
        except ValueError:
            raise ValueError(f"invalid TRESBillingWeights item {item!r}") from None
        if not sep or not name:
            raise ValueError(f"invalid TRESBillingWeights item {item!r}")
    return text


def _partition_nodes(
    record: ConfRecord, text: str, nodes: dict[str, NodeConfig]
) -> tuple[str, ...]:
    if text.upper() == "ALL":
        return tuple(nodes)
    names = _value(record, "Nodes", text, hostlist.expand)
    for name in names:
        if name not in nodes:
            raise record.error(f"partition {record.value}: unknown node {name} in Nodes")
    return tuple(dict.fromkeys(names))
