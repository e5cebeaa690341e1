"""Output formatting shared by squeue, sinfo and scontrol.

Slurm's commands print columns from ``%[.][width]code[suffix]`` format
strings (``squeue -o``, ``sinfo -o``) and ``name[:[.]width[suffix]]`` lists
(``squeue -O``). This module parses both forms into :class:`Column` objects
and pads or cuts values exactly as Slurm's ``_print_str`` does; it also holds
the small value formats those commands share (timestamps, user names, the
date line of ``-l``, Slurm-style JSON).

Pure functions, cheap to import (``pwd``, ``grp`` and ``time`` only); imports
none of ctld or nodeagent.
"""

from __future__ import annotations

import grp
import pwd
import time

from cli import timefmt
from minislurm import units
from minislurm.stepids import step_id_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable

    from minislurm.wire.protowire import Message

LONG_DEFAULT_WIDTH = 20  # -O fields without a width


class Column:
    """One field of a format: its code, width, justification and suffix.

    ``literal`` columns (the text before the first ``%``, or an invalid
    specification, which Slurm prints as written) print ``text`` as is.

    Args:
        code: the field code (``i``, ``P``) or long name (``jobid``).
        width: minimum width (0: as wide as the value).
        right: right-justify (the ``.`` of ``%.18i``).
        suffix: text printed after the field.
        literal: print ``suffix`` alone, as text.
    """

    __slots__ = ("code", "literal", "right", "suffix", "width")

    def __init__(
        self,
        code: str,
        width: int = 0,
        right: bool = False,
        suffix: str = "",
        literal: bool = False,
    ) -> None:
        self.code = code
        self.width = width
        self.right = right
        self.suffix = suffix
        self.literal = literal

    def __repr__(self) -> str:
        if self.literal:
            return f"Column(literal={self.suffix!r})"
        return f"Column({self.code!r}, {self.width}, {self.right}, {self.suffix!r})"


def cell(text: str, width: int, right: bool, cut: bool = True) -> str:
    """Pad (and cut) one value as Slurm's ``_print_str`` does.

    Left-justified values are always cut to the width (Slurm prints them
    with ``%.<width>s``); right-justified ones only when ``cut``.

    Args:
        text: the value.
        width: the field width; 0 prints the value as it is.
        right: right-justify within the width.
        cut: cut right-justified values longer than the width to its first
            ``width`` characters.

    Returns:
        The text of the cell.
    """
    if width <= 0:
        return text
    if cut or not right:
        text = text[:width]
    return text.rjust(width) if right else text.ljust(width)


def parse_format(spec: str, known: Container[str]) -> tuple[list[Column], list[str]]:
    """Parse a ``%[.][width]code[suffix]`` format (``squeue -o``, ``sinfo -o``).

    Splits on ``%`` the way ``strtok`` does (so ``%%`` vanishes); text before
    the first ``%`` is printed as is; a specification whose code is not in
    ``known`` is printed as written (``%5!x``) and reported.

    Args:
        spec: the format string.
        known: the valid field codes (single characters).

    Returns:
        ``(columns, errors)``: errors are the invalid codes (``""`` when the
        specification ended before its code), for ``Invalid ... format
        specification: X`` messages.
    """
    parts = spec.split("%")
    columns = [Column("", suffix=parts[0], literal=True)] if parts[0] else []
    errors: list[str] = []
    for token in parts[1:]:
        if not token:
            continue
        right = token.startswith(".")
        i = 1 if right else 0
        start = i
        while i < len(token) and token[i].isdigit():
            i += 1
        width = int(token[start:i]) if i > start else 0
        code = token[i : i + 1]
        if code and code in known:
            columns.append(Column(code, width, right, token[i + 1 :]))
        else:
            errors.append(code)
            columns.append(Column("", suffix="%" + token, literal=True))
    return columns, errors


