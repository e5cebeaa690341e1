"""Job dependencies as users write them: ``afterok:12:13``, ``after:5+10``, ``singleton``.

Items are joined by ``,`` (all must hold) or ``?`` (any one is enough); a
job id may name one array task (``12_3``) or a whole array (``12``). The
text form is also how a job record keeps its dependency: items that were
fulfilled are dropped, items that can never be are marked ``(failed)``,
which is what ``scontrol show job`` prints.

Imports nothing beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = frozenset({"after", "afterany", "afterok", "afternotok", "aftercorr", "singleton"})
FAILED = "(failed)"
UNFULFILLED = "(unfulfilled)"


@dataclass(frozen=True)
class DepItem:
    """One condition: a kind and the job (or array task) it waits on."""

    kind: str
    job_id: int = 0  # 0 for singleton
    task: int | None = None  # an array task of job_id; None: the job, or all its tasks
    minutes: int = 0  # after:ID+minutes
    failed: bool = False  # can never be fulfilled

    def __str__(self) -> str:
        if self.kind == "singleton":
            return "singleton"
        text = f"{self.kind}:{self.job_id}"
        if self.task is not None:
            text += f"_{self.task}"
        if self.minutes:
            text += f"+{self.minutes}"
        return text + (FAILED if self.failed else "")


@dataclass(frozen=True)
class Dependency:
    """A job's dependency: its open items and how they combine."""

    items: tuple[DepItem, ...] = ()
    any_of: bool = False  # joined by "?": one fulfilled item is enough

    def __str__(self) -> str:
        return ("?" if self.any_of else ",").join(str(i) for i in self.items)

    def never_satisfied(self) -> bool:
        """Whether no outcome of the other jobs can fulfil it any more."""
        failed = [i.failed for i in self.items]
        return bool(failed) and (all(failed) if self.any_of else any(failed))

    def shown(self) -> str:
        """As ``scontrol show job`` prints it: ``afterok:14(unfulfilled)``, ``(null)`` when none."""
        if not self.items:
            return "(null)"
        sep = "?" if self.any_of else ","
        return sep.join(str(i) if i.failed else f"{i}{UNFULFILLED}" for i in self.items)


def _job_ref(text: str, kind: str) -> tuple[int, int | None, int]:
    ref, plus, minutes = text.partition("+")
    if plus and (kind != "after" or not minutes.isdigit()):
        raise ValueError(text)
    job_text, under, task_text = ref.partition("_")
    if not job_text.isdigit() or int(job_text) == 0 or (under and not task_text.isdigit()):
        raise ValueError(text)
    return int(job_text), int(task_text) if under else None, int(minutes) if plus else 0


def parse_dependency(text: str) -> Dependency:
    """Read ``--dependency`` (or a stored dependency).

    Args:
        text: e.g. ``afterok:12:13,afterany:14_2`` or ``after:5?afternotok:6``;
            "" means none.

    Returns:
        The dependency.

    Raises:
        ValueError: malformed (Slurm: "Job dependency problem").
    """
    text = text.strip()
    if not text:
        return Dependency()
    if "," in text and "?" in text:
        raise ValueError("Job dependency problem")
    any_of = "?" in text
    items: list[DepItem] = []
    for part in text.split("?" if any_of else ","):
        failed = part.endswith(FAILED)
        words = part.removesuffix(FAILED).split(":")
        kind = words[0]
        if kind not in KINDS or (kind == "singleton") != (len(words) == 1):
            raise ValueError("Job dependency problem")
        if kind == "singleton":
            items.append(DepItem("singleton", failed=failed))
            continue
        for word in words[1:]:
            try:
                job_id, task, minutes = _job_ref(word, kind)
            except ValueError:
                raise ValueError("Job dependency problem") from None
            items.append(DepItem(kind, job_id, task, minutes, failed))
    return Dependency(tuple(items), any_of)
