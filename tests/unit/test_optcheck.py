"""Values of options accepted without effect, checked as Slurm 22.05 checks them.

The messages and statuses are those real Slurm's sbatch printed for the same
values (minislurm.optcheck); the controller checks them again, and what only
the nodes can answer (ctld.joboptions).
"""

from __future__ import annotations

import pytest

from cli import cmdcheck
from ctld.joboptions import check_against_nodes, checked_options
from ctld.state import ClusterState
from minislurm import optcheck
from minislurm.config import PartitionConfig
from minislurm.errors import InvalidRequest
from minislurm.model import Node
from minislurm.units import INFINITE

ACCEPTED = [
    ("acctg-freq", "task=10"),
    ("acctg-freq", "energy=5,task=3"),
    ("core-spec", "0"),
    ("cores-per-socket", "1"),
    ("cpu-freq", "low"),
    ("cpu-freq", "1000-2000"),
    ("cpu-freq", "low-high:performance"),
    ("cpu-freq", "ondemand"),
    ("delay-boot", "-1"),
    ("delay-boot", "1:00"),
    ("distribution", "plane=2"),
    ("distribution", "block:cyclic"),
    ("distribution", "cyclic:fcyclic"),
    ("distribution", "*:*"),
    ("distribution", "block,Pack"),
    ("extra-node-info", "*:*:1"),
    ("get-user-env", ""),
    ("get-user-env", "10L"),
    ("gpu-bind", "map_gpu:0,1"),
    ("gpu-bind", "verbose,closest"),
    ("gpu-bind", "single:x"),  # Slurm takes it too
    ("gpu-freq", "low,memory=low"),
    ("gpu-freq", "verbose"),
    ("gres-flags", "Enforce-Binding"),
    ("hint", "Nomultithread"),
    ("hint", "compute_bound,nomultithread"),
    ("mem-bind", "quiet,local"),
    ("mem-bind", "map_mem:0"),
    ("mem-bind", "p"),
    ("mem-per-gpu", "1G"),
    ("no-kill", ""),
    ("no-kill", "off"),
    ("priority", "TOP"),
    ("profile", "task,energy"),
    ("propagate", ""),
    ("propagate", "CORE"),
    ("switches", "1@x"),
    ("time-min", "1:00:00"),
    ("tmp", "0"),
    ("wait-all-nodes", "1"),
]


@pytest.mark.parametrize(("option", "value"), ACCEPTED)
def test_slurm_accepts_these_values_and_so_do_we_and_the_kept_value_checks_again(
    option: str, value: str
) -> None:
    kept = optcheck.check(option, value)
    assert optcheck.check(option, kept) == kept  # the controller checks what the client kept


@pytest.mark.parametrize(
    ("option", "value", "lines", "status"),
    [
        ("acctg-freq", "task=-1", ["error: Invalid --acctg-freq specification: task=-1"], 255),
        ("acctg-freq", "bogus=1", ["error: Invalid --acctg-freq specification: bogus=1"], 255),
        ("core-spec", "-1", ['error: Invalid numeric value "-1" for --core-spec.'], 1),
        ("cores-per-socket", "0", ['error: Invalid numeric value "0" for --cores-per-socket.'], 1),
        (
            "cpu-freq",
            "conservative",
            [
                "error: governor of conservative is not allowed in slurm.conf",
                "error: Invalid --cpu-freq argument",
            ],
            255,
        ),
        (
            "cpu-freq",
            "zzz",
            ['error: unrecognized --cpu-freq argument "zzz"', "error: Invalid --cpu-freq argument"],
            255,
        ),
        ("delay-boot", "zzz", ["error: Invalid --delay-boot specification"], 255),
        (
            "distribution",
            "plane",
            [
                "error: Invalid plane size or size not specified",
                "error: Invalid --distribution specification",
            ],
            255,
        ),
        ("distribution", "cyclic:zzz", ["error: Invalid --distribution specification"], 255),
        ("extra-node-info", "zzz", ['error: Invalid numeric value "zzz" for first arg of -B.'], 1),
        ("get-user-env", "x", ["error: Invalid --get-user-env specification"], 255),
        (
            "gpu-bind",
            "mask_gpu:zz",
            [
                "error: Failed to validate zz, offending character is z",
                "error: Invalid --gpu-bind argument: gpu:mask_gpu:zz",
            ],
            255,
        ),
        ("gpu-bind", "zzz", ["error: Invalid --gpu-bind argument: gpu:zzz"], 255),
        ("gpu-freq", "-5", ["error: Invalid --gpu-freq argument: gpu:-5"], 255),
        ("gres-flags", "zzz", ["error: Invalid --gres-flags specification"], 255),
        ("hint", "zzz", ['error: unrecognized --hint argument "zzz", see --hint=help'], 1),
        ("mem-bind", "zzz", ['error: unrecognized --mem-bind argument "zzz"'], 255),
        ("mem-bind", "map_mem:", ['error: missing list for "--mem-bind=map_mem:<list>"'], 255),
        ("mem-per-gpu", "-1", ["error: Invalid --mem-per-gpu specification"], 255),
        ("mincpus", "0", ['error: Invalid numeric value "0" for --mincpus.'], 1),
        ("no-kill", "on", ["error: Invalid --no-kill specification"], 255),
        ("priority", "-1", ["error: Priority must be >= 0"], 255),
        ("profile", "zzz", ["error: invalid --profile=zzz option"], 255),
        (
            "propagate",
            "core,stack",
            ["error: Bad rlimit name: core", "error: --propagate=core,stack is not valid."],
            1,
        ),
        ("switches", "0", ['error: Invalid numeric value "0" for --switches.'], 1),
        ("thread-spec", "0", ['error: Invalid numeric value "0" for --thread-spec.'], 1),
        ("time-min", "zzz", ["error: Invalid --time-min specification"], 255),
        ("tmp", "-1", ["error: Invalid --tmp specification"], 255),
        ("wait-all-nodes", "2", ["error: Invalid --wait-all-nodes specification"], 255),
        ("wait-all-nodes", "-1", ['error: Invalid numeric value "-1" for --wait-all-nodes.'], 1),
        ("mpi", "zzz", None, 1),
        ("het-group", "zzz", None, 1),
        ("send-libs", "zzz", ["error: Invalid --send-libs specification"], 255),
        ("accel-bind", "zzz", ["error: Invalid --accel-bind specification"], 255),
        ("kill-command", "zzz", ["error: Invalid --kill-command specification"], 255),
        ("resv-ports", "zzz", ['error: Invalid numeric value "zzz" for --resv-port.'], 1),
    ],
)
def test_slurm_refuses_these_values_with_its_words_and_status(
    option: str, value: str, lines: list[str] | None, status: int
) -> None:
    check = cmdcheck.check if option in cmdcheck.COMMAND_OPTIONS else optcheck.check
    with pytest.raises(optcheck.OptionError) as err:
        check(option, value)
    if lines is not None:
        assert list(err.value.lines) == lines
    assert err.value.status == status


