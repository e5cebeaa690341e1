"""Tests of cli.opts: command lines read the way Slurm's getopt_long reads them."""

from __future__ import annotations

import pytest

from cli.opts import NO_ARG, OPTIONAL, REQUIRED, Option, UsageError, parse

OPTIONS = [
    Option("nodes", "N", REQUIRED),
    Option("ntasks", "n", REQUIRED),
    Option("ntasks-per-node", "", REQUIRED),
    Option("partition", "p", REQUIRED),
    Option("parsable", "", NO_ARG),
    Option("time", "t", REQUIRED),
    Option("time-min", "", REQUIRED),
    Option("hold", "H", NO_ARG),
    Option("quiet", "Q", NO_ARG),
    Option("nice", "", OPTIONAL),
    Option("export", "E", OPTIONAL),
    Option("verbose", "v", NO_ARG, many=True),
    Option("gres", "", REQUIRED, many=True),
    Option("job-name", "J", REQUIRED, dest="name"),
]


def values_of(argv: list[str], stop_at_positional: bool = False) -> dict[str, object]:
    values, positionals = parse(OPTIONS, argv, stop_at_positional)
    assert positionals == []
    return values


# ---------------------------------------------------------------- long options


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--partition=gpu"], {"partition": "gpu"}),
        (["--partition", "gpu"], {"partition": "gpu"}),
        (["--partition="], {"partition": ""}),
        (["--time=1:00:00"], {"time": "1:00:00"}),
        (["--time", "-5"], {"time": "-5"}),  # a required argument is taken whatever it looks like
        (["--job-name=a=b"], {"name": "a=b"}),  # only the first = splits
        (["--hold"], {"hold": True}),
        (["--ntasks-per-node=4"], {"ntasks_per_node": "4"}),
    ],
)
def test_long_options_take_their_argument_after_equals_or_as_the_next_word(
    argv: list[str], expected: dict[str, object]
) -> None:
    assert values_of(argv) == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--part=gpu"], {"partition": "gpu"}),
        (["--parti", "gpu"], {"partition": "gpu"}),
        (["--pars"], {"parsable": True}),
        (["--ho"], {"hold": True}),
        (["--ntasks-per=2"], {"ntasks_per_node": "2"}),
        (["--job=x"], {"name": "x"}),
        # an exact name wins over the longer options it prefixes
        (["--time=5"], {"time": "5"}),
        (["--ntasks=3"], {"ntasks": "3"}),
    ],
)
def test_long_options_accept_any_unambiguous_prefix(
    argv: list[str], expected: dict[str, object]
) -> None:
    assert values_of(argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pa=gpu"], "option '--pa' is ambiguous"),
        (["--n=2"], "option '--n' is ambiguous"),
        (["--ntask=2"], "option '--ntask' is ambiguous"),
        (["--tim=5"], "option '--tim' is ambiguous"),
        (["--x"], "unrecognized option '--x'"),
        (["--nodesx=2"], "unrecognized option '--nodesx'"),
        (["--hold=yes"], "option '--hold' doesn't allow an argument"),
        (["--ho=yes"], "option '--hold' doesn't allow an argument"),
        (["--partition"], "option '--partition' requires an argument"),
        (["--part"], "option '--partition' requires an argument"),
    ],
)
def test_bad_long_options_fail_with_getopts_words(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse(OPTIONS, argv)
    assert str(err.value).startswith(message)


# ---------------------------------------------------------------- short options


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-N2"], {"nodes": "2"}),
        (["-N", "2"], {"nodes": "2"}),
        (["-N2-4"], {"nodes": "2-4"}),
        (["-pgpu"], {"partition": "gpu"}),
        (["-HQ"], {"hold": True, "quiet": True}),
        (["-HN2"], {"hold": True, "nodes": "2"}),
        (["-HN", "2"], {"hold": True, "nodes": "2"}),
        (["-N", "-Q"], {"nodes": "-Q"}),  # the separate argument is taken as is
        (["-vvv"], {"verbose": [True, True, True]}),
        (["-v", "-v"], {"verbose": [True, True]}),
        (["-Jmy job"], {"name": "my job"}),
    ],
)
def test_short_options_cluster_and_take_attached_or_separate_arguments(
    argv: list[str], expected: dict[str, object]
) -> None:
    assert values_of(argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-z"], "invalid option -- 'z'"),
        (["-Hz"], "invalid option -- 'z'"),
        (["-N"], "option requires an argument -- 'N'"),
        (["-HN"], "option requires an argument -- 'N'"),
    ],
)
def test_bad_short_options_fail_with_getopts_words(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=f"^{message}$"):
        parse(OPTIONS, argv)


