"""sacctmgr's rules on the association tree, association limits in a pass, partition access."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctld.accounting import assocedit
from ctld.accounting import qos as qosops
from ctld.accounting.assoc import AcctError
from ctld.accounting.manager import Accounting
from ctld.partaccess import check_access
from minislurm.accounts import initial_book
from minislurm.config import PartitionConfig, SlurmConfig
from minislurm.model import Allocation, Job, NodeAlloc, PendingJob, ResourceRequest
from minislurm.states import JobState


def test_add_modify_delete_keep_the_tree_consistent() -> None:
    book = initial_book()
    book, _ = assocedit.add_accounts(book, ["Physics"], {"Fairshare": "30"}, "c")
    book, _ = assocedit.add_accounts(book, ["theory"], {"parent": "physics"}, "c")
    book, lines = assocedit.add_users(book, ["bob"], {"Account": "theory", "MaxJobs": "2"}, "c")
    assert lines[:2] == [" Adding User(s)", "  bob"]
    assert book.assocs[("physics", "")].shares == 30
    assert book.users["bob"].default_account == "theory"
    assert [a.key for a in book.ancestors(book.assocs[("theory", "bob")])] == [
        ("theory", ""), ("physics", ""), ("root", ""),
    ]  # fmt: skip
    book, lines = assocedit.modify(
        book, "account", {"name": "theory"}, {"GrpTRES": "gres/gpu=4"}, "c"
    )
    assert lines == [" Modified account associations...", "  C = c          A = theory of physics"]
    assert book.assocs[("theory", "")].grp_gpus == 4
    book, lines = assocedit.delete(book, "account", {"name": "physics"}, set())
    assert lines == [" Deleting accounts...", "  physics"]
    assert set(book.assocs) == {("root", ""), ("root", "root")}
    assert set(book.accounts) == {"root"} and set(book.users) == {"root"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: assocedit.add_accounts(b, ["root"], {}, "c"), " Nothing new added."),
        (lambda b: assocedit.add_accounts(b, ["x"], {"Parent": "no"}, "c"), " Parent account 'no'"),
        (lambda b: assocedit.add_accounts(b, ["x"], {"Fairshare": "-3x"}, "c"), "Invalid value"),
        (lambda b: assocedit.add_accounts(b, ["x"], {"Bogus": "1"}, "c"), " Unknown option: Bogus"),
        (lambda b: assocedit.add_users(b, ["u"], {"Account": "no"}, "c"), " This account 'no'"),
        (lambda b: assocedit.add_users(b, ["u"], {}, "c"), " Need name of account"),
        (lambda b: assocedit.modify(b, "user", {"name": "no"}, {"MaxJobs": "1"}, "c"), " Nothing"),
        (lambda b: assocedit.delete(b, "account", {"name": "root"}, set()), " You are not allowed"),
        (lambda b: assocedit.delete(b, "user", {"name": "root"}, {("root", "root")}), "active"),
        (lambda b: assocedit.add_accounts(b, ["x"], {"GrpTRES": "gres/gpu=x"}, "c"), "GrpTRES"),
    ],
)
def test_bad_requests_are_refused_with_slurms_words(call: Any, message: str) -> None:
    with pytest.raises(AcctError) as err:
        call(initial_book())
    assert message in str(err.value)


def _accounting(enforce: tuple[str, ...]) -> Accounting:
    conf = SlurmConfig(accounting_storage_enforce=enforce)

    def transaction() -> AbstractContextManager[Any]:
        return nullcontext(None)

    return Accounting(conf, transaction, ())


def _job(job_id: int, account: str, gpus: int = 0, state: JobState = JobState.PENDING) -> Job:
    req = ResourceRequest(gpus=gpus)
    alloc = None
    if state is JobState.RUNNING:
        alloc = Allocation((NodeAlloc("n1", 1, 0, tuple(range(gpus))),))
    return Job(job_id, "j", 0, 0, "u", "u", "p", state, req, float(job_id), account=account,
               allocation=alloc, start_time=1.0 if alloc else 0.0)  # fmt: skip


def test_admit_fills_the_default_account_and_enforces_associations() -> None:
    acct = _accounting(("associations", "limits"))
    acct.book, _ = assocedit.add_accounts(acct.book, ["a"], {}, "c")
    limits = {"Account": "a", "MaxSubmitJobs": "1"}
    acct.book, _ = assocedit.add_users(acct.book, ["u"], limits, "c")
    assert acct.admit(_job(1, ""), []).account == "a"
    with pytest.raises(Exception, match="Invalid account"):
        acct.admit(_job(1, "b"), [])
    with pytest.raises(Exception, match="AssocMaxSubmitJobLimit"):
        acct.admit(_job(2, "a"), [_job(1, "a")])
    assert acct.admit(_job(2, "a"), [_job(1, "a", state=JobState.COMPLETED)]).account == "a"
    # Each task of an array counts, as in Slurm.
    array = replace(_job(3, "a"), array_job_id=3, array_tasks="0-2")
    acct.book, _ = assocedit.modify(acct.book, "user", {"name": "u"}, {"MaxSubmitJobs": "3"}, "c")
    assert acct.admit(array, []).account == "a"
    with pytest.raises(Exception, match="AssocMaxSubmitJobLimit"):
        acct.admit(array, [_job(1, "a")])
    loose = _accounting(())
    assert loose.admit(_job(1, "anything"), []).account == "anything"


@given(
    max_jobs=st.integers(0, 4),
    cap=st.integers(0, 6),
    running=st.lists(st.integers(0, 3), max_size=4),
    pending=st.lists(st.tuples(st.integers(0, 3), st.integers(-5, 5)), max_size=10),
)
def test_one_pass_never_starts_more_than_the_limits_allow(
    max_jobs: int, cap: int, running: list[int], pending: list[tuple[int, int]]
) -> None:
    acct = _accounting(("limits",))
    acct.book, _ = assocedit.add_accounts(acct.book, ["a"], {"GrpTRES": f"gres/gpu={cap}"}, "c")
    acct.book, _ = assocedit.add_users(
        acct.book, ["u"], {"Account": "a", "MaxJobs": str(max_jobs)}, "c"
    )
    holding = [_job(100 + i, "a", g, JobState.RUNNING) for i, g in enumerate(running)]
    jobs = {j.job_id: j for j in holding}
    entries = []
    for i, (gpus, prio) in enumerate(pending):
        job = _job(i + 1, "a", gpus)
        jobs[job.job_id] = job
        entries.append(PendingJob(job.job_id, "p", prio, job.submit_time, job.request, 60))
    out = acct.hold_back(entries, jobs, holding)
    free = [e for e in out if not e.blocked]
    assert len(holding) + len(free) <= max(max_jobs, len(holding))
    assert sum(running) + sum(e.request.min_gpus for e in free) <= max(cap, sum(running))
    for entry in out:
        assert entry.blocked in ("", "AssocMaxJobsLimit", "AssocGrpGRES")


def test_partition_access_by_account_and_group() -> None:
    part = PartitionConfig("p", allow_accounts=("physics",), allow_groups=("wheel",))
    job = _job(1, "physics")
    check_access(job, part, ("wheel",))
    with pytest.raises(Exception, match="Invalid account or account/partition"):
        check_access(_job(1, "chem"), part, ("wheel",))
    with pytest.raises(Exception, match="User's group not permitted"):
        check_access(replace(job, uid=1000), part, ("users",))
    check_access(job, part, ("users",))  # root is never refused for its groups
    check_access(_job(1, "chem"), PartitionConfig("open"), ())


def test_qos_table_and_its_priority_factor() -> None:
    acct = _accounting(("associations", "limits", "qos"))
    assert list(acct.book.qos) == ["normal"]
    table, lines = qosops.add(acct.book.qos, ["High"], {"Priority": "100"})
    assert lines == [" Adding QOS(s)", "  high", " Settings", "  Description    = high",
                     "  Priority                 = 100"]  # fmt: skip
    table, _ = qosops.modify(table, {"normal"}, {"Priority": "25", "MaxJobsPerUser": "1"})
    acct.book = replace(acct.book, qos=table)
    assert acct.qos_factor(replace(_job(1, "a"), qos="high")) == 1.0
    assert acct.qos_factor(_job(1, "a")) == 0.25
    with pytest.raises(AcctError, match="Nothing new added"):
        qosops.add(table, ["normal"], {})
    with pytest.raises(AcctError, match="Invalid value"):
        qosops.modify(table, {"normal"}, {"Priority": "x"})
    with pytest.raises(AcctError, match="Job\\(s\\) active"):
        qosops.delete(table, {"high"}, {"high"})
    assert list(qosops.delete(table, {"high"}, set())[0]) == ["normal"]
    acct.book, _ = assocedit.add_accounts(acct.book, ["a"], {}, "c")
    acct.book, _ = assocedit.add_users(acct.book, ["u"], {"Account": "a"}, "c")
    with pytest.raises(Exception, match="Invalid qos specification"):
        acct.admit(replace(_job(1, "a"), qos="nosuch"), [])


def test_qos_max_jobs_per_user_holds_later_jobs_in_priority_order() -> None:
    acct = _accounting(("limits",))
    acct.book, _ = assocedit.add_accounts(acct.book, ["a"], {}, "c")
    acct.book, _ = assocedit.add_users(acct.book, ["u"], {"Account": "a"}, "c")
    table, _ = qosops.modify(acct.book.qos, {"normal"}, {"MaxJobsPerUser": "2"})
    acct.book = replace(acct.book, qos=table)
    running = [_job(10, "a", state=JobState.RUNNING)]
    pending = [_job(i, "a") for i in (1, 2, 3)]
    jobs = {j.job_id: j for j in running + pending}
    entries = [
        PendingJob(j.job_id, "p", prio, j.submit_time, j.request, 60)
        for j, prio in zip(pending, (1, 3, 2), strict=True)
    ]
    out = acct.hold_back(entries, jobs, running)
    assert [e.blocked for e in out] == ["QOSMaxJobsPerUserLimit", "", "QOSMaxJobsPerUserLimit"]
