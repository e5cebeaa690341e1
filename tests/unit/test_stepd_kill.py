"""What a batch stepd does when it kills a job: SIGTERM right behind SIGCONT.

Slurm's stepd sends a job's processes SIGCONT and then SIGTERM. Whatever handles
the first (an srun saying "got SIGCONT") must get the second before it can act
on anything else, or a batch shell runs on after its srun. So stepd finds the
processes once, before the first signal, and sends nothing slow between them.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from nodeagent import spool
from nodeagent.stepd import supervisor
from nodeagent.stepd.common import WAITED
from nodeagent.stepd.link import AgentLink

pytestmark = pytest.mark.timeout(10)

SCRIPT_GROUP = 4100
OTHER = 4200  # a process the script started in a group of its own


def test_a_kill_finds_the_processes_once_and_sends_sigterm_right_after_sigcont(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, int, int]] = []

    def scan(root: int) -> list[tuple[int, int]]:
        events.append(("scan", root, 0))
        return [(SCRIPT_GROUP, SCRIPT_GROUP), (SCRIPT_GROUP + 1, SCRIPT_GROUP), (OTHER, OTHER)]

    monkeypatch.setattr(supervisor, "descendants", scan)
    monkeypatch.setattr(os, "killpg", lambda group, sig: events.append(("group", group, sig)))
    monkeypatch.setattr(os, "kill", lambda pid, sig: events.append(("pid", pid, sig)))
    job = spool.BatchJob(
        job_id=12, uid=os.getuid(), gid=os.getgid(), user="u", umask=0o022,
        argv=("/bin/true",), env={}, work_dir=str(tmp_path), stdout="", stderr="",
        stdin="", node="n1", kill_wait=30,
    )  # fmt: skip
    handlers = {sig: signal.getsignal(sig) for sig in WAITED}
    try:
        step = job.as_step(str(tmp_path))
        sup = supervisor.StepSupervisor(str(tmp_path), step, AgentLink(None, -1), batch=job)
        sup.pgid = SCRIPT_GROUP

        sup.begin_kill(spool.Terminate("CANCELLED", 30, 0.0))
    finally:
        signal.set_wakeup_fd(-1)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)

    cont, term = signal.SIGCONT, signal.SIGTERM
    assert events == [
        ("scan", os.getpid(), 0),
        ("group", SCRIPT_GROUP, cont),
        ("pid", OTHER, cont),
        ("group", SCRIPT_GROUP, term),
        ("pid", OTHER, term),
    ]
