"""Jobs run as their users, and users cannot act for one another (needs root).

The two-user tests create two unprivileged accounts for the session and run
the real commands as each, under ``AuthType=auth/hmac`` (the kiosk signs for
them) and ``auth/munge`` (munged signs; skipped where it is not running).
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import BIN, Result, wait_until

from minislurm.conffile import read_controller_address
from minislurm.security import auth, munge
from minislurm.wire.ctlclient import ControllerClient

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="needs root to run jobs as another user")


@pytest.fixture
def public_cluster(request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose spool the job's user can reach (pytest's tmp dirs are root-only)."""
    home = Path(tempfile.mkdtemp(prefix="minislurm-priv-", dir="/tmp"))
    os.chmod(home, 0o755)
    try:
        yield from run_cluster(home, request)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_job_runs_as_its_user_and_writes_output_as_that_user(public_cluster: TestCluster) -> None:
    cluster = public_cluster
    nobody = pwd.getpwnam("nobody")
    work = cluster.workdir / "nobody"
    work.mkdir()
    os.chmod(work, 0o777)
    host, port = read_controller_address(cluster.local.conf_path)
    spec = {
        "name": "who",
        "script": b"#!/bin/sh\nid -u\nid -g\ntouch made-here\n",
        "work_dir": str(work),
        "batch": True,
        "uid": nobody.pw_uid,
        "gid": nobody.pw_gid,
        "user": "nobody",
        "environment": {"PATH": "/usr/bin:/bin"},
    }
    signer = auth.signer_for(cluster.local.conf_path)
    with ControllerClient(host, port, timeout=10, signer=signer) as client:
        job_id = client.call("SubmitJob", spec=spec).job_id
    info = cluster.wait_state(job_id)
    assert info["JobState"] == "COMPLETED", info
    out = work / f"slurm-{job_id}.out"
    assert out.read_text().split() == [str(nobody.pw_uid), str(nobody.pw_gid)]
    assert out.stat().st_uid == nobody.pw_uid
    assert (work / "made-here").stat().st_uid == nobody.pw_uid


# ------------------------------------------------------------------ two unprivileged users


@dataclass(frozen=True)
class User:
    """A test account: name, uid, gid and the supplementary group it is in."""

    name: str
    uid: int
    gid: int
    extra_gid: int


@pytest.fixture(scope="session")
def users() -> Iterator[tuple[User, User]]:
    """Two fresh unprivileged users; A is also in a supplementary group."""
    blocked = _unreachable(os.path.realpath(sys.executable))
    if blocked:
        pytest.skip(f"unprivileged users cannot run {sys.executable}: {blocked} is not o+x")
    tag = f"{os.getpid() % 100000}"
    group = f"msg{tag}"
    names = [f"msa{tag}", f"msb{tag}"]
    subprocess.run(["groupadd", group], check=True)
    try:
        for name, extra in zip(names, (["-G", group], []), strict=True):
            subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", *extra, name], check=True)
        made = []
        for name in names:
            entry = pwd.getpwnam(name)
            made.append(User(name, entry.pw_uid, entry.pw_gid, grp.getgrnam(group).gr_gid))
        yield made[0], made[1]
    finally:
        for name in names:
            subprocess.run(["userdel", name], check=False, capture_output=True)
        subprocess.run(["groupdel", group], check=False, capture_output=True)


def _unreachable(path: str) -> str:
    """The first directory above ``path`` other users cannot search ("" if none)."""
    parent = os.path.dirname(path)
    while parent != os.path.dirname(parent):
        if not os.stat(parent).st_mode & 0o001:
            return parent
        parent = os.path.dirname(parent)
    return ""


