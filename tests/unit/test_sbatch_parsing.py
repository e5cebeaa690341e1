"""Tests of sbatch's pure parsing: #SBATCH directives, script checks, resource values, --export.

The functions come from cli/sbatch.py, cli/jobspec.py and cli/submit.py;
nothing here touches a controller, a file or the process environment.
"""

from __future__ import annotations

import pytest

from cli.common import CommandError
from cli.gpuspec import gpu_fields
from cli.jobspec import accepted_options, job_fields, notice_fields, resource_fields
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


def resources(values: dict[str, object]) -> dict[str, object]:
    return resource_fields(values, "sbatch")


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
    assert resources({"time": time}) == {"time_limit": minutes}


@pytest.mark.parametrize("time", ["abc", "", "1:2:3:4", "-5", "1-2-3", "10m"])
def test_resource_fields_rejects_a_bad_time_with_status_255(time: str) -> None:
    # err_bad_time.txt: "sbatch: error: Invalid --time specification", exit 255
    with pytest.raises(CommandError) as err:
        resources({"time": time})
    assert err.value.message == "error: Invalid --time specification"
    assert err.value.status == 255


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [("2", (2, 2)), ("2-4", (2, 4)), ("1-1", (1, 1)), ("3-10", (3, 10)), ("0-2", (1, 2))],
)
def test_resource_fields_reads_a_node_count_or_range(nodes: str, expected: tuple[int, int]) -> None:
    assert resources({"nodes": nodes}) == {
        "min_nodes": expected[0],
        "max_nodes": expected[1],
    }


def test_resource_fields_refuses_no_node_with_the_controllers_words() -> None:
    # sbatch -N0: "Batch job submission failed: Node count specification invalid", exit 1
    with pytest.raises(CommandError) as err:
        resources({"nodes": "0"})
    assert err.value.message == (
        "error: Batch job submission failed: Node count specification invalid"
    )
    assert err.value.status == 1


def test_fewer_tasks_than_nodes_shrink_the_node_count_with_slurms_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert resources({"nodes": "4", "ntasks": "3"}) == {
        "min_nodes": 3,
        "max_nodes": 3,
        "ntasks": 3,
    }
    assert capsys.readouterr().err == (
        "sbatch: Warning: can't run 3 processes on 4 nodes, setting nnodes to 3\n"
    )


def test_a_nodelist_longer_than_the_node_count_is_refused() -> None:
    with pytest.raises(CommandError) as err:
        resources({"nodes": "1", "nodelist": "n[1-2]"})
    assert (err.value.message, err.value.status) == ("error: invalid number of nodes (-N 2-1)", 1)


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
    assert resources({key: text}) == {field: megabytes}


@pytest.mark.parametrize(
    ("key", "text", "option"),
    [("mem", "1.5G", "--mem"), ("mem", "lots", "--mem"), ("mem_per_cpu", "4X", "--mem-per-cpu")],
)
def test_resource_fields_rejects_bad_memory_with_status_255(
    key: str, text: str, option: str
) -> None:
    with pytest.raises(CommandError) as err:
        resources({key: text})
    assert err.value.message == f"error: Invalid {option} specification"
    assert err.value.status == 255


def test_memory_per_node_and_per_cpu_are_mutually_exclusive_as_slurms_client_says() -> None:
    with pytest.raises(CommandError) as err:
        resources({"mem": "100", "mem_per_cpu": "2000"})
    assert err.value.message == (
        "fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."
    )
    assert err.value.status == 1


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [("ntasks", "4", 4), ("ntasks_per_node", "8", 8), ("cpus_per_task", "2", 2)],
)
def test_resource_fields_reads_positive_counts(key: str, text: str, expected: int) -> None:
    assert resources({key: text}) == {key: expected}


@pytest.mark.parametrize(
    ("key", "text"),
    [("ntasks", "0"), ("ntasks", "-3"), ("cpus_per_task", "two"), ("cpus_per_task", "1.5")],
)
def test_counts_that_are_not_positive_fail_with_status_1_as_in_slurm(key: str, text: str) -> None:
    # sbatch --ntasks=-3 / --cpus-per-task=0: Slurm's parse_int exits 1, not 255
    option = "--" + key.replace("_", "-")
    with pytest.raises(CommandError) as err:
        resources({key: text})
    assert err.value.message == f'error: Invalid numeric value "{text}" for {option}.'
    assert err.value.status == 1


@pytest.mark.parametrize(
    ("text", "nice"), [("", 100), ("5", 5), ("-5", -5), ("0", 0), ("abc", 0), ("1.5", 1)]
)
def test_nice_is_read_as_strtol_reads_it_and_100_without_a_value(text: str, nice: int) -> None:
    assert resources({"nice": text}) == {"nice": nice}


def test_a_nice_out_of_slurms_range_is_refused() -> None:
    with pytest.raises(CommandError) as err:
        resources({"nice": "2147483646"})
    assert err.value.message == "error: Invalid --nice value, out of range (+/- 2147483645)"
    assert err.value.status == 255


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], {}),
        (["--requeue"], {"requeue": True}),
        (["--no-requeue"], {"requeue": False}),
        (["--no-requeue", "--requeue"], {"requeue": True}),
    ],
)
def test_resource_fields_sets_requeue_only_when_asked(
    argv: list[str], expected: dict[str, object]
) -> None:
    values, _ = parse(OPTIONS, argv)
    assert resources(values) == expected


