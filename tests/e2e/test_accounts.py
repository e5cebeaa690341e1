"""Accounts, fair share and association limits, through sacctmgr, sbatch, sshare and sprio.

The cluster runs ``priority/multifactor`` with ``AccountingStorageEnforce=
associations,limits``; every job is root's, charged to one of root's
associations (accounts ``physics`` and ``chem``), so fair share compares
associations of one user as it would compare users.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

EXTRA_CONF = """\
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=100
PriorityWeightPartition=1000
PriorityDecayHalfLife=1-0
AccountingStorageEnforce=associations,limits
PartitionName=restricted Nodes=n[1-2] MaxTime=30 DefaultTime=10 MaxNodes=1 AllowAccounts=physics
"""


@pytest.fixture
def acct_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A two-node cluster with fair share and enforced associations (GPUs bill 2 each)."""
    cluster = TestCluster(tmp_path, ClusterSpec(kill_wait=2, min_job_age=600))
    cluster.local.write_config(cluster.spec)
    conf = Path(cluster.local.conf_path)
    text = conf.read_text().replace(
        "Default=YES MaxTime=INFINITE State=UP",
        'Default=YES MaxTime=INFINITE State=UP TRESBillingWeights="CPU=1.0,GRES/gpu=2.0"',
    )
    conf.write_text(text + EXTRA_CONF)
    failed_before = request.session.testsfailed
    cluster.start()
    try:
        yield cluster
    finally:
        if request.session.testsfailed > failed_before:
            print(cluster.logs())
        cluster.stop()


def _ok(cluster: TestCluster, *argv: str) -> str:
    result = cluster.run(*argv)
    assert result.rc == 0, (argv, result)
    return result.out


def _tree(cluster: TestCluster) -> None:
    _ok(cluster, "sacctmgr", "-i", "add", "account", "physics", "Fairshare=30")
    _ok(cluster, "sacctmgr", "-i", "add", "account", "chem", "Fairshare=10")
    _ok(cluster, "sacctmgr", "-i", "add", "user", "root", "Account=physics,chem")


@pytest.mark.timeout(120)
def test_sacctmgr_changes_are_shown_and_survive_a_controller_crash(
    acct_cluster: TestCluster,
) -> None:
    cluster = acct_cluster
    out = _ok(cluster, "sacctmgr", "-i", "add", "account", "physics", "Description=phys",
              "Organization=sci", "Fairshare=30")  # fmt: skip
    assert out.splitlines()[:6] == [
        " Adding Account(s)", "  physics", " Settings", "  Description     = phys",
        "  Organization    = sci", " Associations",
    ]  # fmt: skip
    _ok(cluster, "sacctmgr", "-i", "add", "account", "theory", "parent=physics", "fairshare=10")
    out = _ok(cluster, "sacctmgr", "-i", "add", "user", "bob", "account=theory", "MaxJobs=2",
              "MaxSubmitJobs=4", "GrpTRES=gres/gpu=4")  # fmt: skip
    assert "  U = bob       A = theory     C = local     " in out.splitlines()
    assert out.splitlines()[-3:] == [
        "  GrpTRES       = gres/gpu=4", "  MaxJobs       = 2", "  MaxSubmitJobs = 4",
    ]  # fmt: skip
    again = cluster.run("sacctmgr", "-i", "add", "account", "physics")
    assert (again.rc, again.out) == (1, " Nothing new added.\n")
    bad = cluster.run("sacctmgr", "-i", "add", "user", "carol", "account=nosuch")
    assert bad.rc == 1 and bad.err.startswith(" This account 'nosuch' doesn't exist.")
    bad = cluster.run("sacctmgr", "-i", "add", "account", "y", "fairshare=abc")
    assert bad.rc == 1 and "Invalid value for FairShare (abc)" in bad.err
    modified = _ok(cluster, "sacctmgr", "-i", "modify", "user", "bob", "set", "MaxJobs=3")
    assert modified.splitlines()[0] == " Modified user associations..."
    cluster.kill_controller()
    cluster.start()
    tree = _ok(cluster, "sacctmgr", "show", "assoc", "tree", "format=account,user,fairshare")
    assert tree.splitlines() == [
        "Account                    User     Share ",
        "-------------------- ---------- --------- ",
        "root                                    1 ",
        " root                      root         1 ",
        " physics                               30 ",
        "  theory                               10 ",
        "   theory                   bob         1 ",
    ]
    parsable = _ok(cluster, "sacctmgr", "-P", "-n", "show", "assoc",
                   "format=account,user,maxjobs,maxsubmit,grptres", "user=bob")  # fmt: skip
    assert parsable == "theory|bob|3|4|gres/gpu=4\n"
    users = _ok(cluster, "sacctmgr", "show", "user")
    assert users.splitlines()[2:] == [
        "       bob     theory      None ",
        "      root       root Administ+ ",
    ]
    accounts = _ok(cluster, "sacctmgr", "-n", "-P", "show", "account")
    assert accounts.splitlines() == [
        "physics|phys|sci", "root|default root account|root", "theory|theory|physics",
    ]  # fmt: skip
    deleted = _ok(cluster, "sacctmgr", "-i", "delete", "account", "physics")
    assert deleted == " Deleting accounts...\n  physics\n"
    left = _ok(cluster, "sacctmgr", "-n", "-P", "show", "assoc", "format=account,user")
    assert left.splitlines() == ["root|", "root|root"]
    gone = cluster.run("sacctmgr", "-i", "delete", "user", "bob")
    assert (gone.rc, gone.out) == (1, " Nothing deleted\n")


