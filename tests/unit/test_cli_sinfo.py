"""Tests of sinfo against real Slurm's captures (cli.sinfo, cli.sinfo_fields).

Nodes and partitions are rebuilt as reply messages from the reference
cluster; the controller is replaced, so no socket is opened.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cli import common, sinfo
from cli import sinfo_fields as fields
from minislurm.units import INFINITE, parse_timestamp
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"


def reference(name: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a capture."""
    text = (REF / name).read_text()
    out = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    err = text.split("--- stderr ---\n", 1)[1].split("--- exit: ", 1)[0]
    status = int(text.rsplit("--- exit: ", 1)[1].split(" ", 1)[0])
    return out, err, status


def node(name: str, alloc: int, state: str, compact: str, long: str, **extra: Any) -> Message:
    base: dict[str, Any] = {
        "name": name,
        "addr": f"10.233.2.{10 + int(name[1:])}",
        "hostname": name,
        "cpus": 8,
        "alloc_cpus": alloc,
        "real_memory": 8000,
        "free_memory": 22440,
        "gres": "gpu:8",
        "gpus": 8,
        "state": state,
        "state_compact": compact,
        "state_long": long,
        "sockets": 1,
        "cores_per_socket": 8,
        "threads_per_core": 1,
        "weight": 1,
        "partitions": ["gpu", "debug"],
        "version": "22.05.8",
        "cpu_load": 1.53,
    }
    base.update(extra)
    return Message("minislurm.v1.NodeInfo", base)


def partition(name: str, default: bool, max_time: int, nodes: str = "n[1-2]") -> Message:
    return Message(
        "minislurm.v1.PartitionInfo",
        {
            "name": name,
            "nodes": nodes,
            "default": default,
            "max_time": max_time,
            "max_nodes": INFINITE,
            "state": "UP",
            "over_subscribe": "NO",
            "allow_groups": "ALL",
            "priority_tier": 1,
            "priority_job_factor": 1,
        },
    )


NODES = [node("n1", 3, "MIXED", "mix", "mixed"), node("n2", 0, "IDLE", "idle", "idle")]
DRAINING = node(
    "n2",
    2,
    "MIXED+DRAIN",
    "drng",
    "draining",
    flags=["DRAIN"],
    reason="maint work",
    reason_user="0",
    reason_time=parse_timestamp("2026-11-30T06:15:43"),
)
PARTITIONS = [partition("gpu", True, INFINITE), partition("debug", False, 60)]


class Fake:
    """A controller client answering GetNodes and GetPartitions."""

    def __init__(self, nodes: list[Message], parts: list[Message]) -> None:
        self.nodes, self.parts = nodes, parts
        self.calls: list[str] = []

    def __enter__(self) -> Fake:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def call(self, method: str, **request: Any) -> Message:
        self.calls.append(method)
        if method == "GetNodes":
            nodes = [n.to_dict() for n in self.nodes]
            return Message("minislurm.v1.GetNodesReply", {"nodes": nodes})
        return Message(
            "minislurm.v1.GetPartitionsReply", {"partitions": [p.to_dict() for p in self.parts]}
        )


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Fake:
    fake = Fake(NODES, PARTITIONS)
    monkeypatch.setattr(common, "controller", lambda: fake)
    return fake


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = sinfo.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


def drop_date(text: str) -> str:
    date, rest = text.split("\n", 1)
    assert re.fullmatch(r"\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}", date)
    return rest


# --------------------------------------------------------------------------- reference captures


@pytest.mark.parametrize(
    ("capture", "argv"),
    [("sinfo_default.txt", []), ("sinfo_gres_format.txt", ["-N", "-o", "%N %c %G %t %C"])],
)
def test_output_matches_real_sinfo(
    cluster: Fake, capsys: pytest.CaptureFixture[str], capture: str, argv: list[str]
) -> None:
    assert run(argv, capsys) == reference(capture)
    assert cluster.calls == ["GetPartitions", "GetNodes"]


