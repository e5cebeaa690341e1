"""Job steps through the real commands: squeue -s, scontrol show step, scancel J.S, sstat.

Each test runs a batch script whose srun steps wait on files the test
creates, so that nothing depends on timing: the test waits for what the
commands show, acts, and lets the script go on.
"""

from __future__ import annotations

import os
import sys

from conftest import TestCluster, parse_oneliner
from helpers import wait_until

MIB = 1024 * 1024


def steps_shown(cluster: TestCluster, job_id: int) -> list[str]:
    """``squeue -s -j JOB -h -o '%i %j'``: each running step's id and name."""
    result = cluster.run("squeue", "-s", "-j", str(job_id), "-h", "-o", "%i %j")
    assert result.rc == 0, result.err
    return result.out.splitlines()


def test_a_step_is_waited_for_with_squeue_steps_and_shown_by_scontrol(cluster: TestCluster) -> None:
    stop = cluster.workdir / "waiter-stop"
    wait = f"while [ ! -e {stop} ]; do sleep 0.1; done"
    job_id = cluster.sbatch(
        "-N2", "-n2", script=f"#!/bin/bash\nsrun -N2 -n2 -J waiter bash -c '{wait}'\n"
    )
    shown = wait_until(
        lambda: len(lines := steps_shown(cluster, job_id)) == 2 and lines, 30, "the step to run"
    )
    assert shown == [f"{job_id}.0 waiter", f"{job_id}.batch batch"]
    listing = cluster.run("squeue", "-s", str(f"{job_id}.0"))
    assert listing.out.splitlines()[0].split() == [
        "STEPID",
        "NAME",
        "PARTITION",
        "USER",
        "TIME",
        "NODELIST",
    ]
    assert listing.out.splitlines()[1].split()[::5] == [f"{job_id}.0", "n[1-2]"]
    shown_step = cluster.run("scontrol", "-o", "show", "step", f"{job_id}.0")
    fields = parse_oneliner(shown_step.out.strip())
    assert (fields["StepId"], fields["State"], fields["NodeList"]) == (
        f"{job_id}.0",
        "RUNNING",
        "n[1-2]",
    )
    assert (fields["Nodes"], fields["Tasks"], fields["Name"]) == ("2", "2", "waiter")
    assert fields["SrunHost:Pid"].startswith("n1:")
    missing = cluster.run("scontrol", "show", "step", f"{job_id}.7")
    assert (missing.rc, missing.out) == (1, f"Job step {job_id}.7 not found\n")
    stop.touch()
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    assert steps_shown(cluster, job_id) == []
    gone = cluster.run("scontrol", "show", "step", str(job_id))
    assert (gone.rc, gone.out) == (1, f"Job step {job_id}. not found\n")


def test_scancel_of_one_step_lets_the_script_and_its_other_step_go_on(cluster: TestCluster) -> None:
    """A step cancelled, another signalled: the script traps nothing, yet it completes."""
    usr1, stop = cluster.workdir / "keeper-usr1", cluster.workdir / "keeper-stop"
    keeper, ready = cluster.workdir / "keeper.sh", cluster.workdir / "keeper-ready"
    keeper.write_text(
        f"trap 'echo keeper got USR1; touch {usr1}' USR1\ntouch {ready}\n"
        f"while [ ! -e {stop} ]; do sleep 0.1; done\necho keeper done\n"
    )
    script = (
        "#!/bin/bash\n"
        "srun -n1 --overlap -J victim sleep 300 &\nvictim=$!\n"
        f"srun -n1 --overlap -J keeper bash {keeper} &\nkeeper=$!\n"
        "wait $victim; echo victim-rc=$?\nwait $keeper; echo keeper-rc=$?\necho batch done\n"
    )
    job_id = cluster.sbatch("-n2", script=script)
    wait_until(lambda: len(steps_shown(cluster, job_id)) == 3, 30, "both steps to run")
    wait_until(ready.exists, 30, "the keeper to trap USR1")
    names = dict(line.split() for line in steps_shown(cluster, job_id))
    victim, kept = (next(i for i, n in names.items() if n == want) for want in ("victim", "keeper"))

    assert cluster.run("scancel", victim).rc == 0
    wait_until(lambda: len(steps_shown(cluster, job_id)) == 2, 30, "the victim to end")
    signalled = cluster.run("scancel", "--signal=USR1", kept)
    assert (signalled.rc, signalled.err) == (0, "")
    wait_until(usr1.exists, 30, "the keeper to get USR1")
    stop.touch()

    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    output = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    step = victim.split(".")[1]
    assert f"slurmstepd-n1: error: *** STEP {job_id}.{step} ON n1 CANCELLED AT " in output
    for line in ("victim-rc=137", "keeper got USR1", "keeper done", "keeper-rc=0", "batch done"):
        assert line in output.splitlines(), output
    sacct = cluster.run("sacct", "-j", str(job_id), "-P", "-o", "JobID,State,ExitCode,JobName")
    assert sorted(sacct.out.splitlines()[1:]) == sorted(
        [
            f"{job_id}|COMPLETED|0:0|{sacct.out.splitlines()[1].split('|')[3]}",
            f"{job_id}.batch|COMPLETED|0:0|batch",
            f"{victim}|CANCELLED by {os.getuid()}|0:9|victim",
            f"{kept}|COMPLETED|0:0|keeper",
        ]
    )
    again = cluster.run("scancel", victim)  # its job has ended: Slurm's error, status 1
    assert (again.rc, again.err) == (
        1,
        f"scancel: error: Kill job error on job step id {victim}: Invalid job id specified\n",
    )