@pytest.mark.timeout(120)
def test_enforced_associations_check_the_account_and_max_submit(
    acct_cluster: TestCluster,
) -> None:
    cluster = acct_cluster
    _tree(cluster)
    config = _ok(cluster, "scontrol", "show", "config").splitlines()
    assert "AccountingStorageEnforce = associations,limits" in config
    bad = cluster.run("sbatch", "-A", "nosuch", "--wrap=true")
    assert bad.rc == 1
    assert bad.err == (
        "sbatch: error: Batch job submission failed: "
        "Invalid account or account/partition combination specified\n"
    )
    default = cluster.sbatch("--hold", "--wrap=true")
    assert cluster.job(default)["Account"] == "root"
    _ok(cluster, "sacctmgr", "-i", "modify", "user", "root", "where", "account=chem", "set",
        "MaxSubmitJobs=2")  # fmt: skip
    jobs = [cluster.sbatch("-A", "chem", "--hold", "--wrap=true") for _ in range(2)]
    assert {cluster.job(j)["Account"] for j in jobs} == {"chem"}
    over = cluster.run("sbatch", "-A", "chem", "--hold", "--wrap=true")
    assert over.rc == 1
    assert over.err == (
        "sbatch: error: AssocMaxSubmitJobLimit\n"
        "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
        "(job submit limit, user's size and/or time limits)\n"
    )
    assert len(_ok(cluster, "squeue", "-h", "-A", "chem").splitlines()) == 2
    busy = cluster.run("sacctmgr", "-i", "delete", "account", "chem")
    assert busy.rc == 1 and "Job(s) active" in busy.err


@pytest.mark.timeout(120)
def test_max_jobs_and_grp_gpus_keep_jobs_pending_with_slurms_reasons(
    acct_cluster: TestCluster,
) -> None:
    cluster = acct_cluster
    _tree(cluster)
    _ok(cluster, "sacctmgr", "-i", "modify", "user", "root", "where", "account=physics", "set",
        "MaxJobs=1")  # fmt: skip
    _ok(cluster, "sacctmgr", "-i", "modify", "account", "chem", "set", "GrpTRES=gres/gpu=2")
    first, second = (cluster.sbatch("-A", "physics", "--wrap=sleep 300") for _ in range(2))
    gpu_a = cluster.sbatch("-A", "chem", "--gpus=2", "--wrap=sleep 300")
    gpu_b = cluster.sbatch("-A", "chem", "--gpus=1", "--wrap=sleep 300")
    cluster.wait_state(first, "RUNNING")
    cluster.wait_state(gpu_a, "RUNNING")
    wait_until(lambda: cluster.job(second)["Reason"] == "AssocMaxJobsLimit", 20, "MaxJobs")
    wait_until(lambda: cluster.job(gpu_b)["Reason"] == "AssocGrpGRES", 20, "GrpTRES")
    assert cluster.state(second) == "PENDING" and cluster.state(gpu_b) == "PENDING"
    _ok(cluster, "scancel", str(first), str(gpu_a))
    cluster.wait_state(second, "RUNNING")
    cluster.wait_state(gpu_b, "RUNNING")
    _ok(cluster, "scancel", str(second), str(gpu_b))


