"""``minislurm``: manage a local cluster (``cluster up|down|status``), make keys, show the version.

Imports minislurm.local.cluster, minislurm.local.netns and click (start-up time does not
matter here).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

import click

from minislurm import VERSION_LINE, __version__, hostlist
from minislurm.conffile import read_controller_address
from minislurm.config import STATE_DB_SCHEMES
from minislurm.errors import ConfigError
from minislurm.local.cluster import ClusterSpec, default_home
from minislurm.local.netns import NetnsCluster, missing_requirements, open_cluster
from minislurm.security import cred


@click.group()
@click.version_option(__version__, message=f"minislurm %(version)s ({VERSION_LINE})")
def main() -> None:
    """minislurm: a Slurm-compatible workload manager for GPU clusters."""


@main.group()
def cluster() -> None:
    """A local cluster: one controller and N node agents on this machine."""


HOME_OPTION = click.option(
    "--home",
    default=default_home,
    show_default="$MINISLURM_HOME or ~/.minislurm",
    help="directory for the cluster's configuration, state and logs",
)


@cluster.command()
@HOME_OPTION
@click.option("--nodes", default=2, show_default=True, type=click.IntRange(1, 8192))
@click.option(
    "--nodes-per-slurmd",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="nodes each slurmd process serves (many: emulate a large cluster)",
)
@click.option("--gpus-per-node", default=8, show_default=True, type=click.IntRange(0, 64))
@click.option("--cpus-per-node", default=8, show_default=True, type=click.IntRange(1, 4096))
@click.option(
    "--memory-per-node", default=16000, show_default=True, type=click.IntRange(1), help="MiB"
)
@click.option(
    "--netns",
    is_flag=True,
    help="each node in a network namespace of its own, with its own address and hostname (root)",
)
@click.option(
    "--tls",
    is_flag=True,
    help="gRPC over TLS only (TLSType=tls/openssl), with a new CA and certificate (openssl)",
)
@click.option(
    "--topology",
    type=click.File("r"),
    help="a topology.conf to install; its switch or block lines set TopologyPlugin",
)
@click.option(
    "--gres-conf",
    type=click.File("r"),
    help="a gres.conf to install instead of Count= fake GPUs (Links= lines, say)",
)
@click.option(
    "--controllers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 9),
    help="slurmctlds: a primary and backups that take over, their state in PostgreSQL",
)
@click.option(
    "--db",
    "db_url",
    metavar="URL",
    help="keep the state in this PostgreSQL database (postgresql://...) instead of"
    " SQLite, or, with --controllers, the cluster's own PostgreSQL server",
)
@click.option(
    "--conf",
    "conf_lines",
    multiple=True,
    metavar="KEY=VALUE",
    help="a line to add to the slurm.conf written (repeatable): Prolog=..., MetricsType=...",
)
@click.option(
    "--cgroup-conf",
    "cgroup_lines",
    multiple=True,
    metavar="KEY=VALUE",
    help="a line of the cgroup.conf written (repeatable): ConstrainRAMSpace=yes... "
    "(with --conf TaskPlugin=task/cgroup)",
)
def up(
    home: str,
    nodes: int,
    nodes_per_slurmd: int,
    gpus_per_node: int,
    cpus_per_node: int,
    memory_per_node: int,
    netns: bool,
    tls: bool,
    topology: TextIO | None,
    gres_conf: TextIO | None,
    controllers: int,
    db_url: str | None,
    conf_lines: tuple[str, ...],
    cgroup_lines: tuple[str, ...],
) -> None:
    """Start the cluster, or restart whichever of its daemons died.

    A new cluster takes the shape options; one that exists keeps its own.
    """
    for flag, lines, name in (
        ("--conf", conf_lines, "slurm.conf"),
        ("--cgroup-conf", cgroup_lines, "cgroup.conf"),
    ):
        for line in lines:
            key, equals, _ = line.partition("=")
            if not equals or not key.strip() or "\n" in line:
                raise click.ClickException(f"{flag} {line!r}: not a KEY=VALUE line of {name}")
    local = open_cluster(home)
    if netns and not isinstance(local, NetnsCluster):
        if os.path.exists(local.conf_path):
            raise click.ClickException(
                f"cluster in {local.home} was made without --netns; stop it and use another --home"
            )
        reason = missing_requirements()
        if reason:
            raise click.ClickException(f"cannot use --netns: {reason}")
        local = NetnsCluster(home)
    if db_url and db_url.partition("://")[0] not in STATE_DB_SCHEMES:
        raise click.ClickException(f"--db {db_url}: not a postgresql:// URL")
    spec = ClusterSpec(
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        cpus_per_node=cpus_per_node,
        memory_per_node=memory_per_node,
        tls=tls,
        nodes_per_slurmd=nodes_per_slurmd,
        topology=topology.read() if topology else "",
        gres_conf=gres_conf.read() if gres_conf else "",
        conf_lines=conf_lines,
        cgroup_lines=cgroup_lines,
        controllers=controllers,
        state_db=db_url or "",
    )
    try:
        since = time.time()
        started = local.up(spec)
        local.wait_ready(started=started, since=since)
    except ConfigError as err:
        raise click.ClickException(f"--topology: {err}") from None
    except (RuntimeError, TimeoutError) as err:
        raise click.ClickException(f"{err} (logs in {local.path('log')})") from None
    names = local.node_names()
    if not started:
        click.echo(f"cluster in {local.home} is already running")
    elif len(started) < len(local.daemons()):
        click.echo(f"cluster in {local.home} was running; restarted {', '.join(started)}")
    host, port = read_controller_address(local.conf_path)
    click.echo(f"slurmctld at {host}:{port}, nodes {hostlist.compress(names)}")
    click.echo(f"SLURM_CONF={local.conf_path} (commands find it without it)")


@cluster.command()
@HOME_OPTION
def down(home: str) -> None:
    """Stop the cluster's daemons and any job still running on it."""
    local = open_cluster(home)
    if not os.path.exists(local.conf_path):
        raise click.ClickException(f"no cluster in {local.home}")
    stopped = local.down()
    click.echo(f"stopped {', '.join(stopped)}" if stopped else "cluster was not running")


