"""Tests of sbatch's pure parsing: #SBATCH directives, script checks, resource values, --export.

The functions come from cli/sbatch.py, cli/jobspec.py and cli/submit.py;
nothing here touches a controller, a file or the process environment.
"""

from __future__ import annotations

import pytest

from cli.common import CommandError
from cli.jobspec import notice_fields, resource_fields
from cli.opts import parse
from cli.sbatch import OPTIONS, check_script, directives, split_words
from cli.submit import parse_export, parse_node_range
from minislurm.units import INFINITE

# ---------------------------------------------------------------- directives


@pytest.mark.parametrize(
    ("script", "words"),
    [
        (b"#!/bin/bash\n#SBATCH -N2\n#SBATCH --time=10\nsrun hostname\n", ["-N2", "--time=10"]),
        # blank lines and ordinary comments do not end the scan
        (
            b"#!/bin/sh\n\n# set up\n#SBATCH -n 4\n   \n#SBATCH -J x\nhostname\n",
            ["-n", "4", "-J", "x"],
        ),
        # the first command ends it: later #SBATCH lines are the script's business
        (b"#!/bin/sh\n#SBATCH -N1\necho hi\n#SBATCH -N5\n", ["-N1"]),
        (b"#!/bin/sh\n  cd /tmp\n#SBATCH -N5\n", []),
        # "# SBATCH" (with a space) is a comment
        (b"#!/bin/sh\n# SBATCH -N5\n#SBATCH -N2\n", ["-N2"]),
        (b"#!/bin/sh\n##SBATCH -N5\n", []),
        # quotes and trailing comments
        (b'#!/bin/sh\n#SBATCH --job-name="my job"\n', ["--job-name=my job"]),
        (b"#!/bin/sh\n#SBATCH -J 'a b' -N2  # two nodes\n", ["-J", "a b", "-N2"]),
        (b"#!/bin/sh\n#SBATCH --time=10 #--time=20\n", ["--time=10"]),
        (b'#!/bin/sh\n#SBATCH --comment="has # inside"\n', ["--comment=has # inside"]),
        (b"#!/bin/sh\n#SBATCH\n#SBATCH    \n#SBATCH -H\n", ["-H"]),
        # the shebang line is not a directive even when it looks like one
        (b"#!/bin/sh #SBATCH -N9\n#SBATCH -N1\n", ["-N1"]),
        (b"#!/bin/sh\n", []),
        (b"#!/bin/sh\n#SBATCH -N2\r\n", ["-N2"]),
    ],
)
def test_directives_reads_sbatch_lines_up_to_the_first_command(
    script: bytes, words: list[str]
) -> None:
    assert directives(script) == words


def test_directives_parse_with_sbatchs_own_options() -> None:
    script = b"#!/bin/bash\n#SBATCH -N 2 --ntasks-per-node=4\n#SBATCH --gres=gpu:4 -t 10\nenv\n"
    values, rest = parse(OPTIONS, directives(script))
    assert values == {"nodes": "2", "ntasks_per_node": "4", "gres": "gpu:4", "time": "10"}
    assert rest == []


def test_directives_with_an_unterminated_quote_fail() -> None:
    with pytest.raises(CommandError, match='unmatched " in #SBATCH line'):
        directives(b'#!/bin/sh\n#SBATCH -J "oops\n')


def test_directives_ignore_an_indented_sbatch_line_like_slurm() -> None:
    assert directives(b"#!/bin/sh\n  #SBATCH -N5\n#SBATCH -N2\n") == ["-N2"]


# ---------------------------------------------------------------- split_words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a b  c", ["a", "b", "c"]),
        ("  lead and trail  ", ["lead", "and", "trail"]),
        ('"a b" c', ["a b", "c"]),
        ("'a \"b\"'", ['a "b"']),
        ('--opt="x y"z', ["--opt=x yz"]),
        ("a\\ b", ["a b"]),
        ('\\"q', ['"q']),
        ('""', [""]),
        ("x # comment 'unterminated", ["x"]),
        ("# all comment", []),
        ("", []),
        ("\ttab\tseparated", ["tab", "separated"]),
    ],
)
def test_split_words_splits_like_a_shell(text: str, words: list[str]) -> None:
    assert split_words(text) == words


@pytest.mark.parametrize("text", ["'open", 'a "b', "x 'y z"])
def test_split_words_rejects_an_unterminated_quote(text: str) -> None:
    with pytest.raises(CommandError, match="unmatched"):
        split_words(text)


# ---------------------------------------------------------------- check_script


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (b"", "error: Batch script is empty!"),
        (b"  \n\n\t", "error: Batch script is empty!"),
        (b"echo hi\n", "error: This does not look like a batch script.  The first"),
        (b"\n#!/bin/sh\necho\n", "error: This does not look like a batch script."),
        (b"#!/bin/sh\r\necho hi\r\n", "error: Batch script contains DOS line breaks"),
        (b"#!/bin/sh\necho \0\n", "error: The SLURM controller does not allow scripts"),
    ],
)
def test_check_script_rejects_what_sbatch_rejects(script: bytes, message: str) -> None:
    with pytest.raises(CommandError) as err:
        check_script(script)
    assert err.value.message.startswith(message)
    assert err.value.status == 1


