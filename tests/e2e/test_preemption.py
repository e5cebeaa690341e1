"""Preemption on a live cluster: an urgent job takes the GPUs back from low-priority work.

Two partitions over the same two nodes, ``lo`` (PriorityTier=1) and ``hi``
(PriorityTier=10), under ``PreemptType=preempt/partition_prio`` and
``PreemptMode=REQUEUE``; ``locancel`` is a low partition whose own
PreemptMode is CANCEL. A checkpointing training run in ``lo`` holds every
GPU; a job submitted to ``hi`` starts within seconds, the training run is
requeued (PREEMPTED in its history), runs again and resumes from its
checkpoint. Cancelled victims (CANCEL, or ``--no-requeue`` under REQUEUE)
end PREEMPTED, as Slurm shows them.

Imports the e2e conftest and the test helpers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from checkpointing import ENV, JOB, STEPS, undisturbed_result, wait_for_checkpoints
from conftest import TestCluster, run_cluster
from helpers import wait_until

ALL_GPUS = ("-N2", "--ntasks=2", "--gres=gpu:8")
CONF = """PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=lo Nodes=n[1-2] PriorityTier=1 State=UP
PartitionName=locancel Nodes=n[1-2] PriorityTier=1 PreemptMode=CANCEL State=UP
PartitionName=hi Nodes=n[1-2] PriorityTier=10 State=UP
"""


@pytest.fixture(scope="module")
def preempt_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Two nodes of 8 GPUs; partitions lo, locancel and hi; preemption by partition tier."""
    yield from run_cluster(tmp_path_factory.mktemp("preempt"), request, conf_lines=CONF)


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_urgent_job_preempts_training_which_resumes_from_its_checkpoint(
    preempt_cluster: TestCluster, tmp_path: Path
) -> None:
    cluster = preempt_cluster
    expected = undisturbed_result(tmp_path / "reference")
    ckpt = cluster.workdir / "ckpt"
    cluster.env = {**cluster.env, **ENV}
    low = cluster.sbatch("-p", "lo", *ALL_GPUS, str(JOB), str(ckpt), str(STEPS))
    cluster.wait_state(low, "RUNNING")
    out = cluster.workdir / f"ckpt-train-{low}.out"
    wait_for_checkpoints(out)

    high = cluster.sbatch("-p", "hi", *ALL_GPUS, "--wrap", "sleep 3")
    started = cluster.wait_state(high, "RUNNING", "COMPLETED", timeout=15)
    assert started["NodeList"] == "n[1-2]"
    requeued = wait_until(
        lambda: (j := cluster.job(low))["Restarts"] == "1" and j, 10, "the low job requeued"
    )
    if requeued["JobState"] == "PENDING":
        assert requeued["Reason"] in ("BeginTime", "Resources", "Priority"), requeued
    assert "DUE TO PREEMPTION" in out.read_text()

    assert cluster.wait_state(high, timeout=30)["JobState"] == "COMPLETED"
    done = cluster.wait_state(low, "COMPLETED", "FAILED", "CANCELLED", timeout=60)
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "1")
    text = out.read_text()
    resumed = [line for line in text.splitlines() if line.startswith("restart_count=1")]
    assert len(resumed) == 1, text
    assert int(resumed[0].rpartition("=")[2]) >= 15, text  # from a checkpoint, not step 0
    assert text.strip().splitlines()[-1] == expected

    history = cluster.run("sacct", "-D", "-X", "-n", "-P", "-j", str(low), "-o", "State,Restarts")
    assert history.out.split() == ["PREEMPTED|0", "COMPLETED|1"], history.out


@pytest.mark.slow
@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    "low_args",
    [("-p", "locancel"), ("-p", "lo", "--no-requeue")],
    ids=["PreemptMode=CANCEL", "no-requeue"],
)
def test_a_victim_that_is_not_requeued_ends_preempted(
    preempt_cluster: TestCluster, low_args: tuple[str, ...]
) -> None:
    cluster = preempt_cluster
    low = cluster.sbatch(*low_args, *ALL_GPUS, "--wrap", "sleep 300")
    cluster.wait_state(low, "RUNNING")
    high = cluster.sbatch("-p", "hi", *ALL_GPUS, "--wrap", "sleep 1")
    cluster.wait_state(high, "RUNNING", "COMPLETED", timeout=15)
    ended = cluster.wait_state(low, "PREEMPTED", "CANCELLED", "COMPLETED", timeout=10)
    shown = (ended["JobState"], ended["Restarts"], ended["Reason"], ended["ExitCode"])
    assert shown == ("PREEMPTED", "0", "None", "0:15")
    sacct = cluster.run("sacct", "-X", "-n", "-P", "-j", str(low), "-o", "State")
    assert sacct.out.split() == ["PREEMPTED"], sacct.out
    assert cluster.wait_state(high, timeout=30)["JobState"] == "COMPLETED"