# ---------------------------------------------------------------- optional arguments


@pytest.mark.parametrize(
    ("argv", "expected", "positionals"),
    [
        (["--nice"], {"nice": ""}, []),
        (["--nice=5"], {"nice": "5"}, []),
        (["--nice=-5"], {"nice": "-5"}, []),
        (["--nice", "5"], {"nice": ""}, ["5"]),  # never the next word, as in getopt
        (["-E"], {"export": ""}, []),
        (["-ENONE"], {"export": "NONE"}, []),
        (["-E", "NONE"], {"export": ""}, ["NONE"]),
    ],
)
def test_optional_arguments_only_come_attached(
    argv: list[str], expected: dict[str, object], positionals: list[str]
) -> None:
    assert parse(OPTIONS, argv) == (expected, positionals)


# ---------------------------------------------------------------- positionals


def test_without_stop_at_positional_options_anywhere_are_parsed() -> None:
    values, positionals = parse(OPTIONS, ["a", "-N2", "b", "--hold", "c"])
    assert values == {"nodes": "2", "hold": True}
    assert positionals == ["a", "b", "c"]


def test_stop_at_positional_leaves_the_script_arguments_unparsed() -> None:
    argv = ["-N2", "job.sh", "-x", "--unknown", "-N", "5", "--", "z"]
    values, positionals = parse(OPTIONS, argv, stop_at_positional=True)
    assert values == {"nodes": "2"}
    assert positionals == ["job.sh", "-x", "--unknown", "-N", "5", "--", "z"]


def test_double_dash_ends_the_options() -> None:
    values, positionals = parse(OPTIONS, ["-H", "--", "-N2", "--x"])
    assert values == {"hold": True}
    assert positionals == ["-N2", "--x"]


def test_a_lone_dash_is_a_positional() -> None:
    assert parse(OPTIONS, ["-", "-H"]) == ({"hold": True}, ["-"])
    assert parse(OPTIONS, ["-", "-H"], stop_at_positional=True) == ({}, ["-", "-H"])


def test_an_option_value_is_not_mistaken_for_the_first_positional() -> None:
    values, positionals = parse(OPTIONS, ["-p", "gpu", "job.sh", "-p"], stop_at_positional=True)
    assert values == {"partition": "gpu"}
    assert positionals == ["job.sh", "-p"]


# ---------------------------------------------------------------- repeated options


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--gres=gpu:1", "--gres", "tpu:2"], {"gres": ["gpu:1", "tpu:2"]}),
        (["-v", "--verbose", "-vv"], {"verbose": [True, True, True, True]}),
        (["-N1", "--nodes=3"], {"nodes": "3"}),  # without many, the last use wins
        (["-pa", "--part", "b", "-pc"], {"partition": "c"}),
    ],
)
def test_repeated_options_accumulate_with_many_and_otherwise_the_last_wins(
    argv: list[str], expected: dict[str, object]
) -> None:
    assert values_of(argv) == expected


def test_option_dest_defaults_to_the_long_name_with_underscores() -> None:
    assert Option("cpus-per-task", "c", REQUIRED).dest == "cpus_per_task"
    assert Option("job-name", "J", REQUIRED, dest="name").dest == "name"


def test_parse_returns_fresh_values_each_time() -> None:
    first, _ = parse(OPTIONS, ["--gres=gpu:1"])
    second, _ = parse(OPTIONS, ["--gres=gpu:2"])
    assert first == {"gres": ["gpu:1"]}
    assert second == {"gres": ["gpu:2"]}


def test_an_ambiguous_prefix_names_the_possibilities_as_getopt_does() -> None:
    with pytest.raises(UsageError) as err:
        parse(OPTIONS, ["--ntask=2"])
    assert str(err.value) == (
        "option '--ntask' is ambiguous; possibilities: '--ntasks' '--ntasks-per-node'"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--requeue", "--no-requeue"], {"requeue": False}),
        (["--no-requeue", "--requeue"], {"requeue": True}),
        (["-R"], {"requeue": True}),
    ],
)
def test_flags_that_undo_each_other_share_a_destination_and_the_last_wins(
    argv: list[str], expected: dict[str, object]
) -> None:
    flags = [Option("requeue", "R"), Option("no-requeue", dest="requeue", const=False)]
    assert parse(flags, argv) == (expected, [])
