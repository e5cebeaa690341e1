"""Runs cases against one cluster (minislurm's or real Slurm's) through its own commands.

A :class:`Target` is a cluster and the commands that reach it (a bin
directory first in PATH, a slurm.conf). :class:`Runner` runs a case's setup
and command through bash in a fresh working directory, finds the jobs the
case created, cancels what is left of them and waits until the cluster is
idle again, so every case starts alike. Imports the suite's own modules only.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .cases import Case
from .normalise import Context

PRELUDE = Path(__file__).parent / "prelude.sh"
# Slurm's commands: those a target's bin directory lacks must not be found elsewhere in PATH
# (a machine with real Slurm installed would answer with it).
SLURM_COMMANDS = (
    "sacct sacctmgr salloc sattach sbatch sbcast scancel scontrol scrontab sdiag sinfo sprio "
    "squeue sreport srun sshare sstat strigger sview"
).split()
TERMINAL = {
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "TIMEOUT",
}
SETUP_SCRIPT = """\
. '{prelude}'
__before=$(compgen -v)
set -e
{setup}
set +e
for __v in $(compgen -v); do
    case $'\\n'"$__before"$'\\n' in
    *$'\\n'"$__v"$'\\n'*) ;;
    *) [[ $__v == __* ]] || declare -p "$__v" ;;
    esac
done >'{vars}'
"""
RUN_SCRIPT = """\
. '{prelude}'
[ ! -e '{vars}' ] || . '{vars}'
{run}
"""


class SetupFailed(RuntimeError):
    """A case's setup did not succeed: the case has no result to compare."""


class ClusterStuck(RuntimeError):
    """Jobs still active after a case's clean-up: later cases would not start alike."""


@dataclass(frozen=True)
class Target:
    """A cluster and the commands that reach it.

    Attributes:
        name: ``minislurm`` or ``slurm``, for reports.
        bin_dir: the directory of its commands (first in PATH).
        conf: the slurm.conf the commands read.
        root: where the cases' working directories are made (a shared file system).
    """

    name: str
    bin_dir: Path
    conf: Path
    root: Path

    def cluster_name(self) -> str:
        """The ClusterName in its slurm.conf."""
        found = re.search(r"^\s*ClusterName=(\S+)", self.conf.read_text(), re.MULTILINE | re.I)
        return found.group(1) if found else "cluster"

    def env(self) -> dict[str, str]:
        """The environment cases run in: the same few variables on both systems."""
        absent = self.root / ".absent-commands"
        absent.mkdir(parents=True, exist_ok=True)
        for command in SLURM_COMMANDS:
            stub = absent / command
            if not (self.bin_dir / command).exists() and not stub.exists():
                stub.write_text(f'#!/bin/sh\necho "{command}: command not found" >&2\nexit 127\n')
                stub.chmod(0o755)
        user = pwd.getpwuid(os.getuid())
        return {
            "PATH": f"{self.bin_dir}:{absent}:/usr/local/bin:/usr/bin:/bin",
            "SLURM_CONF": str(self.conf),
            "HOME": user.pw_dir,
            "USER": user.pw_name,
            "LOGNAME": user.pw_name,
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
        }


@dataclass(frozen=True)
class Run:
    """What the command under test did, and the context to normalise it with."""

    rc: int
    out: str
    err: str
    ctx: Context


def _context(workdir: Path, target: Target, jobs: tuple[int, ...]) -> Context:
    user = pwd.getpwuid(os.getuid())
    return Context(
        workdir=str(workdir),
        conf=str(target.conf),
        jobs=jobs,
        host=socket.gethostname().split(".")[0],
        user=user.pw_name,
        uid=user.pw_uid,
        group=grp.getgrgid(os.getgid()).gr_name,
        gid=os.getgid(),
        cluster=target.cluster_name(),
    )


