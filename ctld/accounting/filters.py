"""Which accounting records an :class:`~minislurm.requests.AcctQuery` asks for (sacct's filters).

A job's records (its line, then its steps, as :func:`ctld.accounting.records.job_records`
builds them) are chosen together: the job-level filters (user, partition,
state, time window) look at the job's line only, and ``-j`` picks either a
whole job or single steps (``123.batch``, ``123_4.0``) of it, as sacct does.
The time window follows slurmdbd: without states, records eligible before
the end and not ended before the start; with states, the window applies to
each state in turn (running *during* the window, ended *within* it...).

Pure functions. Imports minislurm's core modules only.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.errors import InvalidRequest
from minislurm.requests import AcctQuery, AcctRecord
from minislurm.states import TERMINAL_JOB_STATES, JobState, parse_job_state

STEP_NAMES = frozenset({"batch", "extern", "interactive"})
_ENDED_STATES = frozenset(state.value for state in TERMINAL_JOB_STATES)
# States Slurm's sacct accepts that our jobs are never in: they select nothing.
_OTHER_STATES = {
    "CF": "CONFIGURING",
    "RD": "RESV_DEL_HOLD",
    "RF": "REQUEUE_FED",
    "RH": "REQUEUE_HOLD",
    "RQ": "REQUEUED",
    "RS": "RESIZING",
    "RV": "REVOKED",
    "SE": "SPECIAL_EXIT",
    "SI": "SIGNALING",
    "SO": "STAGE_OUT",
    "ST": "STOPPED",
}


@dataclass(frozen=True)
class JobSelector:
    """One ``-j`` item: a job (``123``), an array task (``123_4``), maybe one step."""

    job_id: int
    task: int | None = None
    step: str | None = None  # "batch", "0"...; None: the whole job


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def parse_selector(text: str) -> JobSelector:
    """Read one ``-j`` item: ``123``, ``123_4``, ``123.batch``, ``123.0``, ``123_4.batch``.

    Args:
        text: the item.

    Returns:
        The selector.

    Raises:
        InvalidRequest: not of that form (Slurm's ``Bad job/step specified``).
    """
    job_part, dot, step = text.strip().partition(".")
    job_text, underscore, task_text = job_part.partition("_")
    ok = _digits(job_text) and (not underscore or _digits(task_text))
    ok = ok and (not dot or _digits(step) or step in STEP_NAMES)
    if not ok or not 0 < int(job_text) < 1 << 32:
        raise InvalidRequest(f"Bad job/step specified: {text}")
    return JobSelector(
        int(job_text),
        int(task_text) if underscore else None,
        (str(int(step)) if step.isdigit() else step) if dot else None,
    )


def parse_states(names: list[str]) -> list[str]:
    """Read ``-s``: state names or sacct's abbreviations, any case.

    Args:
        names: e.g. ``["CD", "failed"]``.

    Returns:
        The full state names (``COMPLETED``), Slurm's states that our jobs
        never take included.

    Raises:
        InvalidRequest: not a Slurm job state.
    """
    states = []
    for name in names:
        upper = name.strip().upper()
        try:
            states.append(parse_job_state(upper).value)
        except ValueError:
            if upper in _OTHER_STATES or upper in _OTHER_STATES.values():
                states.append(_OTHER_STATES.get(upper, upper))
            else:
                raise InvalidRequest(f"unrecognized job state value {name}") from None
    return states


def select(records: list[AcctRecord], request: AcctQuery, now: float) -> list[AcctRecord]:
    """The records a request asks for, in their order.

    Args:
        records: the records of any number of jobs, each job's line followed
            by its steps (what :func:`ctld.accounting.records.job_records` returns,
            concatenated).
        request: the filters.
        now: the controller's clock (the window's end when only a start is given).

    Returns:
        The chosen records.

    Raises:
        InvalidRequest: a malformed job id or an unknown state.
    """
    selectors = [parse_selector(text) for text in request.jobs]
    query = _Query(request, parse_states(list(request.states)), now)
    chosen: list[AcctRecord] = []
    for group in _groups(records):
        head = group[0]
        if not query.wants_job(head):
            continue
        chosen.extend(r for r in group if _picked(r, head, selectors, request.jobs_only))
    return chosen


def _groups(records: list[AcctRecord]) -> list[list[AcctRecord]]:
    groups: list[list[AcctRecord]] = []
    for record in records:
        if not record.step or not groups or groups[-1][0].job_id_raw != record.job_id_raw:
            groups.append([record])
        else:
            groups[-1].append(record)
    return groups


def _picked(
    record: AcctRecord, head: AcctRecord, selectors: list[JobSelector], jobs_only: bool
) -> bool:
    if jobs_only and record.step:
        return False
    if not selectors:
        return True
    for sel in selectors:
        if not matches_job(head, sel):
            continue
        if sel.step is None or sel.step == record.step:
            return True
    return False


def matches_job(head: AcctRecord, sel: JobSelector) -> bool:
    """Whether a job's line is the job a selector names.

    ``123`` names job 123 and, when 123 is an array, all its tasks (as
    sacct); ``123_4`` names task 4 of array 123, also while it still waits
    in the array's pending record.

    Args:
        head: a job's record.
        sel: the selector.

    Returns:
        True when it names this job.
    """
    if sel.task is None:
        return sel.job_id in (head.job_id_raw, head.array_job_id)
    if head.array_job_id != sel.job_id:
        return False
    if head.array_task_id is not None:
        return head.array_task_id == sel.task
    return sel.task in _pending_tasks(head.job_id)


def _pending_tasks(job_id: str) -> set[int]:
    """Task ids of a pending array record's JobID (``19_[0-3,7%2]``)."""
    inside = job_id.partition("[")[2].partition("]")[0].partition("%")[0]
    tasks: set[int] = set()
    for part in inside.split(","):
        low, _, high = part.partition("-")
        step = 1
        if ":" in high:
            high, _, step_text = high.partition(":")
            step = int(step_text) if step_text.isdigit() else 1
        if low.isdigit() and (not high or high.isdigit()):
            tasks.update(range(int(low), int(high or low) + 1, max(step, 1)))
    return tasks