def test_check_script_explains_the_shebang_on_three_sbatch_lines() -> None:
    with pytest.raises(CommandError) as err:
        check_script(b"hostname\n")
    assert err.value.message.split("\n") == [
        "error: This does not look like a batch script.  The first",
        "sbatch: error: line must start with #! followed by the path to an interpreter.",
        "sbatch: error: For instance: #!/bin/sh",
    ]


@pytest.mark.parametrize("script", [b"#!/bin/sh\n", b"#!/usr/bin/env python3\nprint(1)\n"])
def test_check_script_accepts_a_script_with_an_interpreter(script: bytes) -> None:
    check_script(script)


# ---------------------------------------------------------------- resource_fields


@pytest.mark.parametrize(
    ("time", "minutes"),
    [
        ("10", 10),
        ("0:30", 1),
        ("5:30", 6),
        ("1:00:00", 60),
        ("1-0", 1440),
        ("1-2:30", 1590),
        ("2-00:00:00", 2880),
        ("0", INFINITE),
        ("UNLIMITED", INFINITE),
        ("infinite", INFINITE),
    ],
)
def test_resource_fields_reads_slurm_time_formats(time: str, minutes: int) -> None:
    assert resource_fields({"time": time}) == {"time_limit": minutes}


@pytest.mark.parametrize("time", ["abc", "", "1:2:3:4", "-5", "1-2-3", "10m"])
def test_resource_fields_rejects_a_bad_time_with_status_255(time: str) -> None:
    # err_bad_time.txt: "sbatch: error: Invalid --time specification", exit 255
    with pytest.raises(CommandError) as err:
        resource_fields({"time": time})
    assert err.value.message == "error: Invalid --time specification"
    assert err.value.status == 255


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [("2", (2, 2)), ("2-4", (2, 4)), ("1-1", (1, 1)), ("3-10", (3, 10))],
)
def test_resource_fields_reads_a_node_count_or_range(nodes: str, expected: tuple[int, int]) -> None:
    assert resource_fields({"nodes": nodes}) == {
        "min_nodes": expected[0],
        "max_nodes": expected[1],
    }


@pytest.mark.parametrize(
    ("key", "text", "field", "megabytes"),
    [
        ("mem", "100", "mem_per_node", 100),
        ("mem", "4G", "mem_per_node", 4096),
        ("mem", "4g", "mem_per_node", 4096),
        ("mem", "4GB", "mem_per_node", 4096),
        ("mem", "2048M", "mem_per_node", 2048),
        ("mem", "1T", "mem_per_node", 1024 * 1024),
        ("mem", "1500K", "mem_per_node", 2),
        ("mem_per_cpu", "512", "mem_per_cpu", 512),
        ("mem_per_cpu", "2G", "mem_per_cpu", 2048),
    ],
)
def test_resource_fields_reads_memory_with_slurms_suffixes(
    key: str, text: str, field: str, megabytes: int
) -> None:
    assert resource_fields({key: text}) == {field: megabytes}


@pytest.mark.parametrize(
    ("key", "text", "option"),
    [("mem", "1.5G", "--mem"), ("mem", "lots", "--mem"), ("mem_per_cpu", "4X", "--mem-per-cpu")],
)
def test_resource_fields_rejects_bad_memory_with_status_255(
    key: str, text: str, option: str
) -> None:
    with pytest.raises(CommandError) as err:
        resource_fields({key: text})
    assert err.value.message == f"error: Invalid {option} specification"
    assert err.value.status == 255


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("ntasks", "4", 4),
        ("ntasks_per_node", "8", 8),
        ("cpus_per_task", "2", 2),
        ("gpus", "3", 3),
        ("gpus_per_node", "1", 1),
        ("gpus_per_task", "2", 2),
    ],
)
def test_resource_fields_reads_positive_counts(key: str, text: str, expected: int) -> None:
    assert resource_fields({key: text}) == {key: expected}


@pytest.mark.parametrize(
    ("key", "text"), [("ntasks", "0"), ("ntasks", "-1"), ("cpus_per_task", "two"), ("gpus", "")]
)
def test_resource_fields_rejects_counts_that_are_not_positive(key: str, text: str) -> None:
    option = "--" + key.replace("_", "-")
    with pytest.raises(CommandError) as err:
        resource_fields({key: text})
    assert err.value.message == f'error: Invalid numeric value "{text}" for {option}.'
    assert err.value.status == 255


@pytest.mark.parametrize(("text", "nice"), [("", 100), ("5", 5), ("-5", -5), ("0", 0)])
def test_resource_fields_nice_without_a_value_is_100(text: str, nice: int) -> None:
    assert resource_fields({"nice": text}) == {"nice": nice}