def test_sstat_shows_a_busy_steps_live_usage(cluster: TestCluster) -> None:
    stop = cluster.workdir / "busy-stop"
    hold = (
        "import os, time\n"
        "b = bytearray(200 << 20)\n"
        "b[::4096] = b'x' * len(b[::4096])\n"
        f"while not os.path.exists({str(stop)!r}): sum(range(10**5))\n"
    )
    (cluster.workdir / "hold.py").write_text(hold)
    job_id = cluster.sbatch(
        script=f"#!/bin/bash\nsrun -J busy {sys.executable} {cluster.workdir / 'hold.py'}\n"
    )
    wait_until(lambda: len(steps_shown(cluster, job_id)) == 2, 30, "the step to run")

    def figures() -> list[str] | None:
        result = cluster.run(
            "sstat",
            "-n",
            "-P",
            "-j",
            str(job_id),
            "-o",
            "JobID,MaxRSS,MaxRSSNode,NTasks,AveCPU,MaxVMSize",
        )
        assert result.rc == 0, result.err
        cells = result.out.strip().split("|")
        rss = cells[1] if len(cells) > 1 else ""
        return cells if rss.endswith("K") and int(rss[:-1]) > 190 * 1024 else None

    cells = wait_until(figures, 30, "sstat to see 200 MiB")
    assert cells[0] == f"{job_id}.0" and int(cells[1][:-1]) < 260 * 1024
    assert cells[2:4] == ["n1", "1"] and cells[4] != ""
    pids = cluster.run("sstat", "-i", "-n", "-P", "-j", f"{job_id}.0")
    assert pids.out.split("|")[:2] == [f"{job_id}.0", "n1"] and pids.out.split("|")[2].strip()
    batch = cluster.run("sstat", "-a", "-n", "-P", "-o", "JobID,NTasks", "-j", str(job_id))
    assert batch.out.splitlines() == [f"{job_id}.batch|1", f"{job_id}.0|1"]
    stop.touch()
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    gone = cluster.run("sstat", "-n", "-j", f"{job_id}.0")
    assert (gone.rc, gone.err) == (0, f"sstat: error: StepId={job_id}.0 not found running.\n")


def test_a_jobs_signal_goes_to_its_steps_and_with_full_to_its_script_too(
    cluster: TestCluster,
) -> None:
    """As real Slurm: scancel --signal=USR1 J signals the steps, --full the batch shell as well."""
    at = cluster.workdir
    step_usr1, batch_usr1, stop = at / "step-usr1", at / "batch-usr1", at / "signal-stop"
    trapper, ready = at / "trapper.sh", at / "trapper-ready"
    trapper.write_text(
        f"trap 'touch {step_usr1}' USR1\ntouch {ready}\nwhile [ ! -e {stop} ]; do sleep 0.1; done\n"
    )
    script = (
        f"#!/bin/bash\ntrap 'touch {batch_usr1}' USR1\nsrun bash {trapper} &\n"
        f"while [ ! -e {stop} ]; do sleep 0.1; done\nwait\n"
    )
    job_id = cluster.sbatch(script=script)
    wait_until(ready.exists, 30, "the step to trap USR1")
    assert cluster.run("scancel", "--signal=USR1", str(job_id)).rc == 0
    wait_until(step_usr1.exists, 30, "the step to get USR1")
    assert not batch_usr1.exists()
    step_usr1.unlink()
    assert cluster.run("scancel", "--full", "--signal=USR1", str(job_id)).rc == 0
    wait_until(lambda: batch_usr1.exists() and step_usr1.exists(), 30, "both to get USR1")
    stop.touch()
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
