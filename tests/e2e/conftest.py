"""End-to-end fixtures: a real local cluster (slurmctld + two slurmd) in a temp dir.

The daemons are real processes on ephemeral ports, started and stopped by
the same launcher as ``minislurm cluster up``; tests drive them through the
real commands. On a failure the daemons' logs are printed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import Result, base_env, run_command, wait_until

from minislurm.local.cluster import ClusterSpec, LocalCluster

TERMINAL = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "DEADLINE",
    "PREEMPTED",
}


def parse_oneliner(line: str) -> dict[str, str]:
    """``Key=Value Key=Value`` (scontrol -o) into a dict; values may hold spaces.

    Args:
        line: one line of ``scontrol -o show ...``.

    Returns:
        The fields.
    """
    fields: dict[str, str] = {}
    key = ""
    for word in line.split(" "):
        name, eq, value = word.partition("=")
        if eq and name and (name[0].isupper() or name.startswith("MCS")):
            key = name
            fields[key] = value
        elif key:
            fields[key] += " " + word
    return fields


class TestCluster:
    """A running local cluster and the commands to drive it."""

    __test__ = False

    def __init__(self, home: Path, spec: ClusterSpec) -> None:
        self.home = home
        self.spec = spec
        self.local = LocalCluster(str(home))
        self.env = base_env(self.local.conf_path)
        self.workdir = home / "work"
        self.workdir.mkdir(exist_ok=True)

    def start(self) -> None:
        """Start (or restart dead) daemons and wait until every node is up."""
        since = time.time()
        started = self.local.up(self.spec)
        self.local.wait_ready(timeout=30, started=started, since=since)

    def run(self, *argv: str, cwd: Path | None = None, stdin: str | None = None) -> Result:
        """Run one of our commands against this cluster."""
        return run_command(list(argv), self.env, cwd or self.workdir, stdin)

    def spawn(self, *argv: str) -> subprocess.Popen[str]:
        """Start one of our commands in the background (no stdin; stdout and stderr piped)."""
        return subprocess.Popen(
            list(argv),
            env=self.env,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def sbatch(self, *args: str, script: str | None = None, cwd: Path | None = None) -> int:
        """Submit a job (``script`` is written to a file first) and return its id."""
        argv = ["sbatch", "--parsable", *args]
        if script is not None:
            path = (cwd or self.workdir) / f"job-{os.urandom(4).hex()}.sh"
            path.write_text(script)
            argv.append(str(path))
        result = self.run(*argv, cwd=cwd)
        assert result.rc == 0, f"sbatch failed: {result.err}"
        return int(result.out.strip())

    def job(self, job_id: int) -> dict[str, str]:
        """``scontrol -o show job`` as a dict."""
        result = self.run("scontrol", "-o", "show", "job", str(job_id))
        assert result.rc == 0, result.err
        return parse_oneliner(result.out.strip())

    def state(self, job_id: int) -> str:
        """The job's state."""
        return self.job(job_id)["JobState"]

    def wait_state(self, job_id: int, *states: str, timeout: float = 30.0) -> dict[str, str]:
        """Wait until the job is in one of ``states`` (default: any terminal state)."""
        wanted = set(states) or TERMINAL
        return wait_until(
            lambda: (job := self.job(job_id))["JobState"] in wanted and job,
            timeout,
            f"job {job_id} to be {'/'.join(sorted(wanted))}",
        )

    def logs(self) -> str:
        """The tail of every daemon log."""
        text = []
        for log in sorted((self.home / "log").glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-60:]
            text.append(f"==== {log.name}\n" + "\n".join(lines))
        return "\n".join(text)

    def kill_controller(self) -> None:
        """SIGKILL slurmctld (no chance to clean up)."""
        pid = self.local.pid("slurmctld")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: self.local.pid("slurmctld") is None, 10, "slurmctld to die")

    def kill_agent(self, node: str) -> None:
        """SIGKILL a node's slurmd alone (its stepds run on), and wait until it is gone.

        A start() while it is still dying would find it alive and start none.
        """
        pid = self.local.pid(f"slurmd-{node}")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: self.local.pid(f"slurmd-{node}") is None, 10, f"slurmd-{node} to die")

    def stop(self) -> None:
        """Stop every daemon and kill every job left."""
        self.local.down()


# A process that holds MIB MiB for SECONDS seconds (memory limit tests).
HOLD = sys.executable + " -c 'import time; x = b\"m\" * ({mib} << 20); time.sleep({seconds})'"


def sacct_states(cluster: TestCluster, job: int) -> dict[str, tuple[str, str]]:
    """State and ExitCode of a job and each of its steps in sacct, by JobID."""
    result = cluster.run("sacct", "-j", str(job), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert result.rc == 0, result.err
    rows = [line.split("|") for line in result.out.splitlines() if line]
    return {row[0]: (row[1], row[2]) for row in rows}


def wait_out_of_memory(cluster: TestCluster, job: int) -> None:
    """Wait for a job's end, OUT_OF_MEMORY as Slurm shows it in scontrol, squeue and sacct."""
    done = cluster.wait_state(job, timeout=30)
    assert (done["JobState"], done["Reason"], done["ExitCode"]) == (
        "OUT_OF_MEMORY",
        "OutOfMemory",
        "0:125",
    )
    listed = cluster.run("squeue", "-t", "all", "-h", "-j", str(job), "-o", "%T")
    assert listed.out.strip() == "OUT_OF_MEMORY"
    assert sacct_states(cluster, job)[str(job)] == ("OUT_OF_MEMORY", "0:125")


def run_cluster(
    home: Path,
    request: pytest.FixtureRequest,
    spec: ClusterSpec | None = None,
    conf_lines: str = "",
) -> Iterator[TestCluster]:
    """Start a cluster in ``home``, yield it, stop it (printing its logs if a test failed).

    ``conf_lines`` are appended to the generated slurm.conf (``AuthType=auth/munge\n``).
    """
    cluster = TestCluster(home, spec or ClusterSpec(kill_wait=2, min_job_age=600))
    if conf_lines:
        cluster.local.write_config(cluster.spec)
        with open(cluster.local.conf_path, "a", encoding="utf-8") as conf:
            conf.write(conf_lines)
    failed_before = request.session.testsfailed
    try:
        cluster.start()
    except BaseException:
        print(cluster.logs())
        cluster.stop()  # what did start must not outlive the test
        raise
    try:
        yield cluster
    finally:
        if request.session.testsfailed > failed_before:
            print(cluster.logs())
        cluster.stop()


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """A two-node cluster (8 CPUs, 8 fake GPUs, 16000 MiB each) shared by a module's tests."""
    yield from run_cluster(tmp_path_factory.mktemp("cluster"), request)


# Tests that must hold whichever database keeps the state take it as a parameter:
# ``@pytest.mark.parametrize("fresh_cluster", STATE_DBS, indirect=True)``.
STATE_DBS = ["sqlite", "postgresql"]


def state_db(request: pytest.FixtureRequest) -> str:
    """The StateSaveLocation a test parametrized by STATE_DBS asked for ("": SQLite's default).

    PostgreSQL's is a new database on the session's server.
    """
    if getattr(request, "param", "sqlite") == "sqlite":
        return ""
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def fresh_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster of the test's own (for tests that kill daemons)."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600, state_db=state_db(request))
    yield from run_cluster(tmp_path, request, spec)