def parse_long_format(spec: str, known: Container[str]) -> tuple[list[Column], list[str]]:
    """Parse a ``name[:[.][width][suffix]],...`` format (``squeue -O``).

    Names are case-insensitive; a name without ``:`` gets width 20, left
    justified; an unknown name is dropped and reported.

    Args:
        spec: the format string.
        known: the valid names, lower case.

    Returns:
        ``(columns, errors)`` with codes in lower case; errors are the unknown names.
    """
    columns: list[Column] = []
    errors: list[str] = []
    for token in spec.split(","):
        if not token:
            continue
        name, colon, rest = token.partition(":")
        if name.lower() not in known:
            errors.append(name)
            continue
        if not colon:
            columns.append(Column(name.lower(), LONG_DEFAULT_WIDTH))
            continue
        right = rest.startswith(".")
        i = 1 if right else 0
        start = i
        while i < len(rest) and rest[i].isdigit():
            i += 1
        width = int(rest[start:i]) if i > start else 0
        columns.append(Column(name.lower(), width, right, rest[i:]))
    return columns, errors


def render(columns: Iterable[Column], value: Callable[[Column], tuple[str, bool]]) -> str:
    """One line of output: every column's cell and suffix, concatenated.

    Args:
        columns: the parsed format.
        value: ``value(column) -> (text, cut)`` for non-literal columns.

    Returns:
        The line, without a newline.
    """
    out = []
    for column in columns:
        if column.literal:
            out.append(column.suffix)
            continue
        text, cut = value(column)
        out.append(cell(text, column.width, column.right, cut))
        out.append(column.suffix)
    return "".join(out)


# --------------------------------------------------------------------------- values


def timestamp_or(epoch: int, missing: str = "N/A") -> str:
    """A time as squeue and sinfo print it (``2026-11-30T04:26:06``, or SLURM_TIME_FORMAT's).

    Args:
        epoch: seconds since the epoch; 0 means unset.
        missing: what to print when unset (squeue: ``N/A``, scontrol: ``Unknown``).

    Returns:
        The local time, or ``missing``.
    """
    if not epoch or epoch == units.INFINITE:
        return missing
    return timefmt.timestamp(epoch)


def step_ref(step: Message) -> str:
    """A step as squeue and scontrol name it: ``12.0``, ``12.batch``, an array task's ``16_4.0``.

    Args:
        step: a StepInfo.

    Returns:
        The text.
    """
    job = f"{step.array_job_id}_{step.array_task_id}" if step.array_job_id else str(step.job_id)
    return f"{job}.{step_id_text(step.step_id)}"


def date_line(now: float | None = None) -> str:
    """The date line ``squeue -l``, ``sinfo -l`` and ``-i`` print first (``%a %b %d %T %Y``).

    Args:
        now: the time to print (default: the current time).

    Returns:
        e.g. ``Mon Nov 30 04:26:12 2026``.
    """
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now))


_USERS: dict[int, str] = {}
_GROUPS: dict[int, str] = {}


def user_name(uid: int, known: str = "") -> str:
    """A user's name as Slurm prints it.

    Args:
        uid: the user id.
        known: the name the controller sent ("" when it sent none).

    Returns:
        ``known``, else the passwd name, else the uid as text.
    """
    if known:
        return known
    if uid not in _USERS:
        try:
            _USERS[uid] = pwd.getpwuid(uid).pw_name
        except KeyError:
            _USERS[uid] = str(uid)
    return _USERS[uid]


def group_name(gid: int, known: str = "") -> str:
    """A group's name as Slurm prints it.

    Args:
        gid: the group id.
        known: the name the controller sent ("" when it sent none).

    Returns:
        ``known``, else the group database's name, else the gid as text.
    """
    if known:
        return known
    if gid not in _GROUPS:
        try:
            _GROUPS[gid] = grp.getgrgid(gid).gr_name
        except KeyError:
            _GROUPS[gid] = str(gid)
    return _GROUPS[gid]


def resolve_user(text: str) -> int | None:
    """A user name or number, as ``-u`` options take them.

    Args:
        text: a name, or a numeric uid.

    Returns:
        The uid, or None when no such user exists (Slurm rejects unknown
        numbers too).
    """
    try:
        if text.isdigit():
            return pwd.getpwuid(int(text)).pw_uid
        return pwd.getpwnam(text).pw_uid
    except (KeyError, OverflowError):
        return None