@pytest.mark.timeout(120)
def test_usage_is_charged_and_fair_share_ranks_the_lighter_user_first(
    acct_cluster: TestCluster,
) -> None:
    cluster = acct_cluster
    _tree(cluster)
    ran = cluster.sbatch("-A", "chem", "-c", "2", "--gpus=1", "--wrap=sleep 2")
    cluster.wait_state(ran, "COMPLETED")
    rows = _ok(cluster, "sshare", "-a", "-P", "-l").splitlines()
    assert rows[0] == (
        "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS"
        "|GrpTRESMins|TRESRunMins"
    )
    by_name = {(r.split("|")[0], r.split("|")[1]): r.split("|") for r in rows[1:]}
    chem = by_name[("  chem", "root")]
    physics = by_name[("  physics", "root")]
    # 2 CPUs + 1 GPU billed at 2.0 for about 2 s: about 8 billing-seconds.
    assert 6 <= int(chem[4]) <= 12, chem
    assert by_name[(" chem", "")][3] == "0.243902"  # 10 / (1 + 10 + 30)
    assert float(physics[7]) > float(chem[7]), (physics, chem)
    assert physics[8] == "inf"
    fixed = _ok(cluster, "sshare").splitlines()
    assert fixed[:2] == [
        "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage"
        "  FairShare ",
        "-------------------- ---------- ---------- ----------- ----------- -------------"
        " ---------- ",
    ]
    assert re.fullmatch(r"root {42}0\.000000 +\d+ +1\.000000 {12}", fixed[2]), fixed[2]
    assert [(line[:20].rstrip(), line[21:31].strip()) for line in fixed[3:]] == [
        (" root", "root"), (" chem", ""), ("  chem", "root"), (" physics", ""),
        ("  physics", "root"),
    ]  # fmt: skip
    # Usage is stored: a controller killed and restarted still knows it.
    cluster.kill_controller()
    cluster.start()
    again = _ok(cluster, "sshare", "-P", "-n", "-A", "chem", "-u", "root").splitlines()
    assert again[0].split("|")[0] == "chem" and int(again[0].split("|")[4]) >= int(chem[4])
    light = cluster.sbatch("-A", "physics", "--begin=now+3600", "--wrap=true")
    heavy = cluster.sbatch("-A", "chem", "--begin=now+3600", "--wrap=true")
    prio = _ok(cluster, "sprio", "-o", "%.15i %.10F %.10J %.10P", "-j", f"{light},{heavy}")
    lines = prio.splitlines()
    assert lines[0] == "          JOBID  FAIRSHARE    JOBSIZE  PARTITION"
    values = {int(line.split()[0]): line.split()[1:] for line in lines[1:]}
    assert int(values[light][0]) > int(values[heavy][0])
    # One node of two and one CPU of sixteen: (1/2 + 1/16) / 2 = 0.28125, times 100.
    assert values[light][1:] == ["28", "1000"]
    nice = cluster.sbatch("-A", "physics", "--begin=now+3600", "--nice=500", "--wrap=true")
    long = _ok(cluster, "sprio", "-l", "-j", f"{light},{nice}").splitlines()
    assert long[0].split() == [
        "JOBID", "PARTITION", "USER", "PRIORITY", "SITE", "AGE", "ASSOC", "FAIRSHARE",
        "JOBSIZE", "PARTITION", "QOS", "NICE", "TRES",
    ]  # fmt: skip
    cells = {int(line.split()[0]): line.split() for line in long[1:]}
    assert cells[nice][11] == "500"
    assert int(cells[light][3]) - int(cells[nice][3]) == 500
    weights = _ok(cluster, "sprio", "-w").splitlines()
    # As real Slurm 22.05 prints them with these weights.
    assert weights == [
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE"
        "  PARTITION",
        "        Weights                               1       1000      10000        100"
        "       1000",
    ]


