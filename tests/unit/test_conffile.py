"""Tests of minislurm.conffile: Slurm's config syntax, config lookup, controller address."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from minislurm.conffile import (
    ConfRecord,
    find_config,
    parse_file,
    parse_port,
    parse_slurmctld_host,
    parse_text,
    read_client_config,
    read_controller_address,
)
from minislurm.errors import ConfigError

REAL_SLURM_CONF = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "reference"
    / "real-slurm"
    / "conf"
    / "slurm.conf"
)


def _pairs(text: str, keys: list[str] | None = None) -> list[list[tuple[str, str]]]:
    return [record.pairs for record in parse_text(text, "slurm.conf", keys)]


# --------------------------------------------------------------------------- syntax


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("ClusterName=anchor", [[("clustername", "anchor")]]),
        ("# only a comment\n\n   \n", []),
        ("KillWait=5 # seconds", [[("killwait", "5")]]),
        ("KillWait=5# seconds", [[("killwait", "5")]]),
        ("A=1 B=2\tC=3", [[("a", "1"), ("b", "2"), ("c", "3")]]),
        ('Reason="under repair"', [[("reason", "under repair")]]),
        ('Reason="a # b" X=1', [[("reason", "a # b"), ("x", "1")]]),
        (r"Prog=/bin/a\#b", [[("prog", "/bin/a#b")]]),
        ("Key = Value", [[("key", "Value")]]),
        ("Key= Value", [[("key", "Value")]]),
        ("Key=", [[("key", "")]]),
        ('Key=""', [[("key", "")]]),
        ("NodeName=n1 \\\n  CPUs=8", [[("nodename", "n1"), ("cpus", "8")]]),
        ("Gres=gpu:8(S:0-1) Feature=a,b", [[("gres", "gpu:8(S:0-1)"), ("feature", "a,b")]]),
        ("SlurmctldHost=vm(10.233.0.1)", [[("slurmctldhost", "vm(10.233.0.1)")]]),
        ("X=1\r\nY=2\r\n", [[("x", "1")], [("y", "2")]]),
    ],
)
def test_lines_split_into_pairs(text: str, pairs: list[list[tuple[str, str]]]) -> None:
    assert _pairs(text) == pairs


def test_a_node_line_keeps_its_pairs_together_as_one_record() -> None:
    text = "ClusterName=c\nNodeName=n[1-2] CPUs=8 Gres=gpu:8\nPartitionName=p Nodes=ALL\n"
    records = parse_text(text, "slurm.conf")
    assert [(r.line, r.key, r.value, len(r.pairs)) for r in records] == [
        (1, "clustername", "c", 1),
        (2, "nodename", "n[1-2]", 3),
        (3, "partitionname", "p", 2),
    ]
    assert records[1].get("gres") == "gpu:8"
    assert records[1].get("weight") is None
    assert records[1].get("weight", "1") == "1"


def test_keys_take_the_callers_canonical_spelling_and_unknown_keys_stay_as_written() -> None:
    text = "clustername=a SLURMCTLDPORT=1 FooBar=2"
    assert _pairs(text, ["ClusterName", "SlurmctldPort"]) == [
        [("ClusterName", "a"), ("SlurmctldPort", "1"), ("FooBar", "2")]
    ]


def test_records_count_lines_from_one_and_continuations_by_their_first_line() -> None:
    text = "# header\n\nA=1\nB=2 \\\nC=3\nD=4\n"
    assert [(r.line, r.key) for r in parse_text(text, "f")] == [(3, "a"), (4, "b"), (6, "d")]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("Foo", 1, "missing '=' in \"Foo\""),
        ("A=1\n\nFoo Bar=2", 3, "missing '=' in \"Foo\""),
        ("=bar", 1, 'missing key in "=bar"'),
        ("A=1 = bar", 1, 'missing key in "="'),
        ('Reason="unterminated', 1, "unterminated quote in the value of Reason"),
        ('Reason="a"b', 1, "unexpected text after the quoted value of Reason"),
        ("Foo-Bar=1", 1, 'invalid key "Foo-Bar"'),
        ("Include", 1, "Include without a file name"),
    ],
)
def test_malformed_lines_raise_config_error_with_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_text(text, "slurm.conf")
    assert (caught.value.path, caught.value.line, caught.value.message) == (
        "slurm.conf",
        line,
        message,
    )


def test_config_error_reads_file_colon_line() -> None:
    with pytest.raises(ConfigError, match=r"^slurm\.conf:12: missing '=' in \"Foo\"$"):
        parse_text("\n" * 11 + "Foo\n", "slurm.conf")


def test_conf_record_equality_and_repr() -> None:
    record = ConfRecord("f", 1, [("a", "1")])
    assert record == ConfRecord("f", 1, [("a", "1")])
    assert record != ConfRecord("f", 2, [("a", "1")])
    assert repr(record) == "ConfRecord('f', 1, [('a', '1')])"


# --------------------------------------------------------------------------- files, Include


def test_parse_file_reads_a_file(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\n")
    assert parse_file(str(conf)) == [ConfRecord(str(conf), 1, [("clustername", "x")])]


def test_include_is_relative_to_the_including_file_and_spliced_in_place(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "slurm.conf").write_text("A=1\nInclude sub/nodes.conf\nD=4\n")
    (tmp_path / "sub" / "nodes.conf").write_text("B=2\ninclude more.conf\n")
    (tmp_path / "sub" / "more.conf").write_text("C=3\n")
    records = parse_file(str(tmp_path / "slurm.conf"))
    assert [(Path(r.path).name, r.line, r.key) for r in records] == [
        ("slurm.conf", 1, "a"),
        ("nodes.conf", 1, "b"),
        ("more.conf", 1, "c"),
        ("slurm.conf", 3, "d"),
    ]


def test_include_accepts_absolute_quoted_and_glob_paths(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "b.conf").write_text("B=2\n")
    (tmp_path / "conf.d" / "a.conf").write_text("A=1\n")
    (tmp_path / "abs.conf").write_text("Z=26\n")
    main = tmp_path / "slurm.conf"
    main.write_text(f'Include conf.d/*.conf\nInclude "{tmp_path / "abs.conf"}"\n')
    assert [r.key for r in parse_file(str(main))] == ["a", "b", "z"]


def test_missing_include_points_at_the_include_line(tmp_path: Path) -> None:
    main = tmp_path / "slurm.conf"
    main.write_text("A=1\nInclude nosuch.conf\n")
    with pytest.raises(ConfigError, match="cannot read") as caught:
        parse_file(str(main))
    assert (caught.value.path, caught.value.line) == (str(main), 2)


def test_include_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.conf").write_text("Include b.conf\n")
    (tmp_path / "b.conf").write_text("Include a.conf\n")
    with pytest.raises(ConfigError, match="include loop"):
        parse_file(str(tmp_path / "a.conf"))


def test_errors_in_included_files_name_that_file(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text("Include bad.conf\n")
    (tmp_path / "bad.conf").write_text("OK=1\nFoo\n")
    with pytest.raises(ConfigError) as caught:
        parse_file(str(tmp_path / "slurm.conf"))
    assert (Path(caught.value.path).name, caught.value.line) == ("bad.conf", 2)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        parse_file(str(tmp_path / "nosuch.conf"))


# --------------------------------------------------------------------------- find_config


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def _local_cluster(home: Path, pid: int | str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "slurm.conf").write_text("ClusterName=local\n")
    (home / "slurmctld.pid").write_text(f"{pid}\n")
    return home / "slurm.conf"


def test_slurm_conf_variable_wins(tmp_path: Path) -> None:
    _local_cluster(tmp_path / "ms", os.getpid())
    env = {"SLURM_CONF": "/x/slurm.conf", "MINISLURM_HOME": str(tmp_path / "ms")}
    assert find_config(env) == "/x/slurm.conf"


def test_running_local_cluster_in_minislurm_home_is_found(tmp_path: Path) -> None:
    conf = _local_cluster(tmp_path / "ms", os.getpid())
    assert find_config({"MINISLURM_HOME": str(tmp_path / "ms")}) == str(conf)


def test_running_local_cluster_in_home_dot_minislurm_is_found(tmp_path: Path) -> None:
    conf = _local_cluster(tmp_path / ".minislurm", os.getpid())
    assert find_config({"HOME": str(tmp_path)}, system_path="/nonexistent") == str(conf)


@pytest.mark.parametrize("pid", ["dead", "garbage", "0", ""])
def test_stopped_local_cluster_falls_back_to_the_system_path(tmp_path: Path, pid: str) -> None:
    _local_cluster(tmp_path / "ms", _dead_pid() if pid == "dead" else pid)
    system = tmp_path / "etc-slurm.conf"
    system.write_text("ClusterName=site\n")
    env = {"MINISLURM_HOME": str(tmp_path / "ms")}
    assert find_config(env, system_path=str(system)) == str(system)


def test_no_config_anywhere_gives_none(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert find_config(env, system_path=str(tmp_path / "nosuch")) is None


def test_empty_slurm_conf_variable_is_ignored(tmp_path: Path) -> None:
    env = {"SLURM_CONF": "", "HOME": str(tmp_path)}
    assert find_config(env, system_path=str(tmp_path / "nosuch")) is None


# --------------------------------------------------------------------------- controller


def test_reference_slurm_conf_gives_its_controller_address() -> None:
    assert read_controller_address(str(REAL_SLURM_CONF)) == ("10.233.0.1", 6817)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("SlurmctldHost=vm(10.0.0.1)\n", ("10.0.0.1", 6817)),
        ("SlurmctldHost=head\nSlurmctldPort=7017\n", ("head", 7017)),
        ("slurmctldhost=a(1.1.1.1)\nSlurmctldHost=b(2.2.2.2)\n", ("1.1.1.1", 6817)),
        ("SlurmctldPort=6817-6818\nSlurmctldHost=h\n", ("h", 6817)),
        ("ControlMachine=old\n", ("old", 6817)),
        ("ControlMachine=old\nControlAddr=10.1.1.1\n", ("10.1.1.1", 6817)),
        ("NodeName=n1 CPUs=1\nSlurmctldHost=h # primary\n", ("h", 6817)),
    ],
)
def test_controller_address_is_read_as_slurm_reads_it(
    tmp_path: Path, text: str, address: tuple[str, int]
) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(text)
    assert read_controller_address(str(conf)) == address


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("ClusterName=c\n", 0, "no SlurmctldHost"),
        ("SlurmctldHost=h\nSlurmctldPort=abc\n", 2, "invalid port"),
        ("SlurmctldHost=h\nSlurmctldPort=70000\n", 2, "invalid port"),
        ("SlurmctldHost=h(10.0.0.1\n", 1, "invalid SlurmctldHost"),
    ],
)
def test_bad_controller_config_is_a_config_error(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(text)
    with pytest.raises(ConfigError, match=fragment) as caught:
        read_controller_address(str(conf))
    assert caught.value.line == line


@pytest.mark.parametrize(
    ("value", "parsed"), [("vm(10.233.0.1)", ("vm", "10.233.0.1")), ("head", ("head", "head"))]
)
def test_parse_slurmctld_host(value: str, parsed: tuple[str, str]) -> None:
    assert parse_slurmctld_host(value) == parsed


@pytest.mark.parametrize("value", ["", "(1.2.3.4)", "h(", "h()", "h(a)(b)", "h)"])
def test_parse_slurmctld_host_rejects_malformed(value: str) -> None:
    with pytest.raises(ValueError):
        parse_slurmctld_host(value)


@pytest.mark.parametrize(("value", "port"), [("6817", 6817), ("6817-6818", 6817), ("1", 1)])
def test_parse_port(value: str, port: int) -> None:
    assert parse_port(value) == port


@pytest.mark.parametrize(
    "value", ["", "0", "65536", "-1", "abc", "6817-", "6817-x", "\uff16\uff18\uff11\uff17"]
)
def test_parse_port_rejects_malformed(value: str) -> None:
    with pytest.raises(ValueError):
        parse_port(value)


# --------------------------------------------------------------------------- MessageTimeout


@pytest.mark.parametrize(("line", "seconds"), [("", 10), ("MessageTimeout=3\n", 3)])
def test_message_timeout_is_how_long_commands_try(tmp_path: Path, line: str, seconds: int) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"SlurmctldHost=ctl\n{line}")
    assert read_client_config(str(conf)).message_timeout == seconds


@pytest.mark.parametrize("value", ["0", "ten", "-1", "101"])
def test_bad_message_timeout_is_a_config_error(tmp_path: Path, value: str) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"SlurmctldHost=ctl\nMessageTimeout={value}\n")
    with pytest.raises(ConfigError, match=f"MessageTimeout={value}"):
        read_client_config(str(conf))


# --------------------------------------------------------------------------- salloc's keys


def test_salloc_reads_launch_parameters_and_interactive_step_options(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("SlurmctldHost=ctl\n")
    plain = read_client_config(str(conf))
    assert plain.launch_parameters == ()
    assert plain.interactive_step_options == "--interactive --preserve-env --pty $SHELL"
    conf.write_text(
        "SlurmctldHost=ctl\nLaunchParameters=enable_nss_slurm,use_interactive_step\n"
        'InteractiveStepOptions="--interactive --pty bash -l"\n'
    )
    read = read_client_config(str(conf))
    assert read.launch_parameters == ("enable_nss_slurm", "use_interactive_step")
    assert read.interactive_step_options == "--interactive --pty bash -l"


def test_srun_reads_its_prolog_and_epilog_relative_to_slurm_conf(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("SlurmctldHost=ctl\n")
    assert (
        read_client_config(str(conf)).srun_prolog,
        read_client_config(str(conf)).srun_epilog,
    ) == (
        "",
        "",
    )
    conf.write_text("SlurmctldHost=ctl\nSrunProlog=before.sh\nSrunEpilog=/opt/after\n")
    read = read_client_config(str(conf))
    assert (read.srun_prolog, read.srun_epilog) == (str(tmp_path / "before.sh"), "/opt/after")