@pytest.mark.timeout(60)
def test_a_job_of_the_same_tier_waits(preempt_cluster: TestCluster) -> None:
    cluster = preempt_cluster
    first = cluster.sbatch("-p", "lo", *ALL_GPUS, "--wrap", "sleep 300")
    cluster.wait_state(first, "RUNNING")
    second = cluster.sbatch("-p", "locancel", *ALL_GPUS, "--wrap", "true")
    wait_until(lambda: cluster.job(second)["Reason"] == "Resources", 10, "second to wait")
    assert cluster.state(first) == "RUNNING"
    assert cluster.run("scancel", str(first), str(second)).rc == 0
    cluster.wait_state(first)


@pytest.fixture
def qos_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes of 8 GPUs; preemption by QOS, victims requeued; a QOS's Priority counts."""
    conf = "PreemptType=preempt/qos\nPreemptMode=REQUEUE\n"
    conf += "PriorityType=priority/multifactor\nPriorityWeightQOS=1000\n"
    yield from run_cluster(tmp_path, request, conf_lines=conf)


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_qos_preempt_list_decides_who_preempts_whom(qos_cluster: TestCluster) -> None:
    cluster = qos_cluster
    assert cluster.run("sacctmgr", "-i", "add", "qos", "low").rc == 0
    bad = cluster.run("sacctmgr", "-i", "add", "qos", "urgent", "Preempt=nosuch")
    assert bad.rc != 0 and "Invalid qos specification" in bad.out + bad.err
    added = cluster.run("sacctmgr", "-i", "add", "qos", "urgent", "Preempt=low", "Priority=10")
    assert added.rc == 0, added.err
    shown = cluster.run("sacctmgr", "-n", "-P", "show", "qos", "format=name,preempt,preemptmode")
    assert sorted(shown.out.split()) == ["low||cluster", "normal||cluster", "urgent|low|cluster"]

    low = cluster.sbatch("--qos=low", *ALL_GPUS, "--wrap", "sleep 300")
    cluster.wait_state(low, "RUNNING")
    normal = cluster.sbatch(*ALL_GPUS, "--wrap", "true")  # normal may preempt nobody
    wait_until(lambda: cluster.job(normal)["Reason"] == "Resources", 10, "normal to wait")
    assert cluster.state(low) == "RUNNING"
    urgent = cluster.sbatch("--qos=urgent", *ALL_GPUS, "--wrap", "sleep 1")
    cluster.wait_state(urgent, "RUNNING", "COMPLETED", timeout=15)
    requeued = cluster.job(low)
    assert (requeued["JobState"], requeued["Restarts"]) == ("PENDING", "1"), requeued
    assert cluster.state(normal) == "PENDING"
    assert cluster.run("scancel", str(low), str(normal)).rc == 0


@pytest.mark.timeout(30)
def test_preemption_settings_are_shown_as_slurm_shows_them(preempt_cluster: TestCluster) -> None:
    cluster = preempt_cluster
    sinfo = cluster.run("sinfo", "-h", "-o", "%P %M")
    assert sinfo.out.split("\n")[:5] == [
        "gpu* REQUEUE",
        "debug REQUEUE",
        "lo REQUEUE",
        "locancel CANCEL",
        "hi REQUEUE",
    ], sinfo.out
    part = cluster.run("scontrol", "show", "partition", "locancel").out
    assert "OverTimeLimit=NONE PreemptMode=CANCEL" in part
    config = cluster.run("scontrol", "show", "config").out.splitlines()
    shown = [line.split() for line in config if line.startswith("Preempt")]
    assert shown == [
        ["PreemptExemptTime", "=", "00:00:00"],
        ["PreemptMode", "=", "REQUEUE"],
        ["PreemptType", "=", "preempt/partition_prio"],
    ]