@pytest.mark.timeout(120)
def test_partition_limits_refuse_or_hold_jobs_as_slurm_does(acct_cluster: TestCluster) -> None:
    cluster = acct_cluster
    _tree(cluster)
    refused = cluster.run("sbatch", "-p", "restricted", "-A", "chem", "--wrap=true")
    assert (refused.rc, refused.err) == (
        1,
        "sbatch: error: Batch job submission failed: "
        "Invalid account or account/partition combination specified\n",
    )
    default_time = cluster.sbatch("-p", "restricted", "-A", "physics", "--hold", "--wrap=true")
    assert cluster.job(default_time)["TimeLimit"] == "00:10:00"
    too_long = cluster.sbatch("-p", "restricted", "-A", "physics", "-t", "60", "--wrap=true")
    too_wide = cluster.sbatch("-p", "restricted", "-A", "physics", "-N", "2", "--wrap=true")
    wait_until(lambda: cluster.job(too_long)["Reason"] == "PartitionTimeLimit", 20, "time")
    wait_until(lambda: cluster.job(too_wide)["Reason"] == "PartitionNodeLimit", 20, "nodes")
    fits = cluster.sbatch("-p", "restricted", "-A", "physics", "-t", "30", "--wrap=true")
    cluster.wait_state(fits, "COMPLETED")
    assert cluster.state(too_long) == "PENDING" and cluster.state(too_wide) == "PENDING"


@pytest.mark.timeout(120)
def test_qos_limits_and_sacctmgr_show_qos(acct_cluster: TestCluster) -> None:
    cluster = acct_cluster
    _tree(cluster)
    out = _ok(cluster, "sacctmgr", "-i", "add", "qos", "high", "Priority=100")
    assert out == (
        " Adding QOS(s)\n  high\n Settings\n  Description    = high\n"
        "  Priority                 = 100\n"
    )
    modified = _ok(cluster, "sacctmgr", "-i", "modify", "qos", "normal", "set",
                   "MaxJobsPerUser=1", "MaxSubmitJobsPerUser=3")  # fmt: skip
    assert modified == " Modified qos...\n  normal\n"
    shown = _ok(cluster, "sacctmgr", "show", "qos", "format=name,priority,maxjobspu,maxsubmitpu")
    # As real Slurm 22.05 prints it after the same commands.
    assert shown.splitlines() == [
        "      Name   Priority MaxJobsPU MaxSubmitPU ",
        "---------- ---------- --------- ----------- ",
        "    normal          0         1           3 ",
        "      high        100                       ",
    ]
    jobs = [cluster.sbatch("-A", "physics", "--wrap=sleep 300") for _ in range(3)]
    over = cluster.run("sbatch", "-A", "physics", "--wrap=sleep 300")
    assert over.rc == 1
    assert over.err.startswith("sbatch: error: QOSMaxSubmitJobPerUserLimit\n")
    cluster.wait_state(jobs[0], "RUNNING")
    for job in jobs[1:]:
        wait_until(
            lambda job=job: cluster.job(job)["Reason"] == "QOSMaxJobsPerUserLimit", 20, "QOS"
        )
    other = cluster.sbatch("-A", "physics", "--qos=high", "--wrap=true")
    cluster.wait_state(other, "COMPLETED")
    assert cluster.job(other)["QOS"] == "high"
    _ok(cluster, "scancel", *map(str, jobs))
    busy_free = cluster.run("sacctmgr", "-i", "delete", "qos", "high")
    assert (busy_free.rc, busy_free.out) == (0, " Deleting QOS(s)...\n  high\n")
