"""The local cluster: slurmctld and N slurmd as background processes on this machine.

``minislurm cluster up`` and the end-to-end tests both use this. Everything
lives under one directory (``$MINISLURM_HOME`` or ``~/.minislurm``):
``slurm.conf`` and ``gres.conf``, ``state/`` (the database), ``spool/<node>/``,
``log/``, one pid file per daemon and, with ``MetricsType`` set,
``metrics.url`` (the controller's metrics endpoints). A slurmd may serve several nodes
(``--nodes-per-slurmd``); ``slurmd.groups`` then lists each one's nodes.
With backup controllers (``--controllers 2``) each slurmctld is a SlurmctldHost
of its own (ctl1, ctl2... on 127.0.0.1, 127.0.0.2...), the state is in a
PostgreSQL server of the cluster's own (``postgres`` says where), unless a
URL was given. Ports are chosen by the kernel: the first controller binds
port 0 and reports it, and ``slurm.conf`` is then rewritten with that port so
commands, agents and the other controllers find it. Only processes whose pid
files this launcher wrote, and whose command line is still ours, are ever
signalled.

Imports minislurm's core modules, minislurm.local.pgserver and nodeagent.spool (where
stepd's pid file is); starts daemons as subprocesses.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from minislurm import hostlist
from minislurm.conffile import read_controller_address
from minislurm.errors import ConfigError
from minislurm.local.pgserver import PgServer, free_port
from minislurm.security import cred
from minislurm.topology import plugin_of, topology_conf_path
from nodeagent.spool import stepd_pid

if TYPE_CHECKING:
    from minislurm.wire.ctlclient import ControllerClient

CTLD = "slurmctld"
PG_FILE = "postgres"  # the cluster's own PostgreSQL server: its directory and port, a line each
GROUPS_FILE = "slurmd.groups"  # the nodes of each slurmd process, a hostlist per line
METRICS_URL_FILE = "metrics.url"  # the metrics endpoints' base URL, with MetricsType set
PROVISIONAL_PORT = 6817  # in slurm.conf until the controller reports its real port


@dataclass(frozen=True)
class ClusterSpec:
    """The shape of a local cluster."""

    nodes: int = 2
    gpus_per_node: int = 8
    cpus_per_node: int = 8
    memory_per_node: int = 16000  # MiB
    cluster_name: str = "local"
    kill_wait: int = 5
    slurmd_timeout: int = 30
    min_job_age: int = 300
    acct_gather_frequency: int = 30  # seconds between usage samples of a task
    tls: bool = False  # TLSType=tls/openssl, with a CA and certificate made for the cluster
    nodes_per_slurmd: int = 1  # nodes each slurmd process serves
    topology: str = ""  # a topology.conf to install (its kind sets TopologyPlugin)
    gres_conf: str = ""  # a gres.conf to install ("": gpus_per_node fake GPUs by Count=)
    conf_lines: tuple[str, ...] = ()  # more slurm.conf lines (cluster up --conf), last
    cgroup_lines: tuple[str, ...] = ()  # cgroup.conf's lines (cluster up --cgroup-conf)
    state_db: str = ""  # the state's PostgreSQL URL ("": SQLite under state/, or the own server)
    controllers: int = 1  # a primary and its backups: the state in PostgreSQL (the own server)

    @property
    def node_names(self) -> list[str]:
        """n1, n2, ..."""
        return [f"n{i}" for i in range(1, self.nodes + 1)]

    @property
    def agent_groups(self) -> list[str]:
        """The nodes of each slurmd process, as hostlists: ``n[1-128]``, ``n[129-256]``..."""
        names, size = self.node_names, self.nodes_per_slurmd
        return [hostlist.compress(names[i : i + size]) for i in range(0, len(names), size)]


def default_home() -> str:
    """Where the local cluster lives: ``$MINISLURM_HOME`` or ``~/.minislurm``.

    Returns:
        The directory.
    """
    return os.environ.get("MINISLURM_HOME") or os.path.join(os.path.expanduser("~"), ".minislurm")


def render_slurm_conf(
    spec: ClusterSpec,
    home: str,
    port: int,
    controller: str = "localhost(127.0.0.1)",
    node_addrs: dict[str, str] | None = None,
    controller_addrs: list[tuple[str, str]] | None = None,
) -> str:
    """The slurm.conf of a local cluster.

    Args:
        spec: the cluster's shape.
        home: its directory.
        port: the controller's port.
        controller: the ``SlurmctldHost`` value.
        node_addrs: each node's NodeAddr (each node then gets a line of its own
            with its NodeHostname); None: every node at 127.0.0.1.
        controller_addrs: with several controllers, their names and addresses
            (None: :func:`controller_hosts`).

    Returns:
        The file's text.
    """
    last = spec.nodes
    nodes = "n1" if last == 1 else f"n[1-{last}]"
    shape = (
        f"CPUs={spec.cpus_per_node} Boards=1 SocketsPerBoard=1 "
        f"CoresPerSocket={spec.cpus_per_node} ThreadsPerCore=1 "
        f"RealMemory={spec.memory_per_node} Gres=gpu:{spec.gpus_per_node} State=UNKNOWN"
    )
    if node_addrs is None:
        node_lines = f"NodeName={nodes} NodeAddr=127.0.0.1 {shape}\n"
    else:
        node_lines = "".join(
            f"NodeName={name} NodeAddr={addr} NodeHostname={name} {shape}\n"
            for name, addr in node_addrs.items()
        )
    if spec.controllers > 1:
        named = controller_addrs or controller_hosts(spec.controllers)
        hosts = "".join(f"SlurmctldHost={name}({addr})\n" for name, addr in named)
    else:
        hosts = f"SlurmctldHost={controller}\n"
    tls_line = "TLSType=tls/openssl\n" if spec.tls else ""
    if spec.topology:
        tls_line += f"TopologyPlugin={plugin_of(spec.topology)}\n"
    return f"""\