@cluster.command()
@HOME_OPTION
def status(home: str) -> None:
    """Say which of the cluster's daemons run (exit 1 when any is down)."""
    local = open_cluster(home)
    if not os.path.exists(local.conf_path):
        raise click.ClickException(f"no cluster in {local.home}")
    # With backups, each running controller says which is in control.
    controllers = local.controllers()
    addrs = {daemon: addr for daemon, _, addr in controllers} if len(controllers) > 1 else {}
    down_count = 0
    for daemon in local.daemons():
        pid = local.pid(daemon)
        name = daemon
        if pid and daemon in addrs:
            name += f" ({local.controller_role(addrs[daemon]) or 'not answering'})"
        click.echo(f"{name:<12} {'running pid ' + str(pid) if pid else 'down'}")
        down_count += pid is None
    sys.exit(1 if down_count else 0)


@main.command()
@click.option("--trace", required=True, help="an SWF workload trace (.swf or .swf.gz)")
@click.option("--jobs", type=click.IntRange(1), help="simulate the first N records only")
@click.option("--policy", type=click.Choice(["fifo", "backfill"]), default="backfill")
@click.option(
    "--nodes",
    type=click.IntRange(1),
    help="nodes (default: the trace's processors, over --nodes-of rounded up)",
)
@click.option(
    "--nodes-of",
    "gpus_per_node",
    type=click.IntRange(1),
    help="each processor is a GPU on nodes of this many GPUs (default: a one-CPU node)",
)
@click.option(
    "--topology",
    help="a topology.conf: run placed by its switches and run flat, and compare",
)
@click.option(
    "--switch-wait",
    type=click.IntRange(0),
    default=0,
    help="with --topology: fitting multi-node jobs ask --switches=1@this many seconds",
)
@click.option(
    "--sched-params",
    default=None,
    help="SchedulerParameters for backfill (default: bf_resolution=1,bf_job_part_count_reserve=1)",
)
@click.option(
    "--conf",
    help="order the queue by this slurm.conf's PriorityWeight* (default: submission order)",
)
@click.option("--out", "out_dir", help="write jobs.csv and timeline.png here")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def simulate(
    trace: str,
    jobs: int | None,
    policy: str,
    nodes: int | None,
    gpus_per_node: int | None,
    topology: str | None,
    switch_wait: int,
    sched_params: str | None,
    conf: str | None,
    out_dir: str | None,
    as_json: bool,
) -> None:
    """Replay a workload trace in virtual time through the controller's scheduler."""
    from ctld import simreport  # the controller's code, loaded only for this command

    params = simreport.SIM_PARAMS if sched_params is None else sched_params
    req = simreport.SimRequest(
        trace, jobs, policy, nodes, params, out_dir, conf, gpus_per_node or 0, topology, switch_wait
    )
    try:
        report, written = simreport.run(req)
    except (OSError, ValueError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(simreport.as_json(report) if as_json else simreport.as_text(req, report))
    for path in written:
        click.echo(f"wrote {path}", err=as_json)


@main.command()
@click.argument("path", required=False)
@click.option(
    "--tls",
    is_flag=True,
    help="make the TLS CA and certificate TLSParameters name instead (PATH: the slurm.conf)",
)
def keygen(path: str | None, tls: bool) -> None:
    """Write a new cluster key (slurm.key beside $SLURM_CONF unless PATH is given).

    Every slurmctld and slurmd of a cluster must read the same key. With
    --tls: a CA and one certificate naming every host of slurm.conf, for
    TLSType=tls/openssl; every daemon and client must read the same CA.
    """
    if tls:
        _make_tls_files(path or os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf"))
        return
    if path is None:
        conf = os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")
        path = cred.key_path(conf)
    if os.path.exists(path):
        raise click.ClickException(f"{path} exists; remove it first to make a new key")
    cred.generate_key(path)
    click.echo(f"wrote {path} (mode 0600)")


def _make_tls_files(conf_path: str) -> None:
    from minislurm.config import load_slurm_conf
    from minislurm.errors import ConfigError
    from minislurm.local.tlskeys import make_cluster_certs

    try:
        written = make_cluster_certs(load_slurm_conf(conf_path))
    except (ConfigError, OSError, RuntimeError) as err:
        raise click.ClickException(str(err)) from None
    if not written:
        raise click.ClickException("the TLS files exist; remove them first to make new ones")
    click.echo("".join(f"wrote {p}\n" for p in written), nl=False)
