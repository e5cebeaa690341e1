"""Job array task ids: ``--array=0-15``, ``1,3,5-9:2``, ``0-99%4``.

A :class:`TaskSet` holds task ids as a few stepped ranges, so that an array
of 10,000 tasks costs a handful of integers, not 10,000; it is kept as
text (``"0-15"``, ``"1,3,5-9:2"``) in job records and replies, formatted
as Slurm prints ``ArrayTaskId``.

Imports nothing (the commands use it; it must stay cheap to import).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_ARRAY_SIZE = 1001  # Slurm's default MaxArraySize: task ids 0..1000
NO_TASK = "4294967294"  # what Slurm prints for the task id of a job that is not an array task

Range = tuple[int, int, int]  # first, last, step (first..last inclusive, last on the step)


def _ranges_of(ids: list[int]) -> tuple[Range, ...]:
    """Sorted distinct ids as the fewest ranges, greedily: runs of 3+ evenly spaced ids."""
    ranges: list[Range] = []
    i, n = 0, len(ids)
    while i < n:
        if i + 1 < n:
            step = ids[i + 1] - ids[i]
            j = i + 1
            while j + 1 < n and ids[j + 1] - ids[j] == step:
                j += 1
            if step == 1 or j - i >= 2:
                ranges.append((ids[i], ids[j], step))
                i = j + 1
                continue
        ranges.append((ids[i], ids[i], 1))
        i += 1
    return tuple(ranges)


class TaskSet:
    """An ordered set of array task ids, stored as stepped ranges (immutable).

    A plain class, not a dataclass: the commands import this module, and
    ``dataclasses`` would cost them ~20 ms of start-up.
    """

    __slots__ = ("ranges",)

    def __init__(self, ranges: tuple[Range, ...] = ()) -> None:
        self.ranges = ranges

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        return hash(self.ranges)

    def __repr__(self) -> str:
        return f"TaskSet({str(self)!r})"

    @classmethod
    def of(cls, ids: list[int]) -> TaskSet:
        """The set of the given ids.

        Args:
            ids: task ids, in any order, repeats allowed.

        Returns:
            The set.
        """
        return cls(_ranges_of(sorted(set(ids))))

    @classmethod
    def parse(cls, text: str) -> TaskSet:
        """Read ``"1,3,5-9:2"`` (no throttle; see :func:`parse_array`).

        Args:
            text: comma-separated ids and ``first-last[:step]`` ranges; "" is empty.

        Returns:
            The set.

        Raises:
            ValueError: malformed, or a range that runs backwards.
        """
        if not text:
            return cls()
        parsed: list[Range] = []
        for item in text.split(","):
            span, colon, step_text = item.partition(":")
            first_text, dash, last_text = span.partition("-")
            first = _number(first_text)
            last = _number(last_text) if dash else first
            step = _number(step_text) if colon else 1
            if last < first or step < 1 or (colon and not dash):
                raise ValueError(f"bad task range {item!r}")
            parsed.append((first, last - (last - first) % step, step))
        if len(parsed) == 1:
            return cls(tuple(parsed))
        return cls.of([i for r in parsed for i in range(r[0], r[1] + 1, r[2])])

    def __iter__(self) -> Iterator[int]:
        for first, last, step in self.ranges:
            yield from range(first, last + 1, step)

    def __len__(self) -> int:
        return sum((last - first) // step + 1 for first, last, step in self.ranges)

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __contains__(self, task: object) -> bool:
        return isinstance(task, int) and any(
            first <= task <= last and (task - first) % step == 0
            for first, last, step in self.ranges
        )

    def first(self) -> int:
        """The lowest id (the set must not be empty)."""
        return self.ranges[0][0]

    def last(self) -> int:
        """The highest id (the set must not be empty)."""
        return max(last for _, last, _ in self.ranges)

    def take(self, count: int) -> list[int]:
        """The ``count`` lowest ids (fewer when the set is smaller).

        Args:
            count: how many.

        Returns:
            The ids, ascending.
        """
        taken: list[int] = []
        for task in self:
            if len(taken) >= count:
                break
            taken.append(task)
        return taken

    def without(self, tasks: TaskSet | list[int]) -> TaskSet:
        """The set minus some ids; removing the lowest id costs O(ranges).

        Args:
            tasks: the ids to remove.

        Returns:
            The smaller set.
        """
        drop = list(tasks)
        if len(drop) == 1 and self.ranges and drop[0] == self.ranges[0][0]:
            first, last, step = self.ranges[0]
            rest = self.ranges[1:]
            return TaskSet(rest if first == last else ((first + step, last, step), *rest))
        gone = set(drop)
        return TaskSet.of([t for t in self if t not in gone])

    def step(self) -> int:
        """SLURM_ARRAY_TASK_STEP: the spacing of a single range, else 1."""
        return self.ranges[0][2] if len(self.ranges) == 1 else 1

    def __str__(self) -> str:
        items = []
        for first, last, step in self.ranges:
            if first == last:
                items.append(str(first))
            elif step == 1:
                items.append(f"{first}-{last}")
            else:
                items.append(f"{first}-{last}:{step}")
        return ",".join(items)


def _number(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"not a task id: {text!r}")
    return int(text)


def parse_array(text: str, max_size: int = MAX_ARRAY_SIZE) -> tuple[TaskSet, int]:
    """Read ``--array``: ids and ranges, then an optional ``%throttle``.

    Args:
        text: the option's value.
        max_size: MaxArraySize; task ids must be below it.

    Returns:
        ``(tasks, throttle)``; throttle 0 means no limit.

    Raises:
        ValueError: Slurm's "Invalid job array specification".
    """
    spec, percent, throttle_text = text.strip().partition("%")
    try:
        tasks = TaskSet.parse(spec)
        throttle = _number(throttle_text) if percent else 0
    except ValueError:
        raise ValueError("Invalid job array specification") from None
    if not tasks or tasks.last() >= max_size:
        raise ValueError("Invalid job array specification")
    return tasks, throttle


SHOWN_TASKS_MAX = 64  # Slurm's SLURM_BITSTR_LEN default: a longer list is cut short with "..."


def array_label(tasks: str, throttle: int) -> str:
    """The pending tasks of an array as squeue, scontrol and sacct show them: ``1,3,5%2``.

    As Slurm's ``xlate_array_task_str``: ids evenly spaced by more than one,
    over more than ten and more than five of them, are ``first-last:step``;
    others are runs of consecutive ids (``0-3,7``), the text cut to 60
    characters and ``...`` when it is longer than 61.

    Args:
        tasks: the pending ids (TaskSet text).
        throttle: ArrayTaskThrottle (0: none).

    Returns:
        The label, e.g. ``1,3,5,7,9%2`` or ``1-91:10``.
    """
    ids = TaskSet.parse(tasks)
    ranges = ids.ranges
    if len(ranges) == 1 and ranges[0][2] > 1 and ranges[0][1] - ranges[0][0] > 10 and len(ids) > 5:
        text = f"{ranges[0][0]}-{ranges[0][1]}:{ranges[0][2]}"
    else:
        text = _runs(ids, SHOWN_TASKS_MAX)
        if len(text) > SHOWN_TASKS_MAX - 3:
            text = text[: SHOWN_TASKS_MAX - 4] + "..."
    return f"{text}%{throttle}" if throttle else text


def _runs(ids: TaskSet, enough: int) -> str:
    """Consecutive ids as ``first-last``, others alone, comma-separated, to about ``enough``."""
    runs: list[list[int]] = []  # [first, last] of each run
    length = 0
    for start, end in _pieces(ids):
        if runs and runs[-1][1] + 1 == start:
            runs[-1][1] = end
            continue
        length += len(str(start)) + len(str(end)) + 2
        if length > 2 * enough:
            break
        runs.append([start, end])
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in runs)


def _pieces(ids: TaskSet) -> Iterator[tuple[int, int]]:
    """The ids in order as spans of consecutive ids: whole ranges of step 1, else one by one."""
    for first, last, step in ids.ranges:
        if step == 1:
            yield first, last
        else:
            yield from ((task, task) for task in range(first, last + 1, step))


def parse_job_ref(text: str) -> tuple[int, TaskSet | None, str]:
    """A job as users name it: ``123``, ``123_4``, ``123_[1-3]``, ``123.0``, ``123.batch``.

    Args:
        text: the reference.

    Returns:
        ``(job_id, tasks, step)``: tasks None when no ``_`` part was given,
        step "" when no ``.`` part was given.

    Raises:
        ValueError: malformed.
    """
    head, dot, step = text.partition(".")
    job_text, under, task_text = head.partition("_")
    job_id = _number(job_text)
    if dot and not step:
        raise ValueError(f"bad job id {text!r}")
    if not under:
        return job_id, None, step
    if task_text.startswith("[") and task_text.endswith("]"):
        task_text = task_text[1:-1].split("%")[0]
    tasks = TaskSet.parse(task_text)
    if not tasks:
        raise ValueError(f"bad job id {text!r}")
    return job_id, tasks, step