# Written by `minislurm cluster up`; rewritten when the controller starts.
ClusterName={spec.cluster_name}
{hosts}SlurmctldPort={port}
StateSaveLocation={spec.state_db or f"{home}/state"}
SlurmdSpoolDir={home}/spool/%n
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
KillWait={spec.kill_wait}
SlurmdTimeout={spec.slurmd_timeout}
MinJobAge={spec.min_job_age}
MaxArraySize=10001
JobAcctGatherFrequency=task={spec.acct_gather_frequency}
{tls_line}{node_lines}PartitionName=gpu Nodes={nodes} Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes={nodes} Default=NO MaxTime=60 State=UP
""" + "".join(f"{line}\n" for line in spec.conf_lines)


def controller_hosts(count: int) -> list[tuple[str, str]]:
    """The SlurmctldHost names and addresses of a local cluster's controllers.

    Each has a loopback address of its own (127.0.0.N), so that they share one port
    as Slurm's controllers on their own hosts do.
    """
    return [(f"ctl{i}", f"127.0.0.{i}") for i in range(1, count + 1)]


def render_gres_conf(spec: ClusterSpec) -> str:
    """The gres.conf of a local cluster: the spec's own, else fake GPUs, ``Count=`` per node.

    Args:
        spec: the cluster's shape.

    Returns:
        The file's text.
    """
    if spec.gres_conf:
        return spec.gres_conf
    nodes = "n1" if spec.nodes == 1 else f"n[1-{spec.nodes}]"
    return f"NodeName={nodes} Name=gpu Count={spec.gpus_per_node}\n"


def write_cgroup_conf(path: str, lines: tuple[str, ...]) -> None:
    """Write a local cluster's cgroup.conf, and check that it reads.

    Args:
        path: where (beside slurm.conf).
        lines: its lines (``ConstrainRAMSpace=yes``...).

    Raises:
        ConfigError: a line does not read (the file is removed).
    """
    from minislurm.cgroupconf import load_cgroup_conf

    _write_atomic(path, "".join(f"{line}\n" for line in lines))
    try:
        load_cgroup_conf(path)
    except ConfigError:
        os.unlink(path)
        raise


def check_gres_conf(spec: ClusterSpec, path: str) -> None:
    """Check that a gres.conf reads and gives each node the spec's fake GPUs.

    Args:
        spec: the cluster's shape.
        path: the gres.conf.

    Raises:
        ValueError: a malformed line, or a node with another number of GPUs.
    """
    from minislurm.gresconf import load_gres_conf

    for name in spec.node_names:
        try:
            gpu_lines = [g for g in load_gres_conf(path, name) if g.name == "gpu"]
        except ConfigError as err:
            raise ValueError(str(err)) from None
        if any(g.autodetect != "off" for g in gpu_lines):
            continue  # real devices: slurmd finds (or misses) them
        found = sum(g.count for g in gpu_lines)
        if found != spec.gpus_per_node:
            raise ValueError(f"{name} has {found} GPUs there, not {spec.gpus_per_node}")


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _listens(addr: str, port: int) -> bool:
    """Whether something accepts connections at an address."""
    try:
        socket.create_connection((addr, port), timeout=1.0).close()
    except OSError:
        return False
    return True


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``predicate`` until it holds.

    Args:
        predicate: the condition.
        timeout: seconds to wait at most.
        what: what we wait for, for the error.

    Raises:
        TimeoutError: it did not hold in time.
    """
    deadline = time.monotonic() + timeout
    delay = 0.01
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _controller_client(conf_path: str, addr: str = "") -> ControllerClient:
    """A client (calls of 5 s) of the controller at ``addr``, or ("") of the one in control.

    Raises:
        ConfigError: slurm.conf is malformed.
        minislurm.wire.h2grpc.RpcError: no credential can be made.
    """
    from minislurm.conffile import read_client_config
    from minislurm.security import auth
    from minislurm.wire import tls
    from minislurm.wire.ctlclient import ControllerClient

    config = read_client_config(conf_path)
    context = tls.client_context(config.tls_ca) if config.tls_ca else None
    signer = auth.signer_for(conf_path)
    if addr:
        return ControllerClient(addr, config.port, 5.0, signer=signer, tls=context)
    return ControllerClient(
        config.host, config.port, 5.0, signer=signer, tls=context, backups=config.hosts[1:]
    )