def test_resource_fields_ignores_options_it_does_not_own() -> None:
    assert resources({"partition": "gpu", "job_name": "x", "hold": True}) == {}


# ---------------------------------------------------------------- gpu_fields


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"gpus": "3"}, {"gpus": 3}),
        ({"gpus_per_node": "1"}, {"gpus_per_node": 1}),
        ({"gpus_per_node": "0"}, {"gpus_per_node": 0}),
        ({"gpus_per_task": "2", "ntasks": "2"}, {"gpus_per_task": 2}),
        ({"gpus_per_task": "1", "ntasks_per_node": "4"}, {"gpus_per_task": 1}),
        ({"gpus_per_node": "a100:2"}, {"gpus_per_node": 2, "gpu_type": "a100"}),
        ({"gpus": "a100"}, {"gpus": 1, "gpu_type": "a100"}),
        ({"gres": "gpu:a100:2", "gpus": "1"}, {"gpus": 1, "gpu_type": "a100"}),
        ({"gpus": "2", "ntasks_per_gpu": "2"}, {"gpus": 2, "ntasks": 4}),
        ({"ntasks": "3", "ntasks_per_gpu": "2"}, {"gpus": 2}),
    ],
)
def test_gpu_fields_read_types_counts_and_tasks_per_gpu(
    values: dict[str, object], expected: dict[str, object]
) -> None:
    assert gpu_fields("sbatch", values) == expected


@pytest.mark.parametrize(
    ("values", "message", "status"),
    [
        (
            {"gpus_per_node": "-1"},
            "error: Batch job submission failed: Requested node configuration is not available",
            1,
        ),
        (
            {"gpus_per_node": "a100:1", "gres": "gpu:v100:1"},
            "error: Invalid generic resource (gres) specification",
            1,
        ),
        (
            {"gpus_per_task": "1"},
            "error: Failed to validate job spec. --gpus-per-task used without either --gpus or"
            " -n/--ntasks is not allowed.\nsbatch: error: Invalid generic resource (gres)"
            " specification",
            1,
        ),
        (
            {"ntasks_per_gpu": "2"},
            "error: gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU"
            " specification or a node/ntask specification\nsbatch: error: Invalid generic"
            " resource (gres) specification",
            1,
        ),
    ],
)
def test_gpu_fields_refuse_what_slurms_client_refuses(
    values: dict[str, object], message: str, status: int
) -> None:
    with pytest.raises(CommandError) as err:
        gpu_fields("sbatch", values)
    assert (err.value.message, err.value.status) == (message, status)


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
        "mail_type": "END",
        "open_mode": "append",
        "warn_signal": 12,
        "warn_time": 90,
        "warn_batch": False,
        "exclusive": True,
    }
    assert resources(values) == {
        "time_limit": 5,
        "min_nodes": 1,
        "max_nodes": 1,
        "cpus_per_task": 1,
        "mem_per_node": 1024,
    }
    assert gpu_fields("sbatch", values) == {"gpus_per_node": 1}
    fields = job_fields("sbatch", values)
    assert (fields["comment"], fields["mail_user"]) == ("t", "me@example.org")
    assert fields["options"] == {"wckey": "submitit"}


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
    ],
)
def test_notice_fields_reject_bad_values_with_status_255(key: str, text: str, message: str) -> None:
    with pytest.raises(CommandError) as err:
        notice_fields({key: text})
    assert err.value.message == message
    assert err.value.status == 255


@pytest.mark.parametrize("mode", ["user", "mcs"])
def test_exclusive_user_or_mcs_is_kept_as_an_option_and_not_as_whole_nodes(mode: str) -> None:
    assert notice_fields({"exclusive": mode}) == {}
    assert accepted_options("sbatch", {"exclusive": mode}) == {"exclusive": mode}


# ---------------------------------------------------------------- parse_node_range


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", (1, 1)), ("2-4", (2, 4)), ("4-4", (4, 4)), ("10", (10, 10)), ("1k", (1024, 1024))],
)
def test_parse_node_range_reads_min_and_max(text: str, expected: tuple[int, int]) -> None:
    assert parse_node_range(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", '"a" is not a valid node count'),
        ("", '"" is not a valid node count'),
        ("-2", '"-2" is not a valid node count'),
        ("2-x", '"x" is not a valid node count'),
        ("1.5", '"1.5" is not a valid node count'),
        ("1-2-3", '"2-3" is not a valid node count'),
        ("4-2", "Maximum node count 2 is less than minimum node count 4"),
        ("2-", "Maximum node count -1 is less than minimum node count 2"),
    ],
)
def test_parse_node_range_rejects_malformed_counts_in_slurms_words(text: str, message: str) -> None:
    with pytest.raises(CommandError) as err:
        parse_node_range(text)
    assert err.value.message == f"error: {message}"
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
