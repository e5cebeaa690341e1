"""The JobInfo messages of GetJobs, each record converted once.

squeue, ``sbatch --wait`` and the tools that poll squeue ask for every job,
again and again, and most records have not changed between two asks: with
10,000 jobs, converting them all took the controller 0.28 s per ask. A job's
message is its record's part (``convert.record_info``, kept while the record
is the same object: records are frozen, and replaced on every change) copied,
plus what changes with time alone (``convert.set_moment``: priority, run time,
a pending job's expected start), set at each ask.

Imports minislurm (the generated stubs only to type its arguments).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from minislurm.wire import convert

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from minislurm.model import Job
    from minislurm.wire.rpc import minislurm_pb2 as pb


class RepeatedJobInfo(Protocol):
    """A reply's repeated JobInfo field."""

    def add(self) -> pb.JobInfo:
        """Append a new, empty element and return it."""


class JobInfos:
    """Each job's ``record_info``, kept with the record it was made from.

    Args:
        jobs: the controller's jobs by id (read, to forget the purged ones).
        priority: ``priority(job, now)``, as shown.
        expected_start: ``expected_start(job)``, a pending job's planned start or 0.
    """

    def __init__(
        self,
        jobs: Mapping[int, Job],
        priority: Callable[[Job, float], int],
        expected_start: Callable[[Job], float],
    ) -> None:
        self._jobs = jobs
        self._priority = priority
        self._expected_start = expected_start
        self._kept: dict[int, tuple[Job, pb.JobInfo]] = {}

    def add(self, out: RepeatedJobInfo, jobs: Iterable[Job], now: float) -> None:
        """Append the JobInfo of each job, as ``convert.job_info`` makes it, to ``out``.

        Args:
            out: a reply's repeated JobInfo field.
            jobs: the jobs, in their order.
            now: the controller's clock.
        """
        kept = self._kept
        priority = self._priority
        expected_start = self._expected_start
        for job in jobs:
            entry = kept.get(job.job_id)
            if entry is None or entry[0] is not job:
                entry = kept[job.job_id] = (job, convert.record_info(job))
            info = out.add()
            info.CopyFrom(entry[1])
            convert.set_moment(info, job, priority(job, now), now, expected_start(job))
        known = self._jobs
        if len(kept) > len(known):  # jobs purged since they were shown
            for job_id in [i for i in kept if i not in known]:
                del kept[job_id]
