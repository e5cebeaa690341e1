"""Interactive work through a real terminal: ``srun --pty`` and salloc's interactive step.

A program (pexpect) types into a pseudo-terminal as a user would, with srun
or salloc on its other side, against a real local cluster whose slurm.conf
has ``LaunchParameters=use_interactive_step``.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

PROMPT = "pty-test$ "
_marks = itertools.count(1000)


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """The module's cluster: salloc starts an interactive step there."""
    home = tmp_path_factory.mktemp("pty")
    yield from run_cluster(home, request, conf_lines="LaunchParameters=use_interactive_step\n")


def spawn(cluster: TestCluster, script: str, home: Path) -> pexpect.spawn:
    """``sh -c script`` on a new 24x80 terminal, with a known prompt and no rc files."""
    env = {**cluster.env, "PS1": PROMPT, "TERM": "xterm", "HOME": str(home), "SHELL": "/bin/sh"}
    return pexpect.spawn(
        "/bin/sh",
        ["-c", script],
        env=env,
        cwd=str(cluster.workdir),
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
        dimensions=(24, 80),
    )


def command(child: pexpect.spawn, line: str, timeout: float = 30) -> str:
    """Type a command line into the remote shell; return what it printed.

    A marker echoed after it (``$((n+1))`` is only expanded by the shell,
    so the echoed line itself never matches) says when it is done.
    """
    mark = next(_marks)
    child.sendline(f"{line}; echo @@$(({mark}+1))@@")
    child.expect(f"@@{mark + 1}@@", timeout=timeout)
    return str(child.before)


def processes(*argv: str) -> list[int]:
    """The pids of the live processes running exactly ``argv``."""
    wanted = ("\0".join(argv) + "\0").encode()
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{entry}/cmdline").read_bytes() == wanted:
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_srun_pty_bash_is_an_interactive_shell_on_the_node(
    cluster: TestCluster, tmp_path: Path
) -> None:
    before, after = tmp_path / "stty-before", tmp_path / "stty-after"
    script = (
        f"stty -g > {before}; srun --pty bash --norc --noprofile; "
        f"echo srun-exit=$?; stty -g > {after}"
    )
    child = spawn(cluster, script, tmp_path)
    try:
        child.expect_exact(PROMPT)
        out = command(child, "tty; echo job=$SLURM_JOB_ID node=$SLURMD_NODENAME; stty size")
        assert re.search(r"\r/dev/pts/\d+\r\n", out), out
        job_id = re.search(r"job=(\d+) node=n1", out)
        assert job_id is not None and "\n24 80\r" in out, out

        child.sendline("sleep 99.25")
        sleeping = wait_until(lambda: processes("sleep", "99.25"), 20, "sleep to run")
        began = time.monotonic()
        child.sendintr()  # a byte through srun's raw terminal, a SIGINT on the node
        assert "status=130" in command(child, "echo status=$?")
        assert time.monotonic() - began < 20
        assert not any(os.path.exists(f"/proc/{pid}") for pid in sleeping)

        child.setwinsize(40, 120)  # srun gets SIGWINCH
        wait_until(lambda: "\r40 120\r" in command(child, "stty size"), 20, "the new size")

        child.sendline("exit 3")
        child.expect("srun-exit=(\\d+)")
        assert child.match.group(1) == "3"
        # Restored before srun's last words: the terminal turns "\n" into "\r\n" again.
        assert "\r\nsrun: error: n1: task 0: Exited with exit code 3\r\n" in str(child.before)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert after.read_text() == before.read_text()
    result = cluster.run("sacct", "-j", job_id.group(1), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert result.out.split() == [
        f"{job_id.group(1)}|FAILED|3:0",
        f"{job_id.group(1)}.0|FAILED|3:0",
    ], result.out


def test_only_task_zero_has_the_terminal(cluster: TestCluster, tmp_path: Path) -> None:
    child = spawn(cluster, "srun --pty -n3 sh -c 'echo rank-$SLURM_PROCID; tty; exit 0'", tmp_path)
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    out = str(child.before)
    assert "rank-0" in out and re.search(r"/dev/pts/\d+", out), out
    assert "rank-1" not in out and "rank-2" not in out  # their output went to /dev/null
    assert child.exitstatus == 0


def test_pty_refuses_stream_options_and_needs_a_terminal(cluster: TestCluster) -> None:
    for option in ("-o/dev/null", "-e/dev/null", "-i0"):
        refused = cluster.run("srun", "--pty", option, "true")
        assert refused.rc == 1
        assert refused.err == "srun: error: --error/--input/--output are incompatible with --pty\n"
    plain = cluster.run("srun", "--pty", "tty")  # stdout is a pipe here: no pty after all
    assert plain.err.splitlines() == [
        "srun: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device",
        "srun: error: Not using a pseudo-terminal, disregarding --pty option",
        "srun: error: n1: task 0: Exited with exit code 1",
    ]
    assert plain.out == "not a tty\n" and plain.rc == 1


def test_salloc_runs_its_shell_in_an_interactive_step(cluster: TestCluster, tmp_path: Path) -> None:
    child = spawn(cluster, "salloc -N2 -n3; echo salloc-exit=$?", tmp_path)  # SHELL=/bin/sh
    try:
        child.expect_exact(PROMPT)
        out = command(
            child,
            "tty; echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID node=$SLURMD_NODENAME"
            " nnodes=$SLURM_NNODES ntasks=$SLURM_NTASKS rank=${RANK-unset}",
        )
        assert re.search(r"/dev/pts/\d+\r\n", out), out
        found = re.search(r"job=(\d+) step=4294967290 node=n1 nnodes=2 ntasks=3 rank=unset", out)
        assert found is not None, out
        job_id = found.group(1)
        ranks = command(child, "srun -l hostname")  # beside the shell, on the job's 3 CPUs
        assert sorted(re.findall(r"^(\d): ", ranks, re.M)) == ["0", "1", "2"], ranks
        child.sendline("exit 4")
        child.expect("salloc-exit=(\\d+)")
        assert child.match.group(1) == "4"
        assert f"salloc: Relinquishing job allocation {job_id}" in str(child.before)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    result = cluster.run("sacct", "-j", job_id, "-n", "-P", "-o", "JobID,JobName,State,ExitCode")
    assert result.out.split() == [
        f"{job_id}|interactive|FAILED|4:0",
        f"{job_id}.interactive|interactive|FAILED|4:0",
        f"{job_id}.0|hostname|COMPLETED|0:0",
    ], result.out
    local = cluster.run("salloc", "-Q", "-N1", "sh", "-c", "echo step=${SLURM_STEP_ID-none}")
    assert local.out == "step=none\n"  # a command given runs here, as before


def test_a_slurmd_restart_hangs_the_terminal_up(fresh_cluster: TestCluster, tmp_path: Path) -> None:
    # Nobody could type into the shell any more: it gets SIGHUP, srun ends, nothing is left.
    child = spawn(fresh_cluster, "srun --pty bash --norc --noprofile; echo srun-exit=$?", tmp_path)
    try:
        child.expect_exact(PROMPT)
        shell = int(command(child, "echo shell=$$").split("shell=")[-1].split()[0])
        fresh_cluster.kill_agent("n1")
        fresh_cluster.start()
        child.expect("srun-exit=(\\d+)")
        assert child.match.group(1) == "129"
        assert "srun: error: n1: task 0: Hangup" in str(child.before)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    wait_until(lambda: not os.path.exists(f"/proc/{shell}"), 20, "the shell's end")
