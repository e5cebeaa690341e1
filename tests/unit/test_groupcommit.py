"""Group commit: batches, answers only after the write, failures reach every waiter."""

from __future__ import annotations

import asyncio

import pytest

from ctld.groupcommit import GroupCommit

pytestmark = pytest.mark.timeout(10)


class Log:
    """A write that records its batches (and fails when told)."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.fail = False

    def write(self, batch: list[str]) -> None:
        if self.fail:
            raise RuntimeError("disk full")
        self.batches.append(batch)


def test_a_lone_record_is_written_alone_then_a_burst_shares_one_write() -> None:
    log = Log()
    group = GroupCommit(log.write)

    async def scenario() -> None:
        await group.commit("a")  # idle: written on the next turn of the loop
        assert log.batches == [["a"]]
        burst = [asyncio.create_task(group.commit(x)) for x in "bcd"]
        await asyncio.sleep(0)
        assert group.waiting() == ["b", "c", "d"]
        assert log.batches == [["a"]]  # nobody is answered before the write
        assert not any(t.done() for t in burst)
        await asyncio.gather(*burst)

    asyncio.run(scenario())
    assert log.batches == [["a"], ["b", "c", "d"]]


def test_a_failed_write_fails_every_record_of_its_batch_only() -> None:
    log = Log()
    group = GroupCommit(log.write)

    async def scenario() -> None:
        log.fail = True
        tasks = [asyncio.create_task(group.commit(x)) for x in "xy"]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert [str(r) for r in results] == ["disk full", "disk full"]
        log.fail = False
        await group.commit("z")
        assert group.waiting() == []

    asyncio.run(scenario())
    assert log.batches == [["z"]]


def test_a_waiter_that_went_away_does_not_stop_its_batch() -> None:
    log = Log()
    group = GroupCommit(log.write)

    async def scenario() -> None:
        gone = asyncio.create_task(group.commit("p"))
        kept = asyncio.create_task(group.commit("q"))
        await asyncio.sleep(0)
        gone.cancel()
        await kept

    asyncio.run(scenario())
    assert log.batches == [["p", "q"]]