class LocalCluster:
    """Starts, checks and stops the daemons of a local cluster in ``home``."""

    def __init__(self, home: str) -> None:
        self.home = os.path.abspath(home)
        self.conf_path = os.path.join(self.home, "slurm.conf")

    def path(self, *parts: str) -> str:
        """A path inside the cluster's directory."""
        return os.path.join(self.home, *parts)

    def pid_file(self, daemon: str) -> str:
        """The pid file of a daemon (``slurmctld`` or ``slurmd-n1``)."""
        return self.path(f"{daemon}.pid")

    def node_names(self) -> list[str]:
        """The nodes of the written configuration."""
        from minislurm.config import load_slurm_conf

        return [n.name for n in load_slurm_conf(self.conf_path).nodes]

    def agent_groups(self) -> list[str]:
        """The nodes of each slurmd process (hostlists); one node each unless told otherwise."""
        try:
            with open(self.path(GROUPS_FILE)) as f:
                return f.read().split()
        except FileNotFoundError:
            return self.node_names()

    def pid(self, daemon: str) -> int | None:
        """The pid of a daemon of ours that is alive, else None.

        Args:
            daemon: ``slurmctld`` or ``slurmd-<node>``.

        Returns:
            The pid, only if that process is still this cluster's daemon.
        """
        pid = _read_int(self.pid_file(daemon))
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            return None
        if self.conf_path.encode() not in args:
            return None
        return pid

    def render_config(self, spec: ClusterSpec) -> str:
        """The slurm.conf this cluster starts with: every daemon on loopback.

        Args:
            spec: the cluster's shape.

        Returns:
            The file's text.
        """
        return render_slurm_conf(spec, self.home, PROVISIONAL_PORT)

    def controller_listen(self) -> str:
        """The address slurmctld listens on."""
        return "127.0.0.1"

    def controller_argv(self, host: str, argv: list[str]) -> list[str]:
        """The command line that starts a slurmctld (here: ``argv`` as it is).

        Args:
            host: which SlurmctldHost it is ("": the only one).
            argv: slurmctld's own command line.

        Returns:
            What to execute.
        """
        return argv

    def agent_argv(self, nodes: str, argv: list[str]) -> list[str]:
        """The command line that starts a slurmd (here: ``argv`` as it is).

        Args:
            nodes: its nodes (a hostlist).
            argv: slurmd's own command line.

        Returns:
            What to execute.
        """
        return argv

    def write_config(self, spec: ClusterSpec) -> None:
        """Create the directory tree and the configuration files.

        Args:
            spec: the cluster's shape.
        """
        for sub in ("state", "log", "spool"):
            os.makedirs(self.path(sub), exist_ok=True)
        if spec.controllers > 1 and not spec.state_db:
            spec = replace(spec, state_db=self._make_database())
        topology = topology_conf_path(self.conf_path)
        if spec.topology:
            _write_atomic(topology, spec.topology)
        _write_atomic(self.conf_path, self.render_config(spec))
        _write_atomic(self.path("gres.conf"), render_gres_conf(spec))
        if spec.gres_conf:
            try:
                check_gres_conf(spec, self.path("gres.conf"))
            except ValueError as err:
                os.unlink(self.conf_path)  # the next `up` starts afresh
                raise RuntimeError(f"--gres-conf: {err}") from None
        if spec.cgroup_lines:
            try:
                write_cgroup_conf(self.path("cgroup.conf"), spec.cgroup_lines)
            except ConfigError as err:
                os.unlink(self.conf_path)  # the next `up` starts afresh
                raise RuntimeError(f"--cgroup-conf: {err}") from None
        if spec.topology or spec.conf_lines:
            from minislurm.config import load_slurm_conf

            try:
                load_slurm_conf(self.conf_path)
            except ConfigError as err:
                os.unlink(self.conf_path)  # the next `up` starts afresh
                if spec.topology:
                    os.unlink(topology)
                raise RuntimeError(
                    f"{'--topology' if spec.topology else '--conf'}: {err}"
                ) from None
        if spec.nodes_per_slurmd > 1:
            _write_atomic(self.path(GROUPS_FILE), "".join(f"{g}\n" for g in spec.agent_groups))
        cred.generate_key(cred.key_path(self.conf_path))
        if spec.tls:
            from minislurm.config import load_slurm_conf
            from minislurm.local.tlskeys import make_cluster_certs

            make_cluster_certs(load_slurm_conf(self.conf_path))

    def _spawn(self, daemon: str, argv: list[str]) -> int:
        log = open(self.path("log", f"{daemon}.out"), "ab")
        with log:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                cwd=self.home,
                env={**os.environ, "SLURM_CONF": self.conf_path},
            )
        _write_atomic(self.pid_file(daemon), f"{proc.pid}\n")
        return proc.pid

    def controllers(self) -> list[tuple[str, str, str]]:
        """Each controller's daemon, SlurmctldHost name and listening address, primary first.

        The only controller is the daemon ``slurmctld``; several are ``slurmctld-<name>``.
        """
        from minislurm.config import load_slurm_conf

        hosts = load_slurm_conf(self.conf_path).controllers
        if len(hosts) == 1:
            return [(CTLD, hosts[0][0], self.controller_listen())]
        return [(f"{CTLD}-{name}", name, addr) for name, addr in hosts]

    def start_controller(
        self, daemon: str = CTLD, host: str = "", listen: str = "", timeout: float = 30.0
    ) -> int:
        """Start a slurmctld and, the first time, record its port in slurm.conf.

        A controller that has run before binds the cluster's port again, as do
        the backups of a primary that has run.

        Args:
            daemon: its daemon name.
            host: which SlurmctldHost it is ("": the only one).
            listen: its address ("": :meth:`controller_listen`).
            timeout: seconds to wait for it to listen.

        Returns:
            Its pid.

        Raises:
            TimeoutError: it did not start listening.
        """
        port_file = self.path(f"{daemon}.port")
        _, port = read_controller_address(self.conf_path)
        first_start = _read_int(port_file) is None and port == PROVISIONAL_PORT
        with_port = "0" if first_start else str(port)
        if os.path.exists(port_file) and not first_start:
            os.unlink(port_file)
        metrics_url = self.path(METRICS_URL_FILE)  # written anew when MetricsType is set
        if os.path.exists(metrics_url) and daemon == CTLD:
            os.unlink(metrics_url)
        argv = [
            sys.executable,
            "-m",
            "ctld.main",
            "-D",
            "-f",
            self.conf_path,
            "-L",
            self.path("log", f"{daemon}.log"),
            "--listen",
            listen or self.controller_listen(),
            "--port",
            with_port,
            "--port-file",
            port_file,
            "--metrics-url-file",
            metrics_url,
        ]
        argv += ["--host", host] if host else []
        pid = self._spawn(daemon, self.controller_argv(host, argv))
        wait_until(
            lambda: self._alive_or_raise(pid) and os.path.exists(port_file),
            timeout,
            f"{daemon} to listen",
        )
        bound = _read_int(port_file)
        if bound != port:
            with open(self.conf_path) as f:
                text = f.read()
            _write_atomic(
                self.conf_path,
                text.replace(f"SlurmctldPort={port}\n", f"SlurmctldPort={bound}\n", 1),
            )
        return pid

    def own_database(self) -> PgServer | None:
        """The cluster's own PostgreSQL server, when it has one (``--controllers``)."""
        try:
            with open(self.path(PG_FILE)) as f:
                directory, port, host = f.read().split()
        except FileNotFoundError:
            return None
        return PgServer(directory, int(port), host)

    def _make_database(self) -> str:
        """Make the cluster's own PostgreSQL server (``up`` starts it).

        Its files are under the cluster's directory; run as root, in a directory of
        its own under the system's temp directory (the server runs as another user,
        who must reach it).

        Returns:
            The URL of its database.
        """
        os.makedirs(self.home, exist_ok=True)
        if os.geteuid() == 0:
            directory = tempfile.mkdtemp(prefix="minislurm-pg-")
        else:
            directory = self.path("postgres")
        host = self.database_host()
        server = PgServer(directory, free_port(), host)  # the bridge may not be up yet
        _write_atomic(self.path(PG_FILE), f"{directory}\n{server.port}\n{host}\n")
        server.init(self.database_clients())
        return server.url()

    def database_host(self) -> str:
        """The address the cluster's own PostgreSQL server listens on."""
        return "127.0.0.1"

    def database_clients(self) -> str:
        """The network whose hosts its server trusts, beside loopback ("": none)."""
        return ""

    def _alive_or_raise(self, pid: int) -> bool:
        try:
            finished, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True  # not our child (started by an earlier `up`)
        if finished:
            raise RuntimeError(
                f"daemon pid {pid} exited with status {status}; see {self.path('log')}"
            )
        return True

    def start_agent(self, nodes: str) -> int:
        """Start the slurmd of one node, or of several.

        Args:
            nodes: the node's name, or a hostlist (one process serves them all).

        Returns:
            Its pid.
        """
        from minislurm.config import load_slurm_conf

        addr, _ = load_slurm_conf(self.conf_path).slurmd_address(hostlist.expand(nodes)[0])
        argv = [
            sys.executable,
            "-m",
            "nodeagent.main",
            "-D",
            "-f",
            self.conf_path,
            "-N",
            nodes,
            "-L",
            self.path("log", f"slurmd-{nodes}.log"),
            "--listen",
            addr,
            "--port",
            "0",
            "--addr",
            addr,
        ]
        return self._spawn(f"slurmd-{nodes}", self.agent_argv(nodes, argv))

    def daemons(self) -> list[str]:
        """Every daemon of the cluster: its controllers, then slurmd-<nodes> for each slurmd."""
        controllers = [daemon for daemon, _, _ in self.controllers()]
        return controllers + [f"slurmd-{g}" for g in self.agent_groups()]

    def up(self, spec: ClusterSpec) -> list[str]:
        """Start the cluster, or restart whichever of its daemons died.

        Args:
            spec: the shape, used when no configuration exists yet.

        Returns:
            The daemons started by this call.
        """
        if not os.path.exists(self.conf_path):
            self.write_config(spec)
        database = self.own_database()
        if database is not None and not database.running():
            database.start()
        cred.generate_key(cred.key_path(self.conf_path))  # clusters made before keys existed
        started = []
        for daemon, host, addr in self.controllers():
            if self.pid(daemon) is None:
                self.start_controller(daemon, host if daemon != CTLD else "", addr)
                started.append(daemon)
        for nodes in self.agent_groups():
            daemon = f"slurmd-{nodes}"
            if self.pid(daemon) is None:
                self.start_agent(nodes)
                started.append(daemon)
        return started

    def stop(self, daemon: str, sig: int = signal.SIGTERM, timeout: float = 10.0) -> bool:
        """Stop one daemon: ``sig``, then SIGKILL after ``timeout`` seconds.

        Args:
            daemon: its name.
            sig: the first signal.
            timeout: seconds before SIGKILL.

        Returns:
            Whether it was running.
        """
        pid = self.pid(daemon)
        if pid is None:
            return False
        os.kill(pid, sig)
        try:
            wait_until(lambda: self._gone(pid), timeout, f"{daemon} to stop")
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: self._gone(pid), 5.0, f"{daemon} to die")
        os.unlink(self.pid_file(daemon))
        return True

    @staticmethod
    def _gone(pid: int) -> bool:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split(") ")[1].startswith("Z")
        except OSError:
            return True

    def down(self) -> list[str]:
        """Stop every daemon of the cluster (agents first), then kill leftover jobs.

        Returns:
            The daemons that were running.
        """
        stopped = [d for d in reversed(self.daemons()) if self.stop(d)]
        self.kill_jobs()
        database = self.own_database()
        if database is not None:
            database.stop()
        return stopped

    def stepd_pids(self) -> list[int]:
        """Live job supervisors (stepd) started by this cluster's agents.

        Returns:
            Their pids.
        """
        found = []
        spool = self.path("spool")
        for node in os.listdir(spool) if os.path.isdir(spool) else []:
            for job in os.listdir(os.path.join(spool, node)):
                pid = stepd_pid(os.path.join(spool, node, job))
                if pid is not None:
                    found.append(pid)
        return found

    def kill_jobs(self, timeout: float = 15.0) -> int:
        """Kill every job still running on the cluster's nodes (through their stepds).

        Args:
            timeout: seconds before stragglers get SIGKILL.

        Returns:
            How many job supervisors were running.
        """
        pids = self.stepd_pids()
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
        try:
            wait_until(lambda: all(self._gone(p) for p in pids), timeout, "jobs to end")
        except TimeoutError:
            for pid in pids:
                if not self._gone(pid):
                    os.killpg(pid, signal.SIGKILL)
        return len(pids)

    def controller_role(self, addr: str) -> str:
        """What the controller at ``addr`` says it is: "primary", "backup", or "" (no answer)."""
        from minislurm.wire.h2grpc import RpcError

        try:
            with _controller_client(self.conf_path, addr) as client:
                return str(client.call("Ping").role)
        except RpcError:
            return ""

    def wait_ready(
        self, timeout: float = 30.0, started: Collection[str] = (), since: float = 0.0
    ) -> None:
        """Wait until every node has registered and responds, those of agents just started anew.

        An agent killed a moment ago leaves its node responding in the
        controller's view until its timeout; its new agent is ready only once
        it has registered itself: the node's start time is new (to the second)
        and its recorded address answers (the old agent's port does not).

        Args:
            timeout: seconds.
            started: the daemons :meth:`up` started.
            since: when that call began (epoch seconds).

        Raises:
            TimeoutError: not ready in time.
        """
        from minislurm.wire.h2grpc import RpcError

        daemon_of = {n: f"slurmd-{g}" for g in self.agent_groups() for n in hostlist.expand(g)}

        def ready() -> bool:
            try:
                with _controller_client(self.conf_path) as client:
                    nodes = client.call("GetNodes").nodes
            except RpcError:
                return False
            return bool(nodes) and all(
                not n.state.startswith("UNKNOWN")
                and "NOT_RESPONDING" not in n.flags
                and (
                    daemon_of.get(n.name) not in started
                    or (n.slurmd_start_time >= int(since) and _listens(n.addr, n.port))
                )
                for n in nodes
            )

        wait_until(ready, timeout, "every node to register")
