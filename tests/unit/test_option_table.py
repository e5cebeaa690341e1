"""Every option and input variable of Slurm 22.05's sbatch, srun and salloc, and its status here.

tests/data/slurm-22.05/ holds the option headings and input environment
variables of the three man pages (scripts/extract_man_options.py);
tests/data/options.tsv says, for each option, whether it is implemented or
accepted without effect, with an example that must get through the command's
own parsing. These tests fail when the man pages name an option or a
variable the commands or the table lack, or when an option of the table
does not parse in its command.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cli import jobflags, opts
from cli.helptext import HELP, USAGE
from cli.jobspec import allocation_spec
from cli.sbatch import batch_spec
from cli.stepspec import check_command_options, merged_values, step_spec

DATA = Path(__file__).resolve().parent.parent / "data"
MAN = DATA / "slurm-22.05"
NEWER = DATA / "slurm-newer"  # what later Slurm added that we implement (--segment)
COMMANDS = ("sbatch", "srun", "salloc")
STATUSES = ("implemented", "accepted")
README = Path(__file__).resolve().parents[2] / "README.md"
# getopt takes an optional argument where the man page shows none.
ARGUMENT_EXCEPTIONS = {("srun", "overlap"): opts.OPTIONAL}


def man_options(command: str) -> dict[str, tuple[str, int]]:
    """The man page's options: long name -> (short letter, argument kind)."""
    found: dict[str, tuple[str, int]] = {}
    headings = (MAN / f"{command}.options").read_text().splitlines()
    for heading in headings + (NEWER / f"{command}.options").read_text().splitlines():
        match = re.match(r"(?:-(\w), ?)?--([a-z0-9-]+)(.*)", heading)
        assert match, heading
        short, long, rest = match.groups()
        kind = opts.NO_ARG if not rest else opts.OPTIONAL if rest[0] == "[" else opts.REQUIRED
        found.setdefault(long, (short or "", kind))
    return found


def table() -> list[dict[str, str]]:
    lines = (DATA / "options.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]


ROWS = table()


@pytest.mark.parametrize("command", COMMANDS)
def test_the_table_lists_every_option_of_the_man_page_and_no_other(command: str) -> None:
    listed = [row["option"] for row in ROWS if row["command"] == command]
    assert sorted(listed) == sorted(man_options(command))
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['command']}-{r['option']}")
def test_each_option_of_the_table_has_a_status_and_an_example(row: dict[str, str]) -> None:
    assert row["status"] in STATUSES
    assert row["example"].startswith(f"--{row['option']}") or f" --{row['option']}" in (
        " " + row["example"]
    )
    if row["status"] == "accepted":
        assert row["note"], "say what is accepted without effect, and what happens instead"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_takes_the_options_of_its_man_page_as_getopt_does(command: str) -> None:
    ours = {o.long: o for o in jobflags.options(command)}
    for long, (short, kind) in man_options(command).items():
        assert long in ours, f"{command} lacks --{long}"
        if short:
            assert ours[long].short == short, f"{command} --{long}: -{short}"
        assert ours[long].arg == ARGUMENT_EXCEPTIONS.get((command, long), kind), long


def process(command: str, argv: list[str]) -> object:
    """Parse a command line and build what the command sends, as the command does (no RPC)."""
    values, rest = opts.parse(jobflags.options(command), argv)
    assert rest == []
    if command == "sbatch":
        return batch_spec(values, b"#!/bin/sh\ntrue\n", "test", [])
    if command == "srun":
        values = merged_values(values, {})
        check_command_options(values)
        return step_spec(values, ["true"], 1), allocation_spec("srun", values, "true", "true")
    return allocation_spec("salloc", values, "", "interactive")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['command']}-{r['option']}")
def test_each_option_of_the_table_parses_in_its_command(
    row: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", ":0")  # --x11 needs one
    monkeypatch.setattr("os.getuid", lambda: 0)  # --uid and --gid are root's
    argv = shlex.split(row["example"].replace("{data}", str(DATA / "options")))
    assert process(row["command"], argv)


def man_variables(command: str) -> set[str]:
    """The input environment variables the man page names (``A or B`` is two)."""
    names = set()
    lines = (MAN / f"{command}.environment").read_text().splitlines()
    for line in lines + (NEWER / f"{command}.environment").read_text().splitlines():
        names |= {name.split("=")[0] for name in line.split(" or ")}
    return names


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_reads_every_input_variable_of_its_man_page(command: str) -> None:
    table = jobflags.environment(command)
    assert set(table) == man_variables(command)
    options = {o.long for o in jobflags.options(command)}
    assert {long for long in table.values() if long} <= options


def test_the_readme_lists_every_option_accepted_without_effect() -> None:
    text = README.read_text()
    section = text.split("Accepted without effect", 1)[1].split("\n\n", 1)[0]
    for row in ROWS:
        if row["status"] == "accepted":
            assert f"--{row['option']}" in section, row["option"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("option", ["--help", "--usage"])
def test_help_and_usage_are_slurms_texts(
    command: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main = __import__(f"cli.{command}", fromlist=["main"]).main
    assert main([option]) == 0
    expected = (HELP if option == "--help" else USAGE)[command]
    assert capsys.readouterr().out == expected
    assert expected.startswith("Usage: " if option == "--help" else f"Usage: {command} ")


@pytest.mark.parametrize(
    ("command", "possibilities"),
    [
        ("sbatch", "'--exclude' '--exclusive' '--export' '--export-file' '--extra-node-info'"),
        ("srun", "'--exact' '--exclude' '--exclusive' '--export' '--extra-node-info'"),
        ("salloc", "'--exclude' '--exclusive' '--extra-node-info'"),
    ],
)
def test_an_ambiguous_option_is_getopts_message_and_status_255(
    command: str, possibilities: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # What Slurm 22.05's commands print for --ex.
    main = __import__(f"cli.{command}", fromlist=["main"]).main
    assert main(["--ex"]) == 255
    assert capsys.readouterr().err == (
        f"{command}: option '--ex' is ambiguous; possibilities: {possibilities}\n"
        f'Try "{command} --help" for more information\n'
    )
