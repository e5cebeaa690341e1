"""Fair Tree, decayed usage, billing and the multifactor priority against worked examples.

Worked examples come from real Slurm 22.05 (sshare's NormShares and sprio's
JOBSIZE on the reference cluster: two nodes of 8 CPUs) and from the Fair
Tree documentation's rules (Level FS = S / U, infinite without usage; a
higher Level FS puts every user below it above every user below a sibling).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctld.accounting import assocedit
from ctld.accounting.fairshare import billing, decayed, fair_tree, level_fs, parse_billing_weights
from ctld.ranking import weights_of
from ctld.sched.priority import ClusterSize, PriorityWeights, job_factors, job_priority
from minislurm.accounts import Book, initial_book
from minislurm.config import load_slurm_conf
from minislurm.errors import ConfigError
from minislurm.model import HOLD_USER, Job, ResourceRequest
from minislurm.states import JobState


def _book(accounts: list[tuple[str, str, int]], users: list[tuple[str, str, int]]) -> Book:
    book = initial_book()
    for name, parent, shares in accounts:
        book, _ = assocedit.add_accounts(
            book, [name], {"Parent": parent, "Fairshare": str(shares)}, "c"
        )
    for name, account, shares in users:
        book, _ = assocedit.add_users(
            book, [name], {"Account": account, "Fairshare": str(shares)}, "c"
        )
    return book


def test_norm_shares_are_shares_among_siblings_as_slurm_prints_them() -> None:
    book = _book(
        [("physics", "root", 30), ("chem", "root", 10)], [("a", "physics", 1), ("b", "chem", 3)]
    )
    rows = {(r.assoc.account, r.assoc.user): r for r in fair_tree(book, {})}
    # sshare on Slurm 22.05 with this tree: 0.024390, 0.243902, 0.731707, 1.000000.
    assert f"{rows[('root', 'root')].norm_shares:.6f}" == "0.024390"
    assert f"{rows[('chem', '')].norm_shares:.6f}" == "0.243902"
    assert f"{rows[('physics', '')].norm_shares:.6f}" == "0.731707"
    assert rows[("chem", "b")].norm_shares == 1.0
    assert [(r.depth, r.assoc.key) for r in fair_tree(book, {})] == [
        (0, ("root", "")), (1, ("root", "root")), (1, ("chem", "")), (2, ("chem", "b")),
        (1, ("physics", "")), (2, ("physics", "a")),
    ]  # fmt: skip


def test_level_fs_is_shares_over_usage_and_infinite_without_usage() -> None:
    assert level_fs(0.5, 0.25) == 2.0
    assert level_fs(0.5, 0.0) == math.inf
    assert level_fs(0.0, 0.0) == 0.0


def test_fair_tree_worked_example() -> None:
    # Accounts A (shares 1) and B (shares 1) under root; A has users a1, a2, B has b1.
    # Usage: a1 30, a2 10, b1 20.  Among root's children (root's own user has no usage):
    #   U(A) = 40/60, U(B) = 20/60; S(A) = S(B) = 1/3 (root user has 1 share too).
    #   LF(root user) = inf, LF(A) = (1/3)/(2/3) = 0.5, LF(B) = (1/3)/(1/3) = 1.
    # Under A: S = 1/2 each, U(a1) = 3/4, U(a2) = 1/4: LF(a1) = 2/3, LF(a2) = 2.
    # Depth first by LF: root (rank 4), then B: b1 (3), then A: a2 (2), a1 (1); 4 users.
    book = _book(
        [("a", "root", 1), ("b", "root", 1)], [("a1", "a", 1), ("a2", "a", 1), ("b1", "b", 1)]
    )
    rows = {
        r.assoc.key: r for r in fair_tree(book, {("a", "a1"): 30, ("a", "a2"): 10, ("b", "b1"): 20})
    }
    assert rows[("a", "")].level_fs == pytest.approx(0.5)
    assert rows[("b", "")].level_fs == pytest.approx(1.0)
    assert rows[("a", "a1")].level_fs == pytest.approx(2 / 3)
    assert rows[("a", "a2")].level_fs == pytest.approx(2.0)
    assert rows[("a", "")].effective_usage == pytest.approx(2 / 3)
    assert rows[("a", "")].raw_usage == 40
    assert rows[("root", "")].raw_usage == 60
    assert rows[("a", "a1")].norm_usage == pytest.approx(0.5)
    factors = {k: r.fairshare for k, r in rows.items() if k[1]}
    assert factors == {
        ("root", "root"): 1.0,
        ("b", "b1"): 0.75,
        ("a", "a2"): 0.5,
        ("a", "a1"): 0.25,
    }


def test_fair_tree_matches_real_slurm() -> None:
    # sshare -a -l on Slurm 22.05 (Fair Tree), after jobs of root (in root and physics) and
    # daemon (in chem) ran: RawUsage root 1972, chem/daemon 98, physics/root about 2.
    #   Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS
    #    root|root|1|0.024390|1972|0.951759|0.951759|0.250000|0.025626
    #    chem||10|0.243902|98|0.047283|0.047283||5.158340
    #     chem|daemon|3|1.000000|98|0.047283|1.000000|0.500000|1.000000
    #    physics||30|0.731707|1|0.000958|0.000958||763.896848
    #     physics|nobody|1|0.500000|0|0.000000|0.000000|1.000000|inf
    #     physics|root|1|0.500000|1|0.000958|1.000000|0.750000|0.500000
    book = _book(
        [("chem", "root", 10), ("physics", "root", 30)],
        [("daemon", "chem", 3), ("nobody", "physics", 1), ("root", "physics", 1)],
    )
    usage = {("root", "root"): 1972.0, ("chem", "daemon"): 98.0, ("physics", "root"): 1.985}
    rows = {r.assoc.key: r for r in fair_tree(book, usage)}
    factors = {k: r.fairshare for k, r in rows.items() if k[1]}
    assert factors == {
        ("root", "root"): 0.25, ("chem", "daemon"): 0.5, ("physics", "nobody"): 1.0,
        ("physics", "root"): 0.75,
    }  # fmt: skip
    expected = {
        ("root", "root"): (0.024390, 0.951759, 0.951759, 0.025626),
        ("chem", ""): (0.243902, 0.047283, 0.047283, 5.158340),
        ("chem", "daemon"): (1.0, 0.047283, 1.0, 1.0),
        ("physics", ""): (0.731707, 0.000958, 0.000958, 763.896848),
        ("physics", "root"): (0.5, 0.000958, 1.0, 0.5),
    }
    for key, (shares, norm, effective, level) in expected.items():
        row = rows[key]
        got = (row.norm_shares, row.norm_usage, row.effective_usage, row.level_fs)
        assert got == pytest.approx((shares, norm, effective, level), rel=2e-3), key
    assert rows[("physics", "nobody")].level_fs == math.inf


def test_ties_share_ranks_down_the_tree() -> None:
    # Fair Tree's rules for ties: tied sibling users share a rank, tied sibling accounts
    # have their children merged, a user tied with an account shares its rank with that
    # account's highest-ranked user.
    book = _book([("a", "root", 1), ("b", "root", 1)], [("x", "a", 1), ("y", "b", 1)])
    usage = {("a", "x"): 10.0, ("b", "y"): 10.0, ("root", "root"): 10.0}
    rows = {r.assoc.key: r for r in fair_tree(book, usage)}
    factors = {k: r.fairshare for k, r in rows.items() if k[1]}
    assert factors == {("root", "root"): 1.0, ("a", "x"): 1.0, ("b", "y"): 1.0}
    # root's user, a and b tie (Level FS 1), so a's and b's users are ranked together
    # below rank 4 by their own Level FS: x 0.5/0.25 = 2, y 1/1 = 1, x2 0.5/0.75 = 2/3;
    # x, the first of them, shares rank 4 with root's user.
    book = _book(
        [("a", "root", 1), ("b", "root", 1)], [("x", "a", 1), ("x2", "a", 1), ("y", "b", 1)]
    )
    usage = {("a", "x"): 5.0, ("a", "x2"): 15.0, ("b", "y"): 20.0, ("root", "root"): 20.0}
    rows = {r.assoc.key: r for r in fair_tree(book, usage)}
    factors = {k: r.fairshare for k, r in rows.items() if k[1]}
    assert factors == {
        ("root", "root"): 1.0, ("a", "x"): 1.0, ("b", "y"): 0.5, ("a", "x2"): 0.25,
    }  # fmt: skip


def test_without_usage_every_user_ranks_first() -> None:
    book = _book([("p", "root", 30), ("t", "p", 10)], [("alice", "p", 5), ("bob", "t", 1)])
    assert {r.fairshare for r in fair_tree(book, {}) if r.assoc.user} == {1.0}


@st.composite
def trees(draw: st.DrawFn) -> tuple[Book, dict[tuple[str, str], float]]:
    """Random trees of up to three levels of accounts, with users and usage."""
    accounts: list[tuple[str, str, int]] = []
    parents = ["root"]
    for i in range(draw(st.integers(1, 6))):
        parent = draw(st.sampled_from(parents))
        accounts.append((f"acct{i}", parent, draw(st.integers(1, 50))))
        parents.append(f"acct{i}")
    users = []
    for i in range(draw(st.integers(1, 8))):
        users.append((f"u{i}", draw(st.sampled_from(parents[1:])), draw(st.integers(1, 20))))
    book = _book(accounts, users)
    usage = {
        (acct, name): float(draw(st.sampled_from([0, 1, 5, 100, 12345]))) for name, acct, _ in users
    }
    return book, usage


def _users_under(book: Book, account: str) -> list[tuple[str, str]]:
    return [a.key for a in book.assocs.values() if a.user and (a.account == account or any(
        p.account == account for p in book.ancestors(a)))]  # fmt: skip


@given(trees())
def test_a_sibling_with_higher_level_fs_ranks_all_its_users_higher(
    case: tuple[Book, dict[tuple[str, str], float]],
) -> None:
    book, usage = case
    rows = {r.assoc.key: r for r in fair_tree(book, usage)}
    factors = {k: r.fairshare for k, r in rows.items() if k[1]}
    assert all(0 < f <= 1 for f in factors.values())
    assert max(factors.values()) == 1.0
    for account in book.accounts:
        kids = book.children(account)
        for x in kids:
            for y in kids:
                if rows[x.key].level_fs <= rows[y.key].level_fs or math.isclose(
                    rows[x.key].level_fs, rows[y.key].level_fs
                ):
                    continue
                above = [x.key] if x.user else _users_under(book, x.account)
                below = [y.key] if y.user else _users_under(book, y.account)
                if above and below:
                    assert min(factors[k] for k in above) > max(factors[k] for k in below)


def test_usage_halves_every_half_life() -> None:
    assert decayed(100.0, 3600.0, 3600.0) == pytest.approx(50.0)
    assert decayed(100.0, 7200.0, 3600.0) == pytest.approx(25.0)
    assert decayed(100.0, 10.0, 0.0) == 100.0


def test_billing_weights_gpus_and_defaults_to_cpus() -> None:
    weights = parse_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
    assert billing(4, 8192, 2, 1, weights) == pytest.approx(4 + 0.25 * 8 + 2 * 2)
    assert billing(4, 8192, 2, 1, {}) == 4.0
    with pytest.raises(ValueError):
        parse_billing_weights("CPU")


def _job(nodes: int = 1, cpus: int = 1, nice: int = 0, submit: float = 0.0) -> Job:
    req = ResourceRequest(min_nodes=nodes, max_nodes=nodes, ntasks=cpus)
    return Job(1, "j", 0, 0, "root", "root", "gpu", JobState.PENDING, req, submit, nice=nice)


def test_job_size_and_partition_factors_match_slurm() -> None:
    weights = PriorityWeights(age=1000, job_size=100, partition=1000, fairshare=10000)
    size = ClusterSize(nodes=2, cpus=16, max_job_factor=1)
    factors = job_factors(_job(), 0.0, weights, size, 1, 0.0)
    # sprio on Slurm 22.05, two nodes of 8 CPUs, a 1-CPU job: JOBSIZE 28, PARTITION 1000.
    assert factors.job_size == 0.28125
    assert factors.weighted(weights)["JOBSIZE"] == pytest.approx(28.125)
    assert job_priority(_job(), 0.0, weights, size) == 1028


def test_priority_sums_weighted_factors_minus_nice() -> None:
    weights = PriorityWeights(age=1000, fairshare=10000, max_age=1000.0)
    size = ClusterSize(nodes=2, cpus=16)
    job = _job(nice=100, submit=0.0)
    # age 500/1000 -> 500; fair share 0.25 -> 2500; minus nice 100.
    assert job_priority(job, 500.0, weights, size, 1, 0.25) == 500 + 2500 - 100
    assert job_priority(job, 5000.0, weights, size, 1, 0.0) == 1000 - 100
    favor = PriorityWeights(job_size=100, favor_small=True)
    assert job_priority(_job(), 0.0, favor, size) == 71  # (1 - 0.28125) * 100


def test_priority_basic_numbers_jobs_down_by_submission_as_slurm_does(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=8\nPriorityWeightAge=1000\n")
    basic = weights_of(load_slurm_conf(str(conf)))  # PriorityType's default: weights ignored
    size = ClusterSize(nodes=2, cpus=16)
    # Slurm 22.05, fresh controller: job 1 4294901759, job 2 with --nice=10 4294901748,
    # array job 3 4294901757 for each of its tasks.
    assert job_priority(_job(), 1e6, basic, size) == 4294901759
    nice = replace(_job(nice=10), job_id=2)
    assert job_priority(nice, 0.0, basic, size) == 4294901748
    task = replace(_job(), job_id=5, array_job_id=3, array_task_id=1)
    assert job_priority(task, 0.0, basic, size) == 4294901757
    assert job_priority(replace(_job(), hold=HOLD_USER), 0.0, basic, size) == 0
    conf.write_text("NodeName=n1 CPUs=8\nPriorityType=priority/multifactor\nPriorityWeightAge=1\n")
    assert job_priority(_job(), 0.0, weights_of(load_slurm_conf(str(conf))), size) == 1


def test_slurm_conf_reads_billing_weights_and_enforcement(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    base = "NodeName=n1 CPUs=8\nAccountingStorageEnforce=associations,limits\n"
    conf.write_text(base + 'PartitionName=gpu Nodes=n1 TRESBillingWeights="CPU=1.0,GRES/gpu=2.0"\n')
    loaded = load_slurm_conf(str(conf))
    assert loaded.accounting_storage_enforce == ("associations", "limits")
    assert loaded.partitions[0].tres_billing_weights == "CPU=1.0,GRES/gpu=2.0"
    conf.write_text(base + "PartitionName=gpu Nodes=n1 TRESBillingWeights=CPU=lots\n")
    with pytest.raises(ConfigError, match="TRESBillingWeights"):
        load_slurm_conf(str(conf))