def test_resource_fields_rejects_a_non_numeric_nice() -> None:
    with pytest.raises(CommandError) as err:
        resource_fields({"nice": "high"})
    assert err.value.message == 'error: Invalid numeric value "high" for --nice.'
    assert err.value.status == 255


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, {}),
        ({"requeue": True}, {"requeue": True}),
        ({"no_requeue": True}, {"requeue": False}),
    ],
)
def test_resource_fields_sets_requeue_only_when_asked(
    values: dict[str, object], expected: dict[str, object]
) -> None:
    assert resource_fields(values) == expected


def test_resource_fields_ignores_options_it_does_not_own() -> None:
    assert resource_fields({"partition": "gpu", "job_name": "x", "hold": True}) == {}


# ---------------------------------------------------------------- notice_fields


def test_the_directives_submitit_writes_all_parse() -> None:
    script = (
        b"#!/bin/bash\n\n# Parameters\n#SBATCH --comment=t\n#SBATCH --cpus-per-task=1\n"
        b"#SBATCH --error=/f/%j/%j_0_log.err\n#SBATCH --gpus-per-node=1\n"
        b"#SBATCH --job-name=submitit\n#SBATCH --mem=1GB\n#SBATCH --nodes=1\n"
        b"#SBATCH --open-mode=append\n#SBATCH --output=/f/%j/%j_0_log.out\n"
        b"#SBATCH --partition=gpu\n#SBATCH --signal=USR2@90\n#SBATCH --time=5\n"
        b"#SBATCH --wckey=submitit\n#SBATCH --exclusive\n#SBATCH --mail-type=END\n"
        b"#SBATCH --mail-user=me@example.org\n"
    )
    values, _ = parse(OPTIONS, directives(script))
    assert notice_fields(values) == {
        "comment": "t",
        "mail_user": "me@example.org",
        "mail_type": "END",
        "open_mode": "append",
        "warn_signal": 12,
        "warn_time": 90,
        "warn_batch": False,
        "exclusive": True,
    }
    assert resource_fields(values) == {
        "time_limit": 5,
        "min_nodes": 1,
        "max_nodes": 1,
        "cpus_per_task": 1,
        "gpus_per_node": 1,
        "mem_per_node": 1024,
    }


def test_notice_fields_ignore_wckey_and_what_was_not_given() -> None:
    assert notice_fields({"wckey": "submitit", "partition": "gpu"}) == {}


@pytest.mark.parametrize(
    ("key", "text", "message"),
    [
        ("signal", "bogus", "error: Invalid --signal specification"),
        ("signal", "USR1@70000", "error: Invalid --signal specification"),
        ("open_mode", "bogus", "error: Invalid --open-mode specification"),
        ("mail_type", "bogus", "error: Invalid --mail-type specification"),
        ("exclusive", "bogus", "error: Invalid --exclusive specification"),
        ("exclusive", "user", "error: --exclusive=user is not supported"),
    ],
)
def test_notice_fields_reject_bad_values_with_status_255(key: str, text: str, message: str) -> None:
    with pytest.raises(CommandError) as err:
        notice_fields({key: text})
    assert err.value.message == message
    assert err.value.status == 255


# ---------------------------------------------------------------- parse_node_range


@pytest.mark.parametrize(
    ("text", "expected"), [("1", (1, 1)), ("2-4", (2, 4)), ("4-4", (4, 4)), ("10", (10, 10))]
)
def test_parse_node_range_reads_min_and_max(text: str, expected: tuple[int, int]) -> None:
    assert parse_node_range(text) == expected


@pytest.mark.parametrize("text", ["0", "4-2", "a", "2-", "-2", "", "2-x", "1.5", "0-2"])
def test_parse_node_range_rejects_malformed_counts(text: str) -> None:
    with pytest.raises(CommandError) as err:
        parse_node_range(text)
    assert err.value.message == f'error: "{text}" is not a valid node count'
    assert err.value.status == 255


# ---------------------------------------------------------------- parse_export

ENVIRON = {"HOME": "/root", "A": "1", "B": "old", "PATH": "/bin"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, ENVIRON),
        ("ALL", ENVIRON),
        ("all", ENVIRON),
        ("NONE", {}),
        ("A", {"A": "1"}),
        ("A,B=2", {"A": "1", "B": "2"}),
        ("A,MISSING", {"A": "1"}),
        ("C=3", {"C": "3"}),
        ("C=x=y", {"C": "x=y"}),
        ("ALL,B=2", {**ENVIRON, "B": "2"}),
        ("ALL,C=", {**ENVIRON, "C": ""}),
        ("NONE,A", {"A": "1"}),
    ],
)
def test_parse_export_selects_the_environment_the_job_takes(
    spec: str | None, expected: dict[str, str]
) -> None:
    assert parse_export(spec, ENVIRON) == expected


def test_parse_export_returns_a_copy() -> None:
    env = parse_export("ALL", ENVIRON)
    env["NEW"] = "x"
    assert "NEW" not in ENVIRON


@pytest.mark.parametrize("spec", ["NONE", "A", "A,B=2"])
def test_parse_export_always_propagates_slurm_variables(spec: str) -> None:
    environ = {**ENVIRON, "SLURM_CONF": "/etc/slurm/slurm.conf"}
    assert parse_export(spec, environ)["SLURM_CONF"] == "/etc/slurm/slurm.conf"
