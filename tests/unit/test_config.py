"""Tests of minislurm.config: slurm.conf as the daemons see it (and gres.conf beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctld.confshow import config_entries
from ctld.settings import default_db_url
from minislurm.config import (
    NodeConfig,
    PartitionConfig,
    SlurmConfig,
    load_slurm_conf,
)
from minislurm.confkeys import IGNORED_KEYS
from minislurm.errors import ConfigError
from minislurm.gresconf import GresConfig, load_gres_conf
from minislurm.units import INFINITE

REAL_CONF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "real-slurm" / "conf"
DATA = Path(__file__).resolve().parent.parent / "data" / "conf"


def _load(tmp_path: Path, text: str) -> SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    return load_slurm_conf(str(path))


def _error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    return caught.value


# --------------------------------------------------------------------------- the reference cluster


@pytest.fixture(scope="module")
def reference() -> SlurmConfig:
    return load_slurm_conf(str(REAL_CONF / "slurm.conf"))


def test_reference_slurm_conf_parses_without_warnings(reference: SlurmConfig) -> None:
    assert reference.warnings == ()


def test_reference_slurm_conf_global_values(reference: SlurmConfig) -> None:
    assert reference.path == str(REAL_CONF / "slurm.conf")
    assert reference.cluster_name == "anchor"
    assert (reference.controller_host, reference.controller_addr) == ("vm", "10.233.0.1")
    assert (reference.controller_port, reference.slurmd_port) == (6817, 6818)
    assert reference.auth_type == "auth/munge"
    assert reference.scheduler_type == "sched/backfill"
    assert reference.scheduler_parameters == {}
    assert reference.state_save_location == "/tmp/slurm-anchor/ctld"
    assert reference.slurmd_spool_dir_for("n1") == "/tmp/slurm-anchor/spool/n1"
    assert (reference.kill_wait, reference.min_job_age, reference.slurmd_timeout) == (5, 300, 300)
    assert (reference.max_array_size, reference.max_job_count) == (10001, 50000)
    assert reference.gres_types == ("gpu",)
    assert reference.slurmd_parameters == ("config_overrides",)
    assert reference.select_type_parameters == ("CR_Core",)
    assert reference.job_requeue is True
    assert reference.job_acct_gather_frequency == 30


def test_reference_slurm_conf_nodes(reference: SlurmConfig) -> None:
    assert [node.name for node in reference.nodes] == ["n1", "n2"]
    assert reference.node("n1") == NodeConfig(
        name="n1",
        addr="10.233.0.11",
        hostname="n1",
        cpus=8,
        boards=1,
        sockets=1,
        cores_per_socket=8,
        threads_per_core=1,
        real_memory_mb=8000,
        gres=(("gpu", "", 8),),
        state="UNKNOWN",
    )
    assert reference.slurmd_address("n2") == ("10.233.0.12", 6818)
    assert reference.node("n3") is None


def test_reference_slurm_conf_partitions(reference: SlurmConfig) -> None:
    assert reference.partitions == (
        PartitionConfig(name="gpu", nodes=("n1", "n2"), default=True, max_time=INFINITE),
        PartitionConfig(name="debug", nodes=("n1", "n2"), default=False, max_time=60),
    )
    default = reference.default_partition()
    assert default is not None and default.name == "gpu"
    assert reference.partition("debug") is reference.partitions[1]
    assert reference.partition("nosuch") is None
    assert reference.node_partitions("n1") == ("gpu", "debug")


def test_reference_gres_conf_gives_eight_gpu_files(reference: SlurmConfig) -> None:
    assert reference.gres_conf_path == str(REAL_CONF / "gres.conf")
    files = tuple(f"/tmp/slurm-anchor/dev/nvidia{i}" for i in range(8))
    assert load_gres_conf(reference.gres_conf_path, "n1") == [GresConfig("gpu", "", 8, files)]
    assert load_gres_conf(reference.gres_conf_path, "n3") == []


# --------------------------------------------------------------------------- tests/data/conf


@pytest.fixture(scope="module")
def local() -> SlurmConfig:
    return load_slurm_conf(str(DATA / "slurm.conf"))


def test_local_conf_global_values(local: SlurmConfig) -> None:
    assert local.warnings == ()
    assert local.cluster_name == "local"  # Slurm lower-cases ClusterName
    assert (local.controller_host, local.controller_addr) == ("head", "127.0.0.1")
    assert (local.controller_port, local.slurmd_port) == (16817, 16818)
    assert local.scheduler_parameters == {
        "bf_window": "60", "bf_continue": "", "bf_max_job_test": "500",
    }  # fmt: skip
    assert local.priority_type == "priority/multifactor"
    weights = (
        local.priority_weight_age, local.priority_weight_job_size,
        local.priority_weight_partition, local.priority_weight_fairshare,
        local.priority_weight_qos,
    )  # fmt: skip
    assert weights == (1000, 100, 10000, 0, 0)
    assert (local.priority_max_age, local.priority_decay_half_life) == (1440, 0)
    assert local.priority_favor_small is True
    assert (local.slurmd_timeout, local.kill_wait, local.min_job_age) == (30, 5, 60)
    assert local.job_requeue is False
    assert local.select_type_parameters == ("CR_Core_Memory",)


def test_included_node_line_uses_node_defaults_and_per_node_ports(local: SlurmConfig) -> None:
    assert [node.name for node in local.nodes] == ["gpu01", "gpu02", "gpu03", "gpu04"]
    node = local.node("gpu03")
    assert node == NodeConfig(
        name="gpu03",
        addr="127.0.0.1",
        hostname="gpu03",
        port=16903,
        cpus=16,
        sockets=2,
        cores_per_socket=4,
        threads_per_core=2,
        real_memory_mb=64000,
        gres=(("gpu", "a100", 4),),
        features=("a100", "nvlink"),
    )
    assert node.gres_count("gpu") == 4
    assert local.slurmd_address("gpu04") == ("127.0.0.1", 16904)
    assert local.slurmd_spool_dir_for("gpu02") == "/tmp/minislurm/spool/gpu02"


def test_partition_defaults_and_values(local: SlurmConfig) -> None:
    gpu, debug, everything = local.partitions
    assert gpu == PartitionConfig(
        name="gpu",
        nodes=("gpu01", "gpu02", "gpu03", "gpu04"),
        default=True,
        default_time=10,
        priority_tier=2,
    )
    assert (debug.max_time, debug.max_nodes, debug.allow_accounts) == (30, 1, ("dev", "ops"))
    assert debug.default_time is None
    assert everything.nodes == gpu.nodes
    assert (everything.state, everything.over_subscribe) == ("DRAIN", "FORCE:4")
    assert local.default_partition() == gpu


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (
            "gpu01",
            [GresConfig("gpu", "a100", 4, tuple(f"/dev/nvidia{i}" for i in range(4))),
             GresConfig("shard", "", 8)],
        ),
        ("gpu04", [GresConfig("gpu", "a100", 4, (), "nvml"), GresConfig("shard", "", 8)]),
        ("login", [GresConfig("shard", "", 8)]),
    ],
)  # fmt: skip
def test_gres_conf_entries_follow_node_name_selectors(
    local: SlurmConfig, node: str, expected: list[GresConfig]
) -> None:
    assert load_gres_conf(local.gres_conf_path, node) == expected


# --------------------------------------------------------------------------- defaults


def test_minimal_conf_takes_slurm_and_minislurm_defaults(tmp_path: Path) -> None:
    config = _load(tmp_path, "NodeName=n1\n")
    assert config == SlurmConfig(
        path=str(tmp_path / "slurm.conf"),
        nodes=(NodeConfig(name="n1", addr="n1", hostname="n1"),),
    )
    assert (config.cluster_name, config.auth_type, config.scheduler_type) == (
        "cluster", "auth/hmac", "sched/backfill",
    )  # fmt: skip
    assert (config.controller_port, config.slurmd_port) == (6817, 6818)
    assert (config.priority_type, config.priority_max_age) == ("priority/basic", 10080)
    assert (config.slurmd_timeout, config.kill_wait, config.min_job_age) == (300, 30, 300)
    assert config.job_requeue is True
    assert config.default_partition() is None
    assert config.slurmd_address("n1") == ("n1", 6818)


def test_keys_are_case_insensitive(tmp_path: Path) -> None:
    config = _load(tmp_path, "nodename=n1 cpus=4 REALMEMORY=100\npartitionname=p nodes=n1\n")
    assert (config.nodes[0].cpus, config.nodes[0].real_memory_mb) == (4, 100)
    assert config.partitions[0].nodes == ("n1",)


def test_node_default_lines_apply_only_to_later_lines(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "NodeName=a1 CPUs=2\n"
        "NodeName=DEFAULT CPUs=8 RealMemory=1000\n"
        "NodeName=b1\n"
        "NodeName=DEFAULT RealMemory=2000\n"
        "NodeName=c1 CPUs=4\n",
    )
    summary = [(n.name, n.cpus, n.real_memory_mb) for n in config.nodes]
    assert summary == [("a1", 2, 1), ("b1", 8, 1000), ("c1", 4, 2000)]


def test_partition_default_line_applies_to_later_partitions(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "NodeName=n1\nPartitionName=a Nodes=n1\n"
        "PartitionName=DEFAULT MaxTime=60 PriorityJobFactor=5\nPartitionName=b Nodes=n1\n",
    )
    assert [(p.name, p.max_time, p.priority_job_factor) for p in config.partitions] == [
        ("a", INFINITE, 1), ("b", 60, 5),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "topology"),
    [
        ("CPUs=8", (8, 8, 1, 1)),  # CPUs alone: that many single-core sockets
        ("Sockets=2 CoresPerSocket=4 ThreadsPerCore=2", (16, 2, 4, 2)),
        ("Boards=2 SocketsPerBoard=2 CoresPerSocket=3", (12, 4, 3, 1)),
        ("CPUs=4 CoresPerSocket=4", (4, 1, 4, 1)),
        ("Procs=6", (6, 6, 1, 1)),
        ("", (1, 1, 1, 1)),
    ],
)
def test_cpu_topology_is_derived_as_slurm_derives_it(
    tmp_path: Path, line: str, topology: tuple[int, int, int, int]
) -> None:
    node = _load(tmp_path, f"NodeName=n1 {line}\n").nodes[0]
    assert (node.cpus, node.sockets, node.cores_per_socket, node.threads_per_core) == topology


def test_node_addr_and_hostname_lists_pair_with_node_names(tmp_path: Path) -> None:
    config = _load(
        tmp_path, "NodeName=n[1-3] NodeAddr=10.0.0.[11-13] NodeHostname=h[1-3] Port=7000\n"
    )
    summary = [(n.name, n.addr, n.hostname, n.port) for n in config.nodes]
    assert summary == [
        ("n1", "10.0.0.11", "h1", 7000), ("n2", "10.0.0.12", "h2", 7000),
        ("n3", "10.0.0.13", "h3", 7000),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "minutes"), [("INFINITE", INFINITE), ("UNLIMITED", INFINITE), ("60", 60),
                           ("1-0", 1440), ("1:30:00", 90)],
)  # fmt: skip
def test_partition_max_time_forms(tmp_path: Path, value: str, minutes: int) -> None:
    config = _load(tmp_path, f"NodeName=n1\nPartitionName=p Nodes=n1 MaxTime={value}\n")
    assert config.partitions[0].max_time == minutes


@pytest.mark.parametrize(
    ("value", "seconds"), [("30", 30), ("task=5", 5), ("Task=10,energy=0,network=60", 10),
                           ("energy=5", 30), ("0", 0), ("task=0", 0)],
)  # fmt: skip
def test_job_acct_gather_frequency_forms(tmp_path: Path, value: str, seconds: int) -> None:
    config = _load(tmp_path, f"JobAcctGatherFrequency={value}\nNodeName=n1\n")
    assert config.job_acct_gather_frequency == seconds


def test_job_acct_gather_frequency_defaults_to_slurms_30_seconds(tmp_path: Path) -> None:
    assert _load(tmp_path, "NodeName=n1\n").job_acct_gather_frequency == 30


def test_partition_allow_lists_all_means_none(tmp_path: Path) -> None:
    config = _load(
        tmp_path, "PartitionName=p AllowAccounts=ALL AllowGroups=wheel,users MaxNodes=UNLIMITED\n"
    )
    part = config.partitions[0]
    assert (part.allow_accounts, part.allow_groups, part.nodes) == (None, ("wheel", "users"), ())
    assert part.max_nodes == INFINITE


def test_preemption_keys_global_and_per_partition(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "PreemptType=preempt/partition_prio\nPreemptMode=requeue\nPreemptExemptTime=00:02:00\n"
        "PartitionName=lo PreemptMode=CANCEL\nPartitionName=hi PriorityTier=2\n",
    )
    assert (config.preempt_type, config.preempt_mode, config.preempt_exempt_time) == (
        "preempt/partition_prio",
        "REQUEUE",
        2,
    )
    assert [p.preempt_mode for p in config.partitions] == ["CANCEL", ""]
    assert (_load(tmp_path, "").preempt_type, _load(tmp_path, "").preempt_mode) == (
        "preempt/none",
        "OFF",
    )


@pytest.mark.parametrize(
    "text",
    ["PreemptType=preempt/fifo\n", "PreemptMode=SUSPEND,GANG\n", "PartitionName=p PreemptMode=x\n"],
)
def test_unsupported_preemption_values_are_config_errors(tmp_path: Path, text: str) -> None:
    assert "invalid value for Preempt" in str(_error(tmp_path, text))


def test_shared_is_read_as_over_subscribe(tmp_path: Path) -> None:
    config = _load(tmp_path, "PartitionName=p Shared=exclusive\n")
    assert config.partitions[0].over_subscribe == "EXCLUSIVE"


def test_the_last_default_partition_wins_with_a_warning(tmp_path: Path) -> None:
    config = _load(tmp_path, "PartitionName=a Default=YES\nPartitionName=b Default=yes\n")
    assert [(p.name, p.default) for p in config.partitions] == [("a", False), ("b", True)]
    assert config.warnings == (f"{tmp_path / 'slurm.conf'}:1: more than one default partition; "
                               "the last wins",)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "controller"),
    [
        ("ControlMachine=old\n", ("old", "old")),
        ("ControlMachine=old\nControlAddr=10.0.0.1\n", ("old", "10.0.0.1")),
        ("SlurmctldHost=a(1.1.1.1)\nSlurmctldHost=b\n", ("a", "1.1.1.1")),
        ("", ("localhost", "localhost")),
    ],
)
def test_controller_host_forms(tmp_path: Path, text: str, controller: tuple[str, str]) -> None:
    config = _load(tmp_path, text)
    assert (config.controller_host, config.controller_addr) == controller


# --------------------------------------------------------------------------- warnings


def test_unknown_keys_warn_with_file_and_line(tmp_path: Path) -> None:
    config = _load(
        tmp_path, "ClusterName=c\nFooBar=1\nNodeName=n1 Colour=red\nPartitionName=p Bogus=1\n"
    )
    conf = tmp_path / "slurm.conf"
    assert config.warnings == (
        f"{conf}:2: unknown key FooBar",
        f"{conf}:3: unknown key Colour",
        f"{conf}:4: unknown key Bogus",
    )


def test_unsupported_line_kinds_warn_and_are_skipped(tmp_path: Path) -> None:
    config = _load(tmp_path, "NodeName=n1\nDownNodes=n1 State=DOWN\n")
    assert config.warnings == (
        f"{tmp_path / 'slurm.conf'}:2: DownNodes lines are not supported; line ignored",
    )
    assert config.nodes[0].state == "UNKNOWN"


def test_documented_keys_we_ignore_do_not_warn(tmp_path: Path) -> None:
    text = "".join(f"{key}=x\n" for key in sorted(IGNORED_KEYS))
    assert _load(tmp_path, text).warnings == ()


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("NodeName=n1 CPUs=abc\n", 1, "invalid value for CPUs: 'abc'"),
        ("NodeName=n1 CPUs=-1\n", 1, "invalid value for CPUs: '-1'"),
        ("\nNodeName=n1 RealMemory=8G\n", 2, "invalid value for RealMemory: '8G'"),
        ("KillWait=soon\n", 1, "invalid value for KillWait: 'soon'"),
        ("SlurmctldPort=http\n", 1, "invalid value for SlurmctldPort"),
        ("SlurmctldHost=h(1.2.3.4\n", 1, "invalid value for SlurmctldHost"),
        ("AuthType=auth/jwt\n", 1, "invalid value for AuthType: 'auth/jwt'"),
        ("SchedulerType=sched/wiki\n", 1, "invalid value for SchedulerType"),
        ("PriorityFavorSmall=maybe\n", 1, "invalid value for PriorityFavorSmall"),
        ("JobRequeue=2\n", 1, "invalid value for JobRequeue"),
        ("JobAcctGatherFrequency=task=x\n", 1, "invalid value for JobAcctGatherFrequency"),
        ("JobAcctGatherFrequency=cpu=5\n", 1, "invalid value for JobAcctGatherFrequency"),
        ("PriorityMaxAge=old\n", 1, "invalid value for PriorityMaxAge"),
        ("PartitionName=p MaxTime=forever\n", 1, "invalid value for MaxTime: 'forever'"),
        ("PartitionName=p DefaultTime=x\n", 1, "invalid value for DefaultTime"),
        ("PartitionName=p Default=maybe\n", 1, "invalid value for Default: 'maybe'"),
        ("PartitionName=p State=OPEN\n", 1, "invalid value for State: 'OPEN'"),
        ("PartitionName=p MaxNodes=lots\n", 1, "invalid value for MaxNodes"),
        ("PartitionName=p OverSubscribe=MAYBE\n", 1, "invalid value for OverSubscribe"),
        ("PartitionName=p OverSubscribe=NO:4\n", 1, "invalid value for OverSubscribe"),
        ("PartitionName=p OverSubscribe=FORCE:x\n", 1, "invalid value for OverSubscribe"),
        ("PartitionName=p OverSubscribe=YES:0\n", 1, "invalid value for OverSubscribe"),
        ("NodeName=n1 State=DOWN:x\n", 1, "invalid value for State"),
        ("NodeName=n1 State=BROKEN\n", 1, "invalid value for State: 'BROKEN'"),
        ("NodeName=n1 Gres=gpu:-1\n", 1, "invalid value for Gres: 'gpu:-1'"),
        ("NodeName=n[2-1]\n", 1, "invalid value for NodeName: 'n[2-1]'"),
        ("NodeName=n[1-2] Port=[1-3]\n", 1, "Port names 3 values for 2 nodes"),
        ("NodeName=n1\nNodeName=n1\n", 2, "duplicate node n1"),
        ("NodeName=n[1-2],n2\n", 1, "duplicate node n2"),
        ("PartitionName=p\nPartitionName=p\n", 2, "duplicate partition p"),
        ("NodeName=n1\nPartitionName=p Nodes=n[1-2]\n", 2, "unknown node n2 in Nodes"),
        ("NodeName=DEFAULT CPUs=x\nNodeName=n1\n", 1, "invalid value for CPUs"),
        ("Foo\n", 1, "missing '='"),
        ("StateSaveLocation=mysql://db/slurm\n", 1, "a directory or a postgresql:// URL"),
    ],
)
def test_invalid_values_are_config_errors_naming_line_key_and_value(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    error = _error(tmp_path, text)
    assert (error.path, error.line) == (str(tmp_path / "slurm.conf"), line)
    assert fragment in error.message
    assert str(error).startswith(f"{tmp_path / 'slurm.conf'}:{line}: ")


@pytest.mark.parametrize(
    ("location", "url"),
    [
        ("/var/spool/ctld", "sqlite:////var/spool/ctld/minislurm.db"),
        ("postgresql://ctld@db1:5433/slurm", "postgresql+psycopg://ctld@db1:5433/slurm"),
        ("postgres://db1/slurm", "postgresql+psycopg://db1/slurm"),
        ("postgresql+psycopg://db1/slurm", "postgresql+psycopg://db1/slurm"),
    ],
)
def test_state_save_location_names_a_directory_or_a_postgresql_database(
    tmp_path: Path, location: str, url: str
) -> None:
    assert default_db_url(_load(tmp_path, f"StateSaveLocation={location}\n")) == url


def test_partition_nodes_may_come_before_the_node_lines(tmp_path: Path) -> None:
    config = _load(tmp_path, "PartitionName=p Nodes=n[1-2]\nNodeName=n[1-2]\n")
    assert config.partitions[0].nodes == ("n1", "n2")


def test_missing_slurm_conf_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_slurm_conf(str(tmp_path / "nosuch.conf"))


def test_launch_parameters_and_interactive_step_options_as_scontrol_shows_them(
    tmp_path: Path,
) -> None:
    default = dict(config_entries(_load(tmp_path, "ClusterName=c\n"), 6817))
    assert default["LaunchParameters"] == "(null)"  # as Slurm 22.05 shows them
    assert default["InteractiveStepOptions"] == "--interactive --preserve-env --pty $SHELL"
    conf = _load(
        tmp_path,
        'LaunchParameters=use_interactive_step\nInteractiveStepOptions="--interactive --pty sh"\n',
    )
    assert conf.launch_parameters == ("use_interactive_step",)
    shown = dict(config_entries(conf, 6817))
    assert shown["LaunchParameters"] == "use_interactive_step"
    assert shown["InteractiveStepOptions"] == "--interactive --pty sh"


@pytest.mark.parametrize(
    ("params", "consumable"),
    [
        ((), True),  # Slurm's default is CR_Core_Memory
        (("CR_Core_Memory",), True),
        (("CR_CPU_Memory",), True),
        (("CR_Memory",), True),
        (("CR_Core",), False),
        (("CR_Socket", "CR_Pack_Nodes"), False),
    ],
)
def test_memory_is_consumable_unless_select_type_parameters_leave_it_out(
    params: tuple[str, ...], consumable: bool
) -> None:
    assert SlurmConfig(select_type_parameters=params).memory_consumable is consumable


def test_metrics_type_and_port_are_read_and_shown(tmp_path: Path) -> None:
    conf = _load(tmp_path, "MetricsType=metrics/openmetrics\nMetricsPort=6820\n")
    assert (conf.metrics_type, conf.metrics_port) == ("metrics/openmetrics", 6820)
    shown = dict(config_entries(conf, 6817, metrics_port=6820))
    assert (shown["MetricsType"], shown["MetricsPort"]) == ("metrics/openmetrics", "6820")
    default = dict(config_entries(_load(tmp_path, "ClusterName=c\n"), 6817))
    assert default["MetricsType"] == "(null)" and "MetricsPort" not in default


def test_an_unknown_metrics_plugin_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MetricsType"):
        _load(tmp_path, "MetricsType=metrics/bogus\n")


def test_prolog_and_epilog_programs_are_read_as_slurm_reads_them(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "Prolog=/etc/slurm/prolog.d/*\nPrologFlags=alloc,Serial\nEpilog=epilog.sh\n"
        "Prolog=check-gpus\nPrologEpilogTimeout=30\nEpilogTimeout=5\nTaskProlog=/tp\n"
        "HealthCheckProgram=/hc HealthCheckInterval=60 HealthCheckNodeState=idle,CYCLE\n"
        "NodeName=n1\n",
    )
    # Several lines add up; a relative path is relative to slurm.conf's directory.
    assert config.prolog == ("/etc/slurm/prolog.d/*", str(tmp_path / "check-gpus"))
    assert config.epilog == (str(tmp_path / "epilog.sh"),)
    assert config.prolog_flags == ("Alloc", "Serial")
    assert config.prolog_at_alloc
    assert (config.prolog_wait, config.epilog_wait) == (30, 5)
    assert config.task_prolog == "/tp"
    assert config.health_check_program == "/hc"
    assert config.health_check_interval == 60
    assert config.health_check_node_state == ("IDLE", "CYCLE")
    assert not _load(tmp_path, "PrologFlags=Serial\nNodeName=n1\n").prolog_at_alloc
    assert config.warnings == ()


@pytest.mark.parametrize(
    "line",
    ["PrologFlags=Sometimes", "HealthCheckNodeState=BUSY", "PrologEpilogTimeout=-1"],
)
def test_malformed_prolog_settings_are_errors(tmp_path: Path, line: str) -> None:
    assert line.split("=")[0] in str(_error(tmp_path, f"{line}\nNodeName=n1\n"))