@pytest.fixture(scope="module", params=["auth/hmac", "auth/munge"])
def multiuser_cluster(request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster users can reach, under each AuthType."""
    if request.param == "auth/munge" and not munge.running():
        pytest.skip("munge is not installed or munged is not running (apt-get install munge)")
    home = Path(tempfile.mkdtemp(prefix="minislurm-users-", dir="/tmp"))
    os.chmod(home, 0o755)
    try:
        yield from run_cluster(home, request, conf_lines=f"AuthType={request.param}\n")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _work(cluster: TestCluster, user: User) -> Path:
    """The user's own work directory in the cluster."""
    work = cluster.workdir / user.name
    if not work.exists():
        work.mkdir()
        os.chown(work, user.uid, user.gid)
    return work


def _as(cluster: TestCluster, user: User, *argv: str) -> Result:
    """Run one of our commands as ``user`` in its own work directory."""
    work = _work(cluster, user)
    env = {**cluster.env, "HOME": str(work), "USER": user.name, "LOGNAME": user.name}
    proc = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        env=env,
        cwd=work,
        user=user.uid,
        group=user.gid,
        extra_groups=os.getgrouplist(user.name, user.gid),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return Result(proc.stdout, proc.stderr, proc.returncode)


def _submit(cluster: TestCluster, user: User, *args: str) -> int:
    result = _as(cluster, user, "sbatch", "--parsable", *args)
    assert result.rc == 0, result
    return int(result.out.strip().split(";")[0])


def test_a_user_cannot_touch_another_users_job(
    multiuser_cluster: TestCluster, users: tuple[User, User]
) -> None:
    cluster, (a, b) = multiuser_cluster, users
    job = _submit(cluster, b, "-t", "10", "--wrap=sleep 300")
    cluster.wait_state(job, "RUNNING")
    before = cluster.job(job)
    later = ["Duration=10", "Nodes=n1", f"Users={a.name}"]
    assert before["UserId"].startswith(f"{b.name}({b.uid})")
    denied, not_admin = "Access/permission denied", "Invalid user id"  # as Slurm words them
    for argv, message in (
        (["scancel", str(job)], denied),
        (["scancel", "--signal=USR1", str(job)], denied),
        (["scontrol", "hold", str(job)], not_admin),
        (["scontrol", "requeue", str(job)], denied),
        (["scontrol", "update", f"JobId={job}", "TimeLimit=1"], not_admin),
        (["scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=mine"], not_admin),
        (["sacctmgr", "-i", "add", "account", "mine"], denied),
        (
            ["scontrol", "create", "reservation", "ReservationName=mine", "StartTime=now", *later],
            not_admin,
        ),
    ):
        result = _as(cluster, a, *argv)
        assert result.rc != 0 and message in result.err, (argv, result)
    after = cluster.job(job)
    assert (after["JobState"], after["TimeLimit"]) == ("RUNNING", before["TimeLimit"])
    assert "DRAIN" not in cluster.run("sinfo", "-h", "-n", "n1", "-o", "%T").out.upper()
    assert "mine" not in cluster.run("sacctmgr", "-n", "-P", "show", "account").out
    assert "mine" not in cluster.run("scontrol", "show", "reservation").out
    assert _as(cluster, b, "scancel", str(job)).rc == 0
    cluster.wait_state(job, "CANCELLED")


def test_a_user_cannot_cancel_signal_or_stat_another_users_step(
    multiuser_cluster: TestCluster, users: tuple[User, User]
) -> None:
    """Real Slurm refuses another's step with 'Invalid user id' (scancel exits 2010 & 0xff)."""
    cluster, (a, b) = multiuser_cluster, users
    job = _submit(cluster, b, "-t", "10", "--wrap=srun sleep 300")
    step = f"{job}.0"
    shown = lambda: cluster.run("squeue", "-s", step, "-h", "-o", "%i").out.strip()  # noqa: E731
    wait_until(lambda: shown() == step, 30, "the step to run")
    refused = f"scancel: error: Kill job error on job step id {job}: Invalid user id\n"
    assert _as(cluster, a, "scancel", step) == Result("", refused, 218)
    assert _as(cluster, a, "scancel", "--signal=USR1", step) == Result("", refused, 218)
    stat = _as(cluster, a, "sstat", "-n", "-j", step, "-o", "jobid")
    assert (stat.rc, stat.out, stat.err.splitlines()[-1]) == (
        0,
        "",
        f"sstat: error: problem getting step_layout for StepId={step}: Invalid user id",
    )
    assert shown() == step  # still running
    assert _as(cluster, b, "scancel", step).rc == 0
    cluster.wait_state(job)


def test_admin_level_makes_a_user_an_operator_then_an_administrator(
    multiuser_cluster: TestCluster, users: tuple[User, User]
) -> None:
    cluster, (a, b) = multiuser_cluster, users
    both = f"{a.name},{b.name}"
    assert cluster.run("sacctmgr", "-i", "add", "user", both, "account=root").rc == 0
    try:
        _operator_acts_for_others(cluster, a, b)
    finally:
        cluster.run("scontrol", "update", "NodeName=n1", "State=RESUME")
        cluster.run("scontrol", "delete", "ReservationName=byop")
        cluster.run("sacctmgr", "-i", "delete", "user", both)


def _operator_acts_for_others(cluster: TestCluster, a: User, b: User) -> None:
    denied = _as(cluster, a, "sacctmgr", "-i", "modify", "user", a.name, "set", "AdminLevel=Op")
    assert denied.rc == 1 and "Access/permission denied" in denied.err, denied
    made = cluster.run("sacctmgr", "-i", "modify", "user", b.name, "set", "AdminLevel=Operator")
    assert (made.rc, made.out) == (0, f" Modified users...\n  {b.name}\n"), made
    shown = cluster.run("sacctmgr", "-n", "-P", "show", "user", "format=user,admin").out
    assert {f"{a.name}|None", f"{b.name}|Operator"} <= set(shown.split()), shown
    job = _submit(cluster, a, "-t", "10", "--wrap=sleep 300")
    cluster.wait_state(job, "RUNNING")
    held = _submit(cluster, a, "-t", "10", "-H", "--wrap=true")
    assert _as(cluster, b, "scontrol", "release", str(held)).rc == 0
    resv = ["ReservationName=byop", "StartTime=now+1hour", "Duration=10", "Nodes=n2"]
    made_resv = _as(cluster, b, "scontrol", "create", "reservation", *resv, f"Users={a.name}")
    assert made_resv.rc == 0, made_resv
    # As in Slurm, an Operator may not update nodes or change AdminLevels.
    drain = ["scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=op"]
    refused = _as(cluster, b, *drain)
    assert refused.rc == 1 and "slurm_update error: Invalid user id" in refused.err, refused
    escalate = _as(cluster, b, "sacctmgr", "-i", "modify", "user", a.name, "set", "AdminLevel=O")
    assert escalate.rc == 1 and "must be a super user" in escalate.err, escalate
    assert _as(cluster, b, "scancel", str(job)).rc == 0
    assert cluster.wait_state(job)["JobState"] == "CANCELLED"
    cluster.wait_state(held)
    mine = _submit(cluster, b, "-t", "10", "--wrap=sleep 300")
    result = _as(cluster, a, "scancel", str(mine))
    assert result.rc != 0 and "Access/permission denied" in result.err, result
    assert _as(cluster, a, *drain).rc == 1
    assert "DRAIN" not in cluster.run("sinfo", "-h", "-n", "n1", "-o", "%T").out.upper()
    cluster.run("sacctmgr", "-i", "modify", "user", b.name, "set", "AdminLevel=Administrator")
    assert _as(cluster, b, *drain).rc == 0
    assert "DRAIN" in cluster.run("sinfo", "-h", "-n", "n1", "-o", "%T").out.upper()
    assert _as(cluster, b, "scancel", str(mine)).rc == 0
    cluster.wait_state(mine)


def test_a_users_job_files_and_processes_are_its_own(
    multiuser_cluster: TestCluster, users: tuple[User, User]
) -> None:
    cluster, (a, _) = multiuser_cluster, users
    work = _work(cluster, a)
    script = (
        "#!/bin/sh\nid -u; id -g; id -G; echo $SLURM_JOB_UID $SLURM_JOB_USER\n"
        "echo $$ > pid; sleep 300\n"
    )
    (work / "job.sh").write_text(script)
    job = _submit(
        cluster, a, "-t", "10", "--export=ALL,SLURM_JOB_UID=0,SLURM_JOB_USER=root", "job.sh"
    )
    pid = int(wait_until(lambda: (work / "pid").exists() and (work / "pid").read_text(), 30, "pid"))
    assert os.stat(f"/proc/{pid}").st_uid == a.uid
    out = work / f"slurm-{job}.out"
    uid, gid, groups, identity = out.read_text().splitlines()[:4]
    assert (int(uid), int(gid)) == (a.uid, a.gid)
    assert str(a.extra_gid) in groups.split()
    assert identity.split() == [str(a.uid), a.name]  # not the root the submitter claimed
    assert out.stat().st_uid == a.uid and (work / "pid").stat().st_uid == a.uid
    assert _as(cluster, a, "scancel", str(job)).rc == 0
    cluster.wait_state(job, "CANCELLED")


def test_a_user_cannot_submit_a_job_as_someone_else(
    multiuser_cluster: TestCluster, users: tuple[User, User]
) -> None:
    cluster, (a, b) = multiuser_cluster, users
    code = (
        "import os, sys\n"
        "from minislurm.security import auth\n"
        "from minislurm.conffile import read_client_config\n"
        "from minislurm.wire.ctlclient import ControllerClient\n"
        "from minislurm.wire.h2grpc import RpcError\n"
        "c = read_client_config(os.environ['SLURM_CONF'])\n"
        "signer = auth.signer_for(c.path, c.auth_type)\n"
        "spec = dict(name='x', script=b'#!/bin/sh\\n', batch=True, work_dir='/tmp',"
        f" uid={b.uid}, gid={b.gid}, user='{b.name}')\n"
        "with ControllerClient(c.host, c.port, timeout=10, signer=signer) as ctl:\n"
        "    try:\n"
        "        ctl.call('SubmitJob', spec=spec)\n"
        "    except RpcError as e:\n"
        "        sys.exit(f'{e.code}: {e.details}')\n"
    )
    before = cluster.run("squeue", "-h").out
    result = _as(cluster, a, "python", "-c", code)
    assert result.rc == 1 and "PERMISSION_DENIED: Access/permission denied" in result.err, result
    assert cluster.run("squeue", "-h").out == before


def test_a_users_srun_steps_run_as_that_user(
    multiuser_cluster: TestCluster, users: tuple[User, User]
) -> None:
    cluster, (a, _) = multiuser_cluster, users
    result = _as(cluster, a, "srun", "-N2", "-n2", "-t", "1", "id", "-u")
    assert result.rc == 0, result
    assert result.out.split() == [str(a.uid)] * 2
