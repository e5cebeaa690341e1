"""Standard Workload Format (SWF) traces: reading them, and the jobs they describe.

An SWF file has one job per line, 18 whitespace-separated fields (-1 when
unknown), and header comments starting with ``;`` such as ``; MaxProcs:
240`` or ``; MaxNodes: 256`` (the Parallel Workloads Archive's definition).
A ``.gz`` file is read through gzip.

:func:`trace_jobs` turns records into what the trace simulator runs: a job
asks for its requested processors (field 8, else the allocated ones, field
5), its time limit is the user's estimate (field 9, else its run time), and
it runs its run time (field 4) or until its limit, whichever comes first.

Imports only the standard library.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass

FIELDS = 18
_HEADER = re.compile(r"^;\s*(\w+)\s*:\s*(.*?)\s*$")


class SwfError(ValueError):
    """A malformed SWF line."""


@dataclass(frozen=True)
class SwfRecord:
    """One job line of an SWF file (times in seconds, -1 when unknown)."""

    job_number: int
    submit_time: float
    wait_time: float
    run_time: float
    allocated_procs: int
    requested_procs: int
    requested_time: float
    status: int
    user: int
    partition: int


@dataclass(frozen=True)
class SwfTrace:
    """A trace: its header values and its job records, in file order."""

    header: dict[str, str]
    records: tuple[SwfRecord, ...]

    @property
    def machine_size(self) -> int:
        """Processors of the machine: ``MaxProcs``, else ``MaxNodes``, else 0 when unknown."""
        for key in ("MaxProcs", "MaxNodes"):
            value = self.header.get(key, "")
            if value.isdigit() and int(value) > 0:
                return int(value)
        return 0


@dataclass(frozen=True)
class TraceJob:
    """A job as the simulator runs it."""

    job_id: int
    submit_time: float
    procs: int
    limit: float  # seconds: the time limit (user estimate, else the run time)
    run_time: float  # seconds it runs, at most its limit


def _number(text: str, path: str, line_no: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise SwfError(f"{path}:{line_no}: not a number: {text!r}") from None


def _lines(path: str) -> Iterator[str]:
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as stream:
            yield from stream
    else:
        with open(path, encoding="utf-8", errors="replace") as stream:
            yield from stream


def read_swf(path: str, limit: int | None = None) -> SwfTrace:
    """Read an SWF trace.

    Args:
        path: the file (``.gz`` is decompressed).
        limit: read at most this many job records (None: all).

    Returns:
        The header values and the records.

    Raises:
        OSError: the file cannot be read.
        SwfError: a job line does not have 18 numbers.
    """
    header: dict[str, str] = {}
    records: list[SwfRecord] = []
    for line_no, line in enumerate(_lines(path), 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            match = _HEADER.match(text)
            if match:
                header.setdefault(match.group(1), match.group(2))
            continue
        if limit is not None and len(records) >= limit:
            break
        fields = text.split()
        if len(fields) < FIELDS:
            raise SwfError(f"{path}:{line_no}: {len(fields)} fields, expected {FIELDS}")
        v = [_number(f, path, line_no) for f in fields[:FIELDS]]
        records.append(
            SwfRecord(
                job_number=int(v[0]),
                submit_time=v[1],
                wait_time=v[2],
                run_time=v[3],
                allocated_procs=int(v[4]),
                requested_procs=int(v[7]),
                requested_time=v[8],
                status=int(v[10]),
                user=int(v[11]),
                partition=int(v[15]),
            )
        )
    return SwfTrace(header, tuple(records))


def trace_jobs(records: tuple[SwfRecord, ...], size: int) -> tuple[list[TraceJob], int]:
    """The jobs a machine of ``size`` processors can run, and how many records were skipped.

    A record is skipped when its run time or processor count is not
    positive, or when it asks for more processors than the machine has.

    Args:
        records: the trace's records.
        size: processors of the machine.

    Returns:
        ``(jobs, skipped)``, jobs in record order.
    """
    jobs: list[TraceJob] = []
    skipped = 0
    for rec in records:
        procs = rec.requested_procs if rec.requested_procs > 0 else rec.allocated_procs
        if rec.run_time <= 0 or procs <= 0 or procs > size:
            skipped += 1
            continue
        limit = rec.requested_time if rec.requested_time > 0 else rec.run_time
        jobs.append(
            TraceJob(rec.job_number, rec.submit_time, procs, limit, min(rec.run_time, limit))
        )
    return jobs, skipped
