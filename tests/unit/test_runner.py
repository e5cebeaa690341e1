"""The intent runner's order: a kill or signal of a job never overtakes its launch."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from ctld import nodes as nodeops
from ctld.intents import Intent, Launch, Signal, Terminate
from ctld.ledger import Ledger
from ctld.runner import IntentRunner, Outcomes
from ctld.settings import CtldSettings
from ctld.state import ClusterState
from minislurm.config import load_slurm_conf
from minislurm.jobenv import ScriptJob
from minislurm.model import Job

CONF = """\
ClusterName=test
SlurmctldHost=localhost
NodeName=n1 CPUs=2
PartitionName=debug Nodes=n1 Default=YES
"""


class Heard:
    """What the runner reports; nothing here decides anything."""

    async def launched(self, job: Job) -> None:
        pass

    def launch_lost(self, job: Job, node: str) -> None:
        pass

    def launch_failed(self, job: Job, node: str) -> None:
        pass

    def terminated(self, job_id: int) -> None:
        pass


class Agents(IntentRunner):
    """A runner whose calls to the agents are recorded, and whose launches the test answers."""

    def __init__(self, conf_path: Path) -> None:
        conf = load_slurm_conf(str(conf_path))
        settings = CtldSettings(
            conf, str(conf_path), "127.0.0.1", 0, None, "sqlite://", frozenset(), b"k" * 32
        )
        state = ClusterState(
            nodeops.configured_nodes(conf), conf.partitions, conf.memory_consumable, conf.gres_types
        )
        super().__init__(settings, Ledger(state, create_engine("sqlite://")))
        self.sent: list[str] = []
        self.answer = asyncio.Event()

    async def _launch(self, job_id: int, outcomes: Outcomes) -> None:
        self.sent.append(f"launch {job_id}")
        await self.answer.wait()
        self.sent.append(f"launched {job_id}")

    async def _terminate_on(
        self, intent: Terminate, node: str, script_job: ScriptJob | None
    ) -> None:
        self.sent.append(f"terminate {intent.job_id}")

    async def _signal_on(self, intent: Signal, node: str) -> None:
        self.sent.append(f"signal {intent.job_id}")


async def until(condition: Callable[[], bool], what: str) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0)

    try:
        await asyncio.wait_for(poll(), 5)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


@pytest.mark.parametrize(
    "intent",
    [Terminate(7, ("n1",), "CANCELLED"), Signal(7, ("n1",), signal.SIGUSR1, True, False)],
    ids=["terminate", "signal"],
)
def test_a_kill_or_signal_waits_for_the_launch_under_way(tmp_path: Path, intent: Intent) -> None:
    (tmp_path / "slurm.conf").write_text(CONF)

    async def scenario() -> list[str]:
        runner = Agents(tmp_path / "slurm.conf")
        runner.report_to(Heard())
        runner.run([Launch(7)])
        await until(lambda: runner.sent == ["launch 7"], "the launch to be sent")
        runner.run([intent, Terminate(8, ("n1",), "CANCELLED")])  # job 8 launches nothing
        await until(lambda: "terminate 8" in runner.sent, "the other job's kill")
        for _ in range(10):  # the runner had every chance to overtake the launch
            await asyncio.sleep(0)
        assert runner.sent == ["launch 7", "terminate 8"]
        runner.answer.set()
        await until(lambda: len(runner.sent) == 4, "the launch's answer and what waited for it")
        await runner.close()
        return runner.sent

    word = "terminate" if isinstance(intent, Terminate) else "signal"
    assert asyncio.run(scenario()) == ["launch 7", "terminate 8", "launched 7", f"{word} 7"]
