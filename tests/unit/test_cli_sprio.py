"""Tests of sprio's arguments and error paths (cli.sprio), in Slurm 22.05's words."""

from __future__ import annotations

from typing import Any

import pytest

from cli import common, sprio
from minislurm.wire.protowire import Message

JOBS = [
    {"job_id": 14, "partition": "gpu", "user": "root", "priority": 1000},
    {"job_id": 15, "partition": "gpu", "user": "nobody", "priority": 900},
]


@pytest.fixture
def conf() -> dict[str, str]:
    """The controller's configuration as GetConfig gives it (a test may change it)."""
    return {"PriorityType": "priority/multifactor"}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, conf: dict[str, str]) -> list[str]:
    made: list[str] = []

    def call(method: str, **request: Any) -> Message:
        made.append(method)
        if method == "GetConfig":
            entries = [{"key": k, "value": v} for k, v in conf.items()]
            return Message("minislurm.v1.GetConfigReply", {"entries": entries})
        reply = {"jobs": JOBS, "weights": {"Age": 1000}}
        return Message("minislurm.v1.GetPrioritiesReply", reply)

    monkeypatch.setattr(common, "call", call)
    return made


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = sprio.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


@pytest.mark.parametrize(
    ("argv", "out", "err"),
    [
        (["-j", "abc"], "", "sprio: error: Invalid job id: abc\n"),
        (["-j", "14,x"], "", "sprio: error: Invalid job id: x\n"),
        (
            ["-l", "-o", "%i"],
            "",
            "sprio: fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
            "Please remove one and retry.\n",
        ),
        (["extra"], sprio.USAGE, "sprio: error: Unrecognized option: extra\n"),
    ],
)
def test_bad_arguments_fail_with_slurms_words_before_any_call(
    calls: list[str], capsys: pytest.CaptureFixture[str], argv: list[str], out: str, err: str
) -> None:
    assert run(argv, capsys) == (out, err, 1)
    assert calls == []


def test_unknown_users_are_reported_and_the_others_kept(
    calls: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-h", "-u", "root,nosuchuser", "-o", "%.5i"], capsys)
    assert (out, err, status) == ("   14\n", "sprio: error: Invalid user: nosuchuser\n\n", 0)
    out, _, _ = run(["-h", "-u", "nosuchuser", "-o", "%.5i"], capsys)
    assert out == ""


def test_an_array_task_is_read_as_its_array(
    calls: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-h", "-j", "15_3", "-o", "%.5i"], capsys) == ("   15\n", "", 0)


def test_sprio_format_stands_for_o(
    calls: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPRIO_FORMAT", "%.5i %.8Y")
    assert run(["-h"], capsys)[0] == "   14     1000\n   15      900\n"
    assert run(["-h", "-o", "%.5i"], capsys)[0] == "   14\n   15\n"


def test_under_priority_basic_sprio_says_it_has_no_factors(
    calls: list[str], conf: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    conf["PriorityType"] = "priority/basic"
    err = (
        "You are not running a supported priority plugin\n(priority/basic).\n"
        "Only 'priority/multifactor' is supported.\n"
    )
    assert run(["-l"], capsys) == ("", err, 1)
    assert calls == ["GetConfig"]