class Runner:
    """Runs cases one after another against one target."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.env = target.env()
        self.floor = 0  # every job id at or below it was made before the current case

    def command(self, *argv: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """One of the target's commands, outside any case."""
        return subprocess.run(
            [str(self.target.bin_dir / argv[0]), *argv[1:]],
            env=self.env,
            cwd=self.target.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def _jobs(self) -> dict[int, str]:
        """Every job the controller still knows, with its state."""
        listing = self.command("squeue", "-h", "-t", "all", "-o", "%A %T")
        if listing.returncode != 0:
            raise ClusterStuck(f"squeue failed: {listing.stderr}")
        return {
            int(i): state for i, state in (line.split() for line in listing.stdout.splitlines())
        }

    def start(self, burn: int = 100) -> None:
        """Get the target ready: job ids above ``burn``, so they are not mistaken for counts.

        A fresh cluster numbers jobs from 1, and ``NumNodes=1`` would read as a job id.
        """
        self.target.root.mkdir(parents=True, exist_ok=True)
        self.floor = max(self._wait_idle(), default=0)
        if self.floor < burn:
            done = self.command("sbatch", "-o", "/dev/null", f"--array=0-{burn - 1}", "--wrap=true")
            if done.returncode != 0:
                raise ClusterStuck(f"cannot submit jobs: {done.stderr}")
            self.floor = max(self._wait_idle(timeout=180))

    def _wait_idle(
        self, timeout: float = 60.0, known: dict[int, str] | None = None
    ) -> dict[int, str]:
        """Wait until no job is active and every node is idle (a case may not change that).

        Args:
            timeout: seconds.
            known: a listing of the jobs taken just before, if nothing changed them since.

        Returns:
            Every job the controller knows then, with its state.
        """
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            jobs, known = known if known is not None else self._jobs(), None
            busy = [f"{i} {state}" for i, state in jobs.items() if state not in TERMINAL]
            nodes = self.command("sinfo", "-h", "-N", "-o", "%N %t").stdout.splitlines()
            busy += [node for node in nodes if not node.endswith(" idle")]
            if not busy:
                return jobs
            if time.monotonic() > deadline:
                raise ClusterStuck(f"cluster still busy after {timeout}s: {', '.join(busy)}")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def _bash(self, script: str, workdir: Path, **io: object) -> subprocess.Popen:
        """Start bash on ``script`` in a session of its own (cleaned up as one group)."""
        return subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-c", script],
            cwd=workdir,
            env=self.env,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
            **io,  # type: ignore[call-overload]
        )

    def run(self, case: Case) -> Run:
        """Run one case: setup, the command under test, clean-up.

        Args:
            case: the case.

        Returns:
            Its exit status, output and context.

        Raises:
            SetupFailed: the setup failed or timed out.
            ClusterStuck: its jobs would not end.
        """
        workdir = self.target.root / case.area / case.name
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        private = self.target.root / ".cases" / case.area
        private.mkdir(parents=True, exist_ok=True)
        vars_file, setup_log = private / f"{case.name}.vars", private / f"{case.name}.setup.log"
        vars_file.unlink(missing_ok=True)
        groups: list[int] = []
        try:
            if case.setup:
                self._setup(case, workdir, vars_file, setup_log, groups)
            rc, out, err = self._command_under_test(case, workdir, vars_file, groups)
        finally:
            jobs = self._clean_up(groups)
        return Run(rc, out, err, _context(workdir, self.target, jobs))

    def _command_under_test(
        self, case: Case, workdir: Path, vars_file: Path, groups: list[int]
    ) -> tuple[int, str, str]:
        """Run the case's ``run`` text with the setup's variables: its status and output."""
        script = RUN_SCRIPT.format(prelude=PRELUDE, vars=vars_file, run=case.run)
        proc = self._bash(script, workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        groups.append(proc.pid)
        try:
            out, err = proc.communicate(timeout=case.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return -1, out, err + f"\n[conformance: timed out after {case.timeout}s]\n"
        return proc.returncode, out, err

    def _setup(
        self, case: Case, workdir: Path, vars_file: Path, log: Path, groups: list[int]
    ) -> None:
        script = SETUP_SCRIPT.format(prelude=PRELUDE, setup=case.setup, vars=vars_file)
        with open(log, "w") as out:
            proc = self._bash(script, workdir, stdout=out, stderr=subprocess.STDOUT)
            groups.append(proc.pid)
            try:
                rc = proc.wait(timeout=case.timeout)
            except subprocess.TimeoutExpired:
                rc = -1
        if rc != 0 or not vars_file.exists():
            raise SetupFailed(f"{case.id}: setup exited {rc}:\n{log.read_text()}")

    def _clean_up(self, groups: list[int]) -> tuple[int, ...]:
        """Cancel the case's jobs, end its processes, wait for an idle cluster.

        Returns:
            The ids of the jobs the case created, in creation order.
        """
        known = self._jobs()
        jobs = tuple(sorted(i for i in known if i > self.floor))
        active = [str(i) for i, state in known.items() if state not in TERMINAL]
        if active:
            self.command("scancel", *active)
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Cancelling may make records too (Slurm splits a cancelled array's tasks off).
        self.floor = max((self.floor, *self._wait_idle(known=None if active else known)))
        return jobs
