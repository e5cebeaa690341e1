"""getopt's messages name the command as it was run: by its bare name when found on PATH."""

from __future__ import annotations

import sys

import pytest

from cli.common import invoked_as, parse_or_exit
from cli.opts import Option


@pytest.mark.parametrize(
    ("argv0", "on_path", "expected"),
    [
        ("/opt/slurm/bin/sbatch", True, "sbatch"),
        ("/opt/slurm/bin/sbatch", False, "/opt/slurm/bin/sbatch"),
        ("sbatch", False, "sbatch"),
        ("/usr/lib/python3/pytest", False, "sbatch"),  # run in-process
    ],
)
def test_invoked_as_names_the_command_as_the_user_ran_it(
    monkeypatch: pytest.MonkeyPatch, argv0: str, on_path: bool, expected: str
) -> None:
    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setenv("PATH", "/opt/slurm/bin:/usr/bin" if on_path else "/usr/bin")
    assert invoked_as("sbatch") == expected


def test_a_bad_option_exits_with_the_status_the_command_asks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        parse_or_exit("sbatch", [Option("hold", "H")], ["--bogus"], usage_status=255)
    assert done.value.code == 255
    assert capsys.readouterr().err == (
        "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n"
    )