class _Query:
    """The job-level filters of a request."""

    def __init__(self, request: AcctQuery, states: list[str], now: float):
        self.users = set(request.users)
        self.partitions = set(request.partitions)
        self.states = states
        self.start = request.start_after
        # Given only a start, slurmdbd ends the window now.
        self.end = request.end_before or (int(now) if request.start_after else 0)

    def wants_job(self, head: AcctRecord) -> bool:
        if self.users and head.user not in self.users and str(head.uid) not in self.users:
            return False
        if self.partitions and head.partition not in self.partitions:
            return False
        if self.states:
            return any(self._in_state(head, state) for state in self.states)
        return self._in_window(head)

    def _in_window(self, head: AcctRecord) -> bool:
        if not self.start and not self.end:
            return True
        if not head.eligible_time or head.eligible_time >= self.end:
            return False
        return not self.start or not head.end_time or head.end_time >= self.start

    def _in_state(self, head: AcctRecord, state: str) -> bool:
        start, end = self.start, self.end or 1 << 62
        if not self.start and not self.end:
            return head.state == state
        if state == JobState.PENDING.value:
            left = head.start_time if head.nodes else head.end_time
            return 0 < head.eligible_time <= end and (not left or left >= start)
        if state in (JobState.RUNNING.value, JobState.SUSPENDED.value):
            ran = bool(head.nodes) and 0 < head.start_time <= end
            return ran and (not head.end_time or head.end_time >= start)
        if state in _ENDED_STATES:
            return head.state == state and 0 < head.end_time and start <= head.end_time <= end
        return head.state == state
