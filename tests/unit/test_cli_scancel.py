"""Tests of scancel against real Slurm's captures and wording (cli.scancel).

The controller is replaced by a function that answers CancelJobs (and
GetJobs for client-side filters), so no socket is opened.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from cli import common, scancel
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
UID = os.getuid()


def reference(name: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a capture."""
    text = (REF / name).read_text()
    out = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    err = text.split("--- stderr ---\n", 1)[1].split("--- exit: ", 1)[0]
    status = int(text.rsplit("--- exit: ", 1)[1].split(" ", 1)[0])
    return out, err, status


def job(job_id: int, **fields: Any) -> dict[str, Any]:
    base = {
        "job_id": job_id,
        "name": f"j{job_id}",
        "partition": "gpu",
        "state": "RUNNING",
        "account": "root",
        "qos": "normal",
        "nodes": "n1",
        "user": "root",
    }
    return {**base, **fields}


class Fake:
    """CancelJobs answers from ``errors`` (job id, or (job id, step id) -> Slurm's words);
    GetJobs from ``jobs``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.errors: dict[int | tuple[int, int], str] = {}
        self.jobs: list[dict[str, Any]] = [job(14), job(15, account="other", nodes="n2")]

    def _named(self, job: dict[str, Any], request: dict[str, Any]) -> bool:
        task = f"{job.get('array_job_id')}_{job.get('array_task_id')}"
        return job["job_id"] in request.get("job_ids", []) or task in request.get("array_tasks", [])

    def __call__(self, method: str, **request: Any) -> Message:
        self.calls.append((method, request))
        named = bool(request.get("job_ids") or request.get("array_tasks"))
        if method == "GetJobs":
            jobs = [j for j in self.jobs if not named or self._named(j, request)]
            if named and not jobs:
                raise RpcError("NOT_FOUND", "Invalid job id specified")
            return Message("minislurm.v1.GetJobsReply", {"jobs": jobs})
        if request.get("has_step"):
            (job,) = [j for j in self.jobs if self._named(j, request)]
            error = self.errors.get((job["job_id"], request["step_id"]), "")
            return Message("minislurm.v1.CancelJobsReply", {"results": [{"error": error}]})
        ids = request.get("job_ids") or [j["job_id"] for j in self.jobs]
        results = [{"job_id": i, "error": self.errors.get(i, "")} for i in ids]
        return Message("minislurm.v1.CancelJobsReply", {"results": results})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Fake:
    calls = Fake()
    monkeypatch.setattr(common, "call", calls)
    return calls


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = scancel.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


def cancel_request(**fields: Any) -> tuple[str, dict[str, Any]]:
    base = {"signal": 0, "batch_only": False, "full": False, "requester_uid": UID}
    return "CancelJobs", {**base, **fields}


# --------------------------------------------------------------------------- reference captures


@pytest.mark.parametrize(
    ("capture", "argv", "error"),
    [
        ("scancel_running.txt", ["14"], ""),
        ("err_scancel_999999.txt", ["999999"], "Invalid job id specified"),
        ("scancel_completed_job.txt", ["20"], "Job/step already completing or completed"),
        ("err_scancel_bad_id.txt", ["abc"], ""),
    ],
)
def test_output_matches_real_scancel(
    fake: Fake, capsys: pytest.CaptureFixture[str], capture: str, argv: list[str], error: str
) -> None:
    fake.errors = {int(argv[0]): error} if argv[0].isdigit() else {}
    assert run(argv, capsys) == reference(capture)


def test_verbose_shows_why_an_unknown_job_was_not_cancelled(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {999999: "Invalid job id specified"}
    assert run(["-v", "999999"], capsys) == (
        "",
        (
            "scancel: Terminating job 999999\n"
            "scancel: error: Kill job error on job id 999999: Invalid job id specified\n"
        ),
        0,
    )


def test_signalling_an_unknown_job_is_an_error(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {999999: "Invalid job id specified"}
    assert run(["--signal=USR1", "999999"], capsys) == (
        "",
        "scancel: error: Kill job error on job id 999999: Invalid job id specified\n",
        1,
    )
    assert fake.calls == [cancel_request(job_ids=[999999], signal=10)]


def test_quiet_hides_errors_but_keeps_the_status(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {999999: "Invalid job id specified"}
    assert run(["-Q", "-s", "USR1", "999999"], capsys) == ("", "", 1)


def test_unreachable_controller_fails_each_named_job(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def down(method: str, **request: Any) -> Message:
        raise RpcError("UNAVAILABLE", "refused")

    monkeypatch.setattr(common, "call", down)
    assert run(["5"], capsys) == (
        "",
        (
            "scancel: error: Kill job error on job id 5: "
            "Unable to contact slurm controller (connect failure)\n"
        ),
        1,
    )
    assert run(["-n", "x"], capsys) == (
        "",
        "scancel: error: Unable to contact slurm controller (connect failure)\n",
        1,
    )


def test_permission_denied_is_an_error_even_for_a_plain_cancel(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {14: "Access/permission denied"}
    assert run(["14"], capsys) == (
        "",
        "scancel: error: Kill job error on job id 14: Access/permission denied\n",
        210,  # Slurm exits with ESLURM_ACCESS_DENIED's low byte
    )


def test_a_signal_to_a_pending_job_exits_with_slurms_228(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {14: "Job can not be altered now, try again later"}
    assert run(["-s", "TERM", "14"], capsys) == (
        "",
        "scancel: error: Kill job error on job id 14: "
        "Job can not be altered now, try again later\n",
        228,  # ESLURM_TRANSITION_STATE_NO_UPDATE (2020)'s low byte, as Slurm 22.05 exits
    )


# --------------------------------------------------------------------------- requests


@pytest.mark.parametrize(
    ("argv", "fields"),
    [
        (["14", "15,16"], {"job_ids": [14, 15, 16]}),
        (["-s", "SIGUSR1", "14"], {"job_ids": [14], "signal": 10}),
        (["--signal=9", "14"], {"job_ids": [14], "signal": 9}),
        (["-b", "-s", "TERM", "14"], {"job_ids": [14], "signal": 15, "batch_only": True}),
        (["-b", "14"], {"job_ids": [14], "signal": 9, "batch_only": True}),
        (["-f", "-s", "usr2", "14"], {"job_ids": [14], "signal": 12, "full": True}),
        (
            ["-n", "dep", "-p", "gpu", "-t", "PD,r", "-u", "root"],
            {"name": "dep", "partition": "gpu", "states": ["PENDING", "RUNNING"], "user": "root"},
        ),
    ],
)
def test_options_become_one_canceljobs_call(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], fields: dict[str, Any]
) -> None:
    assert run(argv, capsys) == ("", "", 0)
    assert fake.calls == [cancel_request(**fields)]


def test_client_side_filters_list_the_jobs_first(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-A", "other"], capsys) == ("", "", 0)
    assert fake.calls == [("GetJobs", {"job_ids": []}), cancel_request(job_ids=[15])]


def test_ids_and_filters_together_cancel_only_matching_jobs(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-w", "n1", "-u", "root", "14", "15"], capsys) == ("", "", 0)
    assert fake.calls[0] == ("GetJobs", {"job_ids": [14, 15]})  # are they in the queue?
    assert fake.calls[1] == ("GetJobs", {"job_ids": [14, 15], "users": ["root"]})
    assert fake.calls[2] == cancel_request(job_ids=[14])


@pytest.mark.parametrize(
    "argv", [["-t", "R", "999999"], ["-i", "999999"], ["-u", "root", "999999"]]
)
def test_named_jobs_missing_from_the_queue_are_errors_when_jobs_are_listed_first(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert run(argv, capsys) == (
        "",
        "scancel: error: Kill job error on job id 999999: Invalid job id specified\n",
        1,
    )


@pytest.mark.parametrize(
    ("environ", "argv", "fields"),
    [
        ({"SCANCEL_USER": "root", "SCANCEL_NAME": "dep"}, [], {"user": "root", "name": "dep"}),
        ({"SCANCEL_USER": "nobody"}, ["-u", "root"], {"user": "root"}),
        ({"SCANCEL_PARTITION": "gpu", "SCANCEL_STATE": "PD"}, [], {"states": ["PENDING"]}),
        ({"SCANCEL_BATCH": "T"}, ["14"], {"job_ids": [14], "signal": 9, "batch_only": True}),
        ({"SCANCEL_FULL": "true"}, ["14"], {"job_ids": [14], "signal": 9, "full": True}),
        ({"SCANCEL_BATCH": "F"}, ["14"], {"job_ids": [14]}),
    ],
)
def test_environment_stands_for_options_the_command_line_does_not_give(
    fake: Fake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str],
    argv: list[str],
    fields: dict[str, Any],
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert run(argv, capsys) == ("", "", 0)
    sent = fake.calls[-1][1]
    assert {k: sent[k] for k in fields} == fields


def test_a_switch_variable_of_another_value_is_slurms_error(
    fake: Fake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCANCEL_BATCH", "maybe")
    assert run(["14"], capsys) == (
        "",
        "scancel: error: Unrecognized SCANCEL_BATCH value: maybe\n",
        0,
    )
    assert fake.calls == [cancel_request(job_ids=[14])]


def test_filters_matching_nothing_cancel_nothing(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-v", "-q", "nosuchqos"], capsys) == (
        "",
        "scancel: error: No active jobs match ALL job filters, including: \n",
        0,
    )
    assert [method for method, _ in fake.calls] == ["GetJobs"]


def test_interactive_asks_for_each_job(
    fake: Fake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\nn\n"))
    out, err, status = run(["-i", "14", "15"], capsys)
    assert out == (
        "Cancel job_id=14 name=j14 partition=gpu [y/n]? "
        "Cancel job_id=15 name=j15 partition=gpu [y/n]? "
    )
    assert (err, status) == ("", 0)
    assert fake.calls[-1] == cancel_request(job_ids=[14])


def test_verbose_describes_each_action(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    _, err, _ = run(["-v", "-b", "-s", "TERM", "5"], capsys)
    assert err == "scancel: Signal 15 to batch job 5\n"
    _, err, _ = run(["-v", "-f", "-s", "USR2", "14"], capsys)
    assert err == "scancel: Signal 12 to full job 14\n"
    _, err, _ = run(["-v", "-n", "j14"], capsys)
    assert err == "scancel: Terminating job 14\nscancel: Terminating job 15\n"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        ([], "scancel: error: No job identification provided\n"),
        (["-s", "USR1"], "scancel: error: No job identification provided\n"),
        (["-s", "BOGUS", "14"], "Unknown job signal: BOGUS\n"),
        (["-s", "0", "14"], "Unknown job signal: 0\n"),
        (
            ["-t", "bogus"],
            "Invalid job state specified: bogus\nValid job states are PENDING, RUNNING, and "
            "SUSPENDED\n",
        ),
        (["-u", "no-such-user-xyz"], "scancel: error: Invalid user name: no-such-user-xyz\n"),
        (["14", "abc"], "scancel: error: Invalid job id abc\n"),
        (["-w", "n[3-1]"], "scancel: error: Invalid node name n[3-1]\n"),
        (
            ["123.x"],
            "scancel: error: Invalid job id 123.x\n",
        ),
    ],
)
def test_bad_input_fails_with_slurms_words_and_calls_nothing(
    fake: Fake, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)
    assert fake.calls == []


# --------------------------------------------------------------------------- steps, as real Slurm


def step_request(job_id: int, step_id: int, signal: int = 0) -> tuple[str, dict[str, Any]]:
    fields = {"step_id": step_id, "has_step": True, "signal": signal, "requester_uid": UID}
    return "CancelJobs", {**fields, "job_ids": [job_id]}


def test_a_running_step_is_killed_silently(fake: Fake, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["14.0"], capsys) == ("", "", 0)
    assert fake.calls == [
        ("GetJobs", {"job_ids": [14], "array_tasks": []}),
        step_request(14, 0),
    ]
    assert run(["-v", "14.0"], capsys) == ("", "scancel: Terminating step 14.0\n", 0)
    assert run(["-v", "--signal=USR1", "14.0"], capsys) == (
        "",
        "scancel: Signal 10 to step 14.0\n",
        0,
    )
    assert fake.calls[-1] == step_request(14, 0, signal=10)


def test_a_step_the_running_job_lacks_exits_with_slurms_error_number(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {(14, 7): "Invalid job id specified"}
    # Real Slurm names the job alone and exits with ESLURM_INVALID_JOB_ID (2017) & 0xff.
    assert run(["14.7"], capsys) == (
        "",
        "scancel: error: Kill job error on job step id 14: Invalid job id specified\n",
        225,
    )
    assert run(["--signal=USR1", "14.7"], capsys) == ("", "", 0)  # as real Slurm: silent
    assert run(["-Q", "14.7"], capsys) == ("", "", 225)


def test_a_step_of_someone_elses_job_is_invalid_user_id(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {(14, 0): "Invalid user id"}
    expected = ("", "scancel: error: Kill job error on job step id 14: Invalid user id\n", 218)
    assert run(["14.0"], capsys) == expected
    assert run(["-s", "USR1", "14.0"], capsys) == expected


def test_a_step_of_a_job_that_is_not_active_is_an_error(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = "scancel: error: Kill job error on job step id {}: Invalid job id specified\n"
    assert run(["99.0", "98.1"], capsys) == (
        "",
        expected.format("99.0") + expected.format("98.1"),
        1,
    )
    assert run(["-v", "--signal=USR1", "99.0"], capsys) == ("", expected.format("99.0"), 1)
    assert run(["-Q", "99.0"], capsys) == ("", "", 1)
    assert [m for m, _ in fake.calls] == ["GetJobs"] * 3  # nothing was cancelled


def test_a_step_of_a_pending_job_is_left_alone_silently(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.jobs = [job(14, state="PENDING")]
    assert run(["-v", "14.0"], capsys) == ("", "", 0)
    assert [m for m, _ in fake.calls] == ["GetJobs"]


def test_an_array_tasks_step_is_named_by_its_task(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.jobs = [job(26, array_job_id=24, array_task_id=1)]
    assert run(["24_1.0"], capsys) == ("", "", 0)
    assert fake.calls == [
        ("GetJobs", {"job_ids": [], "array_tasks": ["24_1"]}),
        (
            "CancelJobs",
            {
                "step_id": 0,
                "has_step": True,
                "signal": 0,
                "requester_uid": UID,
                "array_tasks": ["24_1"],
            },
        ),
    ]


def test_steps_and_jobs_together_exit_with_the_worst_status(
    fake: Fake, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.errors = {(14, 7): "Invalid job id specified"}
    _, err, status = run(["14.7", "15"], capsys)
    assert (err, status) == (
        "scancel: error: Kill job error on job step id 14: Invalid job id specified\n",
        225,
    )
    assert fake.calls[-1] == cancel_request(job_ids=[15])


def test_action_text_names_the_scope() -> None:
    plan = scancel.Plan()
    assert scancel.action_text(plan, 3) == "Terminating job 3"
    plan.signal = 10
    assert scancel.action_text(plan, 3) == "Signal 10 to job 3"


def test_help_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert scancel.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("Usage: scancel [OPTIONS]")
    assert scancel.main(["--usage"]) == 0
    assert capsys.readouterr().out.startswith("Usage: scancel [-A account]")