def test_node_long_output_matches_real_sinfo_after_its_date_line(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-N", "-l"], capsys)
    assert drop_date(out) == drop_date(reference("sinfo_N_l.txt")[0])
    assert (err, status) == ("", 0)


# Captured from real sinfo 22.05 on the same cluster with n2 draining ("maint work").
DRAINING_CASES = [
    (
        [],
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "gpu*         up   infinite      1   drng n2\n"
        "gpu*         up   infinite      1    mix n1\n"
        "debug        up    1:00:00      1   drng n2\n"
        "debug        up    1:00:00      1    mix n1\n",
    ),
    (
        ["-R"],
        "REASON               USER      TIMESTAMP           NODELIST\n"
        "maint work           root      2026-11-30T06:15:43 n2\n",
    ),
    (
        ["-o", "%D %C %A %F"],
        "NODES CPUS(A/I/O/T) NODES(A/I) NODES(A/I/O/T)\n2 5/5/6/16 2/0 2/0/0/2\n",
    ),
    (["-o", "%t %D %N"], "STATE NODES NODELIST\ndrng 1 n2\nmix 1 n1\n"),
    (
        ["-o", "%P %N %E"],
        "PARTITION NODELIST REASON\ngpu* n2 maint work\ngpu* n1 none\n"
        "debug n2 maint work\ndebug n1 none\n",
    ),
    (["-t", "drain", "-o", "%N"], "NODELIST\nn2\n"),
    (
        ["-s"],
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
        "gpu*         up   infinite          2/0/0/2 n[1-2]\n"
        "debug        up    1:00:00          2/0/0/2 n[1-2]\n",
    ),
    (["-o", "%l %D"], "TIMELIMIT NODES\ninfinite 2\n1:00:00 2\n"),
    (["-o", "%a %D"], "AVAIL NODES\nup 2\n"),
]


@pytest.mark.parametrize(("argv", "expected"), DRAINING_CASES)
def test_groups_and_order_match_real_sinfo_with_a_draining_node(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    expected: str,
) -> None:
    fake = Fake([node("n1", 3, "MIXED", "mix", "mixed"), DRAINING], PARTITIONS)
    monkeypatch.setattr(common, "controller", lambda: fake)
    assert run(argv, capsys) == (expected, "", 0)


def test_draining_node_long_states(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = Fake([node("n1", 3, "MIXED", "mix", "mixed"), DRAINING], PARTITIONS)
    monkeypatch.setattr(common, "controller", lambda: fake)
    out, _, _ = run(["-N", "-l", "-h", "-p", "debug"], capsys)
    assert out == (
        "n1             1     debug       mixed 8       1:8:1   8000        0      1   (null) "
        "none                \n"
        "n2             1     debug    draining 8       1:8:1   8000        0      1   (null) "
        "maint work          \n"
    )


# --------------------------------------------------------------------------- filters


def test_unknown_partition_prints_only_the_header(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-p", "nosuch"], capsys) == (
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n",
        "",
        0,
    )


def test_partitions_without_matching_nodes_print_an_empty_line(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-t", "alloc"], capsys)
    assert out == (
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "gpu*         up   infinite      0    n/a \n"
        "debug        up    1:00:00      0    n/a \n"
    )


@pytest.mark.parametrize(
    ("argv", "lines"),
    [
        (
            ["-n", "n1", "-N", "-h"],
            ["n1             1      gpu* mix   ", "n1             1     debug mix   "],
        ),
        (
            ["-p", "debug", "-N", "-h"],
            ["n1             1     debug mix   ", "n2             1     debug idle  "],
        ),
        (["-t", "IDLE", "-h", "-o", "%P %N"], ["gpu* n2", "debug n2"]),
        (["-d", "-h", "-o", "%N"], []),
        (["-r", "-h", "-o", "%N"], ["n[1-2]"]),
    ],
)
def test_node_filters(
    cluster: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], lines: list[str]
) -> None:
    out, _, _ = run(argv, capsys)
    assert out.splitlines() == lines


def test_bad_state_is_slurms_error(cluster: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    out, err, status = run(["-t", "bogus"], capsys)
    assert (out, status) == ("", 1)
    assert err == (
        'sinfo: error: Bad state string: "bogus"\nsinfo: error: valid states: unknown,down,idle,'
        "allocated,?,mixed,future,drain,drained,draining,no_respond,reserved,perfctrs,cloud,"
        "completing,powering_down,powered_down,power_down,powering_up,fail,maint,reboot,"
        "reboot^,unknown\n"
    )


# --------------------------------------------------------------------------- formats


def test_long_partition_view_columns(cluster: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    out, _, _ = run(["-l"], capsys)
    assert drop_date(out).splitlines() == [
        "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
        "NODELIST",
        "gpu*         up   infinite 1-infinite   no       NO        all      1       mixed n1",
        "gpu*         up   infinite 1-infinite   no       NO        all      1        idle n2",
        "debug        up    1:00:00 1-infinite   no       NO        all      1       mixed n1",
        "debug        up    1:00:00 1-infinite   no       NO        all      1        idle n2",
    ]


def test_widths_cut_and_mark_the_default_partition_like_real_sinfo(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-o", "%.3P|%.3N|%3N|%.7R|%3R|%.2a|%.2l"], capsys)
    assert out.splitlines() == [
        "PAR|NODELIST|NOD|PARTITI|PAR|AV|TI",
        "gp*|n[1|n[1|    gpu|gpu|up|in",
        "deb|n[1|n[1|  debug|deb|up|1:",
    ]


def test_long_names_format(cluster: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    out, _, _ = run(["-O", "partition,nodes,statecompact,cpus"], capsys)
    assert out.splitlines()[:2] == [
        "PARTITION           NODES               STATE               CPUS                ",
        "gpu*                1                   mix                 8                   ",
    ]


def test_long_partition_names_widen_the_partition_column(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = Fake(NODES, [partition("verylongpartition", True, 30)])
    monkeypatch.setattr(common, "controller", lambda: fake)
    out, _, _ = run([], capsys)
    assert out.splitlines()[:2] == [
        "PARTITION          AVAIL  TIMELIMIT  NODES  STATE NODELIST",
        "verylongpartition*    up      30:00      1    mix n1",
    ]


@pytest.mark.parametrize(
    ("nodes", "counts"),
    [
        ([node("a1", 3, "MIXED", "mix", "mixed")], "3/5/0/8"),
        ([node("a1", 0, "IDLE+DRAIN", "drain", "drained", flags=["DRAIN"])], "0/0/8/8"),
        ([node("a1", 0, "DOWN*", "down*", "down*", flags=["NOT_RESPONDING"])], "0/0/8/8"),
    ],
)
def test_cpu_counts_put_unusable_cpus_in_other(nodes: list[Message], counts: str) -> None:
    assert fields.cpu_counts(nodes) == counts


def test_unreachable_controller_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def down() -> Fake:
        raise RpcError("UNAVAILABLE", "refused")

    monkeypatch.setattr(common, "controller", down)
    assert run([], capsys) == (
        "",
        "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n",
        1,
    )


def test_natural_key_orders_numbers_numerically() -> None:
    names = ["n10", "n2", "gpu1", "n1"]
    assert sorted(names, key=fields.natural_key) == ["gpu1", "n1", "n2", "n10"]


def test_all_prints_every_field_like_real_sinfo(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-o", "%all", "-p", "gpu"], capsys)
    assert out.splitlines()[0] == (
        "AVAIL|ACTIVE_FEATURES|CPUS|TMP_DISK|FREE_MEM|AVAIL_FEATURES|GROUPS|OVERSUBSCRIBE|"
        "TIMELIMIT|MEMORY|HOSTNAMES|NODE_ADDR|PRIO_TIER|ROOT|JOB_SIZE|STATE|USER|VERSION|WEIGHT|"
        "S:C:T|NODES(A/I) |MAX_CPUS_PER_NODE |CPUS(A/I/O/T) |NODES |REASON |NODES(A/I/O/T) |"
        "GRES |TIMESTAMP |PRIO_JOB_FACTOR |DEFAULTTIME |PREEMPT_MODE |NODELIST |CPU_LOAD |"
        "PARTITION |PARTITION |ALLOCNODES |STATE |USER |CLUSTER |SOCKETS |CORES |THREADS "
    )
    assert out.splitlines()[1].startswith(
        "up|(null)|8|0|22440|(null)|all|NO|infinite|8000|n1|10.233.2.11|1|no|1-infinite|mix|"
    )


# --------------------------------------------------------------------------- sort, environment


@pytest.mark.parametrize(
    ("argv", "lines"),
    [
        (["-S", "-P"], ["gpu* mix", "gpu* idle", "debug mix", "debug idle"]),
        (["-S", "P"], ["debug mix", "debug idle", "gpu* mix", "gpu* idle"]),
        (["-S", "#P,t"], ["gpu* idle", "gpu* mix", "debug idle", "debug mix"]),
        (["-S", "xyq,+"], ["gpu* mix", "gpu* idle", "debug mix", "debug idle"]),
        (["-S", "bogus"], ["gpu* mix", "debug mix", "gpu* idle", "debug idle"]),  # o: NodeAddr
        ([], ["gpu* mix", "gpu* idle", "debug mix", "debug idle"]),
    ],
)
def test_sort_keys_are_slurms(
    cluster: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], lines: list[str]
) -> None:
    out, err, status = run([*argv, "-h", "-o", "%P %t"], capsys)
    assert (out.splitlines(), err, status) == (lines, "", 0)


def test_node_view_sorts_on_node_count_and_partition(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-N", "-h", "-S", "-P,N", "-o", "%N %P"], capsys)
    assert out.splitlines() == ["n1 gpu*", "n2 gpu*", "n1 debug", "n2 debug"]


@pytest.mark.parametrize(
    ("environ", "argv", "first"),
    [
        ({"SINFO_FORMAT": "%P|%a"}, [], "PARTITION|AVAIL"),
        ({"SINFO_FORMAT": "%P|%a"}, ["-o", "%D"], "NODES"),
        ({"SINFO_FORMAT": "%P|%a"}, ["-N"], "NODELIST   NODES PARTITION STATE "),
        ({"SINFO_PARTITION": "debug"}, ["-h", "-o", "%P"], "debug"),
        ({"SINFO_PARTITION": "debug"}, ["-h", "-o", "%P", "-p", "gpu"], "gpu*"),
        ({"SINFO_SORT": "-P"}, ["-h", "-o", "%P"], "gpu*"),
        ({"SINFO_SORT": "P"}, ["-h", "-o", "%P"], "debug"),
    ],
)
def test_environment_stands_for_options_as_in_slurm(
    cluster: Fake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str],
    argv: list[str],
    first: str,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out, _, status = run(argv, capsys)
    assert (out.splitlines()[0], status) == (first, 0)


def test_sinfo_all_beside_sinfo_partition_is_slurms_error(
    cluster: Fake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SINFO_ALL", "1")
    monkeypatch.setenv("SINFO_PARTITION", "gpu")
    assert run([], capsys) == (
        "",
        "sinfo: error: Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. "
        "Please choose one or the other.\n",
        1,
    )


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["-i", "0"], "sinfo: error: Error: invalid entry for --iterate=0\n"),
        (["-i", "abc"], "sinfo: error: Error: invalid entry for --iterate=abc\n"),
    ],
)
def test_bad_iterate_is_slurms_error(
    cluster: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)


def test_a_bad_long_format_name_is_called_a_job_format_as_slurm_does(
    cluster: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err, status = run(["-O", "bogus"], capsys)
    assert (err, status) == ("sinfo: error: Invalid job format specification: bogus\n", 0)
