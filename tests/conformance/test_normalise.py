"""The suite's own rules: case files are checked as they load, and normalisation hides only
what is bound to differ between two systems (no cluster needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cases import Case, CaseError, load_area
from .normalise import Context, normalise, normalise_text


def _ctx(jobs: tuple[int, ...] = (), workdir: str = "/tmp/run-7/area/case") -> Context:
    return Context(
        workdir=workdir,
        conf="/etc/slurm/slurm.conf",
        jobs=jobs,
        host="login1",
        user="alice",
        uid=1000,
        group="staff",
        gid=50,
        cluster="anchor",
    )


def test_job_ids_become_labels_in_creation_order_wherever_they_stand_alone() -> None:
    text = (
        "Submitted batch job 412\nJobId=413 Dependency=afterok:412(unfulfilled)\n"
        "413.batch 412_[0-3] slurm-412.out\nport 15412 addr 10.0.0.412 412abc\n"
    )
    assert normalise_text(text, _ctx((412, 413))) == (
        "Submitted batch job <J1>\nJobId=<J2> Dependency=afterok:<J1>(unfulfilled)\n"
        "<J2>.batch <J1>_[0-3] slurm-<J1>.out\nport 15412 addr 10.0.0.412 412abc\n"
    )


def test_numbers_that_are_not_the_case_jobs_stay() -> None:
    assert normalise_text("NumNodes=1 NumCPUs=8 JobId=999999\n", _ctx((101,))) == (
        "NumNodes=1 NumCPUs=8 JobId=999999\n"
    )


def test_a_label_keeps_its_column_width_whatever_the_id_length() -> None:
    header = "             JOBID PARTITION\n"
    short = normalise_text(
        header + "               296       gpu\n296.batch    batch\n", _ctx((296,))
    )
    long = normalise_text(
        header + "              1296       gpu\n1296.batch   batch\n", _ctx((1296,))
    )
    assert short == long == header + "              <J1>       gpu\n<J1>.batch   batch\n"


def test_a_column_of_another_width_still_differs() -> None:
    one = normalise_text("   296 gpu\n", _ctx((296,)))
    other = normalise_text("      296 gpu\n", _ctx((296,)))
    assert one != other


def test_paths_are_replaced_before_job_ids() -> None:
    ctx = _ctx((7,), workdir="/tmp/pytest-7/case")
    assert normalise_text("StdOut=/tmp/pytest-7/case/slurm-7.out\n", ctx) == (
        "StdOut=<WORKDIR>/slurm-<J1>.out\n"
    )


def test_host_user_group_time_and_session_are_placeholders() -> None:
    text = (
        "UserId=alice(1000) GroupId=staff(50) SubmitTime=2026-12-01T21:48:30\n"
        "AllocNode:Sid=localhost:29777 user alice on login1 cluster anchor\n"
        "alicex login1.example CANCELLED by 1000 StepId=3.0 UserId=1000\n"
    )
    assert normalise_text(text, _ctx()) == (
        "UserId=<USER>(<UID>) GroupId=<GROUP>(<GID>) SubmitTime=<DATETIME>\n"
        "AllocNode:Sid=<HOST>:<SID> user <USER> on <HOST> cluster <CLUSTER>\n"
        "alicex login1.example CANCELLED by <UID> StepId=3.0 UserId=<UID>\n"
    )


def _case(**fields: object) -> Case:
    return Case(area="a", name="c", run="true", **fields)  # type: ignore[arg-type]


def test_fields_grep_sort_and_subst_narrow_what_is_compared() -> None:
    out = "JobId=5 JobName=x\n   TimeLimit=01:00:00 Partition=gpu\nzz\naa\n"
    case = _case(fields=("Partition", "JobName"))
    assert normalise(case, _ctx((5,)), out, "")[0] == "JobName=x\nPartition=gpu\n"
    case = _case(grep="^(AA|zz)", sort=True, subst=(("aa", "AA"),))
    assert normalise(case, _ctx(), out, "zz\naa\n") == ("AA\nzz\n", "AA\nzz\n")


def test_text_is_compared_as_it_is_when_nothing_narrows_it() -> None:
    assert normalise(_case(), _ctx(), "no newline", "x\n\n") == ("no newline", "x\n\n")


def test_a_case_file_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "area.toml"
    path.write_text('[[case]]\nname = "one"\nrun = "true"\ncompar = ["rc"]\n')
    with pytest.raises(CaseError, match="unknown key"):
        load_area(path)


def test_a_case_named_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "area.toml"
    path.write_text(
        '[[case]]\nname = "one"\nrun = "true"\n\n[[case]]\nname = "one"\nrun = "false"\n'
    )
    with pytest.raises(CaseError, match="named twice"):
        load_area(path)


def test_the_digest_follows_what_the_run_does() -> None:
    assert _case().digest() == _case(note="why", compare=("rc",), subst=(("a", "b"),)).digest()
    assert _case().digest() != _case(setup="J=$(held)").digest()