def test_help_values_answer_on_stdout() -> None:
    with pytest.raises(optcheck.OptionError) as err:
        optcheck.check("hint", "help")
    assert (err.value.lines, err.value.status) == ((), 1)
    assert err.value.output.startswith("Application hint options:\n")


def test_unknown_power_flags_are_warned_about() -> None:
    assert optcheck.power_warnings("level,zzz") == [
        "error: Ignoring unrecognized power option (zzz)"
    ]


# ---------------------------------------------------------------- the controller


def test_the_controller_refuses_an_option_it_does_not_keep_or_a_bad_value() -> None:
    assert checked_options({"hint": "nomultithread", "exclusive": "user"}) == {
        "hint": "nomultithread",
        "exclusive": "user",
    }
    with pytest.raises(InvalidRequest, match="Invalid option 'time'"):
        checked_options({"time": "5"})
    with pytest.raises(InvalidRequest, match='unrecognized --hint argument "zzz"'):
        checked_options({"hint": "zzz"})
    with pytest.raises(InvalidRequest, match="Invalid --exclusive specification"):
        checked_options({"exclusive": "everyone"})


def cluster() -> tuple[PartitionConfig, ClusterState]:
    nodes = [
        Node(f"n{i}", 8, 8000, (), ("gpu",), sockets=1, cores_per_socket=8, features="fast")
        for i in (1, 2)
    ]
    part = PartitionConfig("gpu", nodes=("n1", "n2"))
    return part, ClusterState(nodes, [part])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"constraint": "slow"}, "Invalid feature specification"),
        ({"prefer": "slow"}, "Invalid preferred feature specification"),
        ({"batch": "fast"}, "Job --batch option is invalid or not a subset of --constraints"),
        ({"licenses": "matlab:1"}, "Invalid license specification"),
        ({"tmp": "100"}, "Temporary disk specification can not be satisfied"),
        ({"mincpus": "9"}, "CPU count per node can not be satisfied"),
        ({"sockets-per-node": "2"}, "Socket, core and/or thread specification"),
        ({"extra-node-info": "1:16"}, "Socket, core and/or thread specification"),
        ({"extra-node-info": "0"}, "Node count specification invalid"),
        ({"time-min": "0"}, "Invalid time-min specification"),
        ({"time-min": "20"}, "Invalid time-min specification"),
    ],
)
def test_what_the_nodes_cannot_give_is_refused_in_slurms_words(
    options: dict[str, str], message: str
) -> None:
    part, state = cluster()
    with pytest.raises(InvalidRequest, match=message):
        check_against_nodes(options, part, state, time_limit=10)


@pytest.mark.parametrize(
    "options",
    [
        {"constraint": "fast"},
        {"constraint": "fast&fast", "batch": "fast"},
        {"constraint": ""},
        {"cores-per-socket": "8", "threads-per-core": "1"},
        {"time-min": "10"},
        {"mincpus": "8"},
    ],
)
def test_what_the_nodes_can_give_is_accepted(options: dict[str, str]) -> None:
    part, state = cluster()
    check_against_nodes(options, part, state, time_limit=10)
    check_against_nodes({"time-min": "5"}, part, state, time_limit=INFINITE)
