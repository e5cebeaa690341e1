"""What makes two systems' outputs comparable: each rule names one thing that is bound to differ.

Every case's output goes through :func:`normalise`: the case's working
directory and the slurm.conf path, its own jobs' ids (``<J1>``, ``<J2>``… in
the order the case created them), date-times, the submit host, the user and
group (also the uid of "CANCELLED by"), the cluster's name and
``AllocNode:Sid``. Nothing else is hidden unless a case asks (its ``subst``);
its ``fields``, ``grep`` and ``sort`` then pick what is compared. Imports only
the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cases import Case


@dataclass(frozen=True)
class Context:
    """What one run of a case had that another system's run has differently."""

    workdir: str  # the case's working directory
    conf: str  # the slurm.conf the commands read
    jobs: tuple[int, ...]  # the ids of the jobs the case created, in creation order
    host: str  # the submit host's short name
    user: str
    uid: int
    group: str
    gid: int
    cluster: str  # ClusterName

    def to_json(self) -> dict[str, object]:
        """The context as recorded beside the oracle's output."""
        return {**self.__dict__, "jobs": list(self.jobs)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Context:
        """A recorded context."""
        return cls(**{**data, "jobs": tuple(data["jobs"])})  # type: ignore[arg-type]


DATETIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\b")
USER_ID = re.compile(r"\bUserId=\S+?\(\d+\)")
GROUP_ID = re.compile(r"\bGroupId=\S+?\(\d+\)")
SESSION = re.compile(r"AllocNode:Sid=(\S+):\d+")


# Where a value may stand alone: a job id in ``JobId=12``, ``12.batch``, ``12_3``,
# ``slurm-12.out`` or ``afterok:12`` (not in ``15012`` or ``10.233.0.12``); a name not
# inside a longer name or a path component.
JOB_ID_BOUNDS = (r"(?<![\w.])", r"(?![0-9A-Za-z])")
WORD_BOUNDS = (r"(?<![\w.-])", r"(?![\w-]|\.\w)")


def _replace(text: str, labels: dict[str, str], bounds: tuple[str, str]) -> str:
    """Replace each value of ``labels`` standing alone by its label, keeping columns aligned.

    A value padded into a table column (right-aligned after two or more spaces or at the
    start of a line, or left-aligned before two or more spaces) gives its label the same
    width, so ``   296 gpu`` and ``  1296 gpu`` both read ``  <J1> gpu``: two systems'
    values of different lengths compare alike, and a column of another width still differs.

    Args:
        text: the text.
        labels: value to placeholder.
        bounds: the look-behind and look-ahead that make a value stand alone.

    Returns:
        The text with the values replaced.
    """
    if not labels:
        return text
    alternatives = "|".join(re.escape(v) for v in sorted(labels, key=len, reverse=True))
    token = rf"{bounds[0]}(?P<v>{alternatives}){bounds[1]}"

    def right(m: re.Match[str]) -> str:
        label, width = labels[m["v"]], len(m["pad"]) + len(m["v"])
        at_line_start = m.start() == 0 or m.string[m.start() - 1] == "\n"
        return label.rjust(max(width, len(label) + (0 if at_line_start else 1)))

    def left(m: re.Match[str]) -> str:
        label, width = labels[m["v"]], len(m["v"]) + len(m["pad"])
        return label + m["rest"] + " " * max(width - len(label), 1)

    text = re.sub(rf"(?m)(?P<pad>^ +| {{2,}}){token}", right, text)
    text = re.sub(rf"(?m){token}(?P<rest>\S*?)(?P<pad> {{2,}}| +$)", left, text)
    return re.sub(token, lambda m: labels[m["v"]], text)


def normalise_text(text: str, ctx: Context) -> str:
    """The rules every case gets, in order (paths first: they may hold digits).

    Args:
        text: one stream of a run.
        ctx: that run's context.

    Returns:
        The text with what is bound to differ replaced by placeholders.
    """
    text = text.replace(ctx.workdir, "<WORKDIR>").replace(ctx.conf, "<SLURM_CONF>")
    text = _replace(text, {str(j): f"<J{n}>" for n, j in enumerate(ctx.jobs, 1)}, JOB_ID_BOUNDS)
    text = DATETIME.sub("<DATETIME>", text)
    text = SESSION.sub("AllocNode:Sid=<HOST>:<SID>", text)
    text = text.replace(f"CANCELLED by {ctx.uid}", "CANCELLED by <UID>")
    text = USER_ID.sub("UserId=<USER>(<UID>)", text)
    text = re.sub(rf"\bUserId={ctx.uid}\b", "UserId=<UID>", text)  # scontrol show step
    text = GROUP_ID.sub("GroupId=<GROUP>(<GID>)", text)
    names = {ctx.user: "<USER>", ctx.host: "<HOST>", ctx.cluster: "<CLUSTER>"}
    return _replace(text, names, WORD_BOUNDS)


def _select(text: str, fields: tuple[str, ...], grep: str, sort: bool) -> str:
    """What of a stream a case compares: ``Key=Value`` words of ``fields``, lines matching
    ``grep``, sorted; the text as it is when the case narrows nothing."""
    if not (fields or grep or sort):
        return text
    lines = text.splitlines()
    if fields:
        lines = [
            word
            for line in lines
            for word in line.split()
            if word.partition("=")[1] and word.partition("=")[0] in fields
        ]
    if grep:
        keep = re.compile(grep)
        lines = [line for line in lines if keep.search(line)]
    if sort:
        lines = sorted(lines)
    return "".join(line + "\n" for line in lines)


def normalise(case: Case, ctx: Context, out: str, err: str) -> tuple[str, str]:
    """A run's stdout and stderr as the case compares them.

    Args:
        case: the case (its ``subst``, ``fields``, ``grep``, ``sort``).
        ctx: the run's context.
        out: raw stdout.
        err: raw stderr.

    Returns:
        Normalised stdout and stderr; ``fields`` applies to stdout only.
    """
    streams = []
    for text in (out, err):
        text = normalise_text(text, ctx)
        for regex, replacement in case.subst:
            text = re.sub(regex, replacement, text, flags=re.MULTILINE)
        streams.append(text)
    return (
        _select(streams[0], case.fields, case.grep, case.sort),
        _select(streams[1], (), case.grep, case.sort),
    )