def strtol(text: str) -> tuple[int, str]:
    """C's ``strtol(text, &end, 10)``, as Slurm's commands read ids: ``"12.0"`` is ``(12, ".0")``.

    Args:
        text: the text.

    Returns:
        The leading number (0 when there is none) and the text after it (all
        of it when there is no number).
    """
    stripped = text.lstrip()
    i = 1 if stripped[:1] in ("+", "-") else 0
    j = i
    while j < len(stripped) and stripped[j].isdigit():
        j += 1
    if j == i:
        return 0, text
    return int(stripped[:j]), stripped[j:]


def split_list(text: str) -> list[str]:
    """A comma-separated option value, empty items dropped.

    Args:
        text: e.g. ``"gpu,debug"``.

    Returns:
        The items.
    """
    return [item for item in text.split(",") if item]


def split_jobs(text: str) -> list[str]:
    """A comma-separated list of job references; commas inside ``[...]`` do not split.

    Args:
        text: e.g. ``"12,13_[1,3-5],14.0"``.

    Returns:
        The references, empty items dropped.
    """
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item for item in items if item]


# --------------------------------------------------------------------------- job states

# Slurm's job states and their compact codes, in the order of its error message.
JOB_STATES = {
    "PENDING": "PD",
    "RUNNING": "R",
    "SUSPENDED": "S",
    "COMPLETED": "CD",
    "CANCELLED": "CA",
    "FAILED": "F",
    "TIMEOUT": "TO",
    "NODE_FAIL": "NF",
    "PREEMPTED": "PR",
    "BOOT_FAIL": "BF",
    "DEADLINE": "DL",
    "OUT_OF_MEMORY": "OOM",
    "COMPLETING": "CG",
    "CONFIGURING": "CF",
    "RESIZING": "RS",
    "RESV_DEL_HOLD": "RD",
    "REQUEUED": "RQ",
    "REQUEUE_FED": "RF",
    "REQUEUE_HOLD": "RH",
    "REVOKED": "RV",
    "SIGNALING": "SI",
    "SPECIAL_EXIT": "SE",
    "STAGE_OUT": "SO",
    "STOPPED": "ST",
}
_STATE_BY_CODE = {code: name for name, code in JOB_STATES.items()}


def job_state_name(text: str) -> str | None:
    """A job state as users type it (``PD``, ``running``): its full name.

    Args:
        text: a state name or compact code, any case.

    Returns:
        The full name (``PENDING``), or None when it is not a job state.
    """
    upper = text.upper()
    return upper if upper in JOB_STATES else _STATE_BY_CODE.get(upper)


# --------------------------------------------------------------------------- JSON


def to_json(value: object, indent: int = 0) -> str:
    """Serialise as Slurm's ``--json`` does: two-space indent, ``\\/`` escaped.

    Empty lists print as ``[`` newline ``]`` like Slurm's serializer (json's
    ``[]`` would differ); ``None`` prints ``null``.

    Args:
        value: dicts, lists, strings, numbers, booleans and None.
        indent: the current depth.

    Returns:
        The JSON text.
    """
    pad = "  " * (indent + 1)
    end = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{\n" + end + "}"
        items = [f"{pad}{_json_string(str(k))}: {to_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list):
        items = [pad + to_json(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + ("\n" if items else "") + end + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return repr(value)
    return _json_string(str(value))


_JSON_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "\\/",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def _json_string(text: str) -> str:
    out = []
    for char in text:
        escaped = _JSON_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char < " ":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def over_subscribe(job: Message) -> str:
    """OverSubscribe as scontrol and squeue show it: NO for an exclusive job.

    Args:
        job: a JobInfo.

    Returns:
        NO (--exclusive, or --reboot), USER or MCS (--exclusive=user|mcs),
        YES (--oversubscribe) or OK.
    """
    options = job.options or {}
    if job.exclusive or "reboot" in options:
        return "NO"
    if options.get("exclusive"):
        return str(options["exclusive"]).upper()
    return "YES" if job.over_subscribe or "oversubscribe" in options else "OK"
