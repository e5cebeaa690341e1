"""Slurm's value formats: time limits, durations, memory sizes, gres, signals, timestamps.

Each function parses or prints one format exactly as Slurm 22.05 does
(``src/common/parse_time.c``, ``proc_args.c``, ``gres.c``, ``slurm_protocol_defs.c``
and the print code of ``scontrol``, ``squeue`` and ``sinfo``).

The commands import this module, so it imports nothing at module level but
``time`` (already loaded by the interpreter), and none of our other packages.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

INFINITE = 0xFFFFFFFF
"""Slurm's INFINITE: "no limit" for a time limit in minutes."""

_UNLIMITED_WORDS = frozenset(("UNLIMITED", "INFINITE"))
_DIGITS = frozenset("0123456789")


def _is_number(text: str) -> bool:
    return bool(text) and all(char in _DIGITS for char in text)


# --------------------------------------------------------------------------- time limits


def parse_time_limit(text: str, *, zero_is_infinite: bool = True) -> int:
    """Parse a time limit the way ``sbatch --time`` and slurm.conf ``MaxTime`` read it.

    Accepted forms: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``,
    and ``UNLIMITED``/``INFINITE`` in any case. Seconds round up to the next
    minute (``5:30`` is 6, ``0:30`` is 1).

    Args:
        text: the limit as written.
        zero_is_infinite: a zero limit means "no limit" (sbatch's rule); pass
            False for durations where zero is a real value (``PriorityDecayHalfLife``).

    Returns:
        Minutes, or INFINITE.

    Raises:
        ValueError: anything else (empty, negative, ``abc``, ``1:2:3:4``, ``1-2-3``).
    """
    word = text.strip()
    if word.upper() in _UNLIMITED_WORDS:
        return INFINITE
    seconds = parse_duration_seconds(word)
    if seconds is None:
        raise ValueError(f"Invalid time specification {text!r}")
    minutes = (seconds + 59) // 60
    if minutes == 0 and zero_is_infinite:
        return INFINITE
    return minutes


def parse_duration_seconds(word: str) -> int | None:
    """Seconds in time-limit text (``M``, ``M:S``, ``H:M:S``, ``D-H[:M[:S]]``), or None.

    Args:
        word: the text, stripped.

    Returns:
        Seconds, exactly (no rounding to minutes); None when malformed.
    """
    days_text, dash, clock = word.partition("-")
    if not dash:
        days_text, clock = "0", word
    fields = clock.split(":")
    if not _is_number(days_text) or not all(_is_number(f) for f in fields):
        return None
    values = [int(f) for f in fields]
    if dash:  # D-H, D-H:M, D-H:M:S
        if len(values) > 3:
            return None
        hours, minutes, seconds = (*values, 0, 0)[:3]
    elif len(values) == 1:  # M
        hours, minutes, seconds = 0, values[0], 0
    elif len(values) == 2:  # M:S
        hours, minutes, seconds = 0, values[0], values[1]
    elif len(values) == 3:  # H:M:S
        hours, minutes, seconds = values
    else:
        return None
    return ((int(days_text) * 24 + hours) * 60 + minutes) * 60 + seconds


def format_duration_long(seconds: int) -> str:
    """Print a duration as scontrol prints RunTime: ``00:05:00``, ``2-03:00:00``.

    Args:
        seconds: the duration; INFINITE prints ``UNLIMITED``.

    Returns:
        ``[D-]HH:MM:SS``, or ``INVALID`` for a negative duration (as Slurm).
    """
    if seconds == INFINITE:
        return "UNLIMITED"
    if seconds < 0:
        return "INVALID"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def format_limit_long(minutes: int) -> str:
    """Print a time limit as scontrol prints TimeLimit/MaxTime: ``01:30:00``, ``UNLIMITED``.

    Args:
        minutes: the limit in minutes, or INFINITE.

    Returns:
        ``[D-]HH:MM:SS`` or ``UNLIMITED``.
    """
    if minutes == INFINITE:
        return "UNLIMITED"
    return format_duration_long(minutes * 60)


def format_duration_short(seconds: int) -> str:
    """Print a duration as squeue ``%M`` and sinfo print it: ``0:15``, ``1:30:00``.

    Args:
        seconds: the duration.

    Returns:
        ``M:SS``, ``H:MM:SS`` or ``D-HH:MM:SS`` (no leading zero on the first
        field), or ``INVALID`` for a negative duration (as Slurm).
    """
    if seconds < 0:
        return "INVALID"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def format_limit_short(minutes: int) -> str:
    """Print a time limit as squeue ``%l`` (``TIME_LIMI`` of ``squeue -l``) prints it.

    Args:
        minutes: the limit in minutes, or INFINITE.

    Returns:
        e.g. ``5:00``, ``1:30:00``, or ``UNLIMITED`` for INFINITE.
    """
    if minutes == INFINITE:
        return "UNLIMITED"
    return format_duration_short(minutes * 60)


def format_limit_sinfo(minutes: int) -> str:
    """Print a partition's time limit as sinfo's TIMELIMIT column prints it.

    Args:
        minutes: the limit in minutes, or INFINITE.

    Returns:
        e.g. ``1:00:00``, or ``infinite`` (lower case, unlike squeue) for INFINITE.
    """
    if minutes == INFINITE:
        return "infinite"
    return format_duration_short(minutes * 60)


# --------------------------------------------------------------------------- memory

_MEMORY_FACTORS = {"": 1, "M": 1, "G": 1024, "T": 1024 * 1024}


def parse_memory_mb(text: str) -> int:
    """Parse a memory size as ``--mem`` reads it (Slurm's ``str_to_mbytes``).

    An integer with an optional suffix K, M, G or T (any case, default M),
    optionally followed by ``B`` (``4GB``). Kilobytes round up to whole
    megabytes. Fractions (``1.5G``) are rejected, as Slurm rejects them.

    Args:
        text: e.g. ``"4G"``, ``"512"``, ``"100g"``.

    Returns:
        Megabytes (``4G`` is 4096).

    Raises:
        ValueError: not of that form, or negative.
    """
    word = text.strip()
    end = len(word)
    while end > 0 and word[end - 1] not in _DIGITS:
        end -= 1
    number, suffix = word[:end], word[end:].upper()
    if suffix.endswith("B") and len(suffix) == 2:
        suffix = suffix[:1]
    if not _is_number(number) or (suffix != "K" and suffix not in _MEMORY_FACTORS):
        raise ValueError(f"Invalid memory specification {text!r}")
    value = int(number)
    if suffix == "K":
        return (value + 1023) // 1024  # Slurm rounds kilobytes up
    return value * _MEMORY_FACTORS[suffix]


def format_memory_mb(megabytes: int) -> str:
    """Print a memory size as TRES strings show it: ``mem=8000M``, ``mem=100G``.

    Args:
        megabytes: the size in megabytes.

    Returns:
        The size in the largest unit (M, G, T, P) that divides it exactly,
        e.g. ``8000M``, ``100G``, ``1T``; ``0`` prints ``0M``.
    """
    value, units = megabytes, "MGTP"
    index = 0
    while value and value % 1024 == 0 and index < len(units) - 1:
        value //= 1024
        index += 1
    return f"{value}{units[index]}"


# --------------------------------------------------------------------------- gres


class GresCountError(ValueError):
    """A gres count that is a number but not a whole one (``gpu:1.5``)."""


def parse_gres(text: str, *, signed: bool = False) -> list[tuple[str, str, int]]:
    """Parse a generic-resource list as ``--gres`` and ``Gres=`` read it.

    Each comma-separated item is ``name``, ``name:count``, ``name:type`` or
    ``name:type:count``; the count defaults to 1; a ``gres:`` or ``gres/``
    prefix is tolerated, as Slurm tolerates it. ``""`` and ``none`` give [].
    Whether a name is configured is for the controller to check.

    Args:
        text: e.g. ``"gpu:a100:2,tpu:1"``.
        signed: return a negative count instead of refusing it (the
            controller's answer to ``gpu:-1`` is its own).

    Returns:
        ``[(name, type_or_empty, count), ...]``, e.g. ``[("gpu", "a100", 2), ("tpu", "", 1)]``.

    Raises:
        GresCountError: a count that is not a whole number (``gpu:1.5``).
        ValueError: an empty name, type or count (``gpu:``, ``:4``), a negative
            count (unless signed), or too many fields.
    """
    word = text.strip()
    if not word or word.lower() == "none":
        return []
    return [_parse_gres_item(item, text, signed) for item in word.split(",")]


def _parse_gres_item(item: str, text: str, signed: bool) -> tuple[str, str, int]:
    for prefix in ("gres:", "gres/"):
        if item.lower().startswith(prefix):
            item = item[len(prefix) :]
    fields = item.split(":")
    if len(fields) > 3 or not all(f and f.strip() == f for f in fields):
        raise ValueError(f"Invalid generic resource (gres) specification {text!r}")
    count = 1
    last = fields[-1]
    if len(fields) > 1 and last.lstrip("-").replace(".", "", 1).isdigit() and "." in last:
        raise GresCountError(f"Invalid gres count {last!r} in {text!r}")
    # The last field is a count when it is a number (a MIG type such as
    # ``1g.5gb`` starts with a digit but is not one); a third field must be.
    if len(fields) == 3 or _is_number(last) or last.startswith("-"):
        number = last[1:] if signed and last.startswith("-") else last
        if len(fields) > 1 and not _is_number(number):
            raise ValueError(f"Invalid gres count {last!r} in {text!r}")
        if len(fields) > 1:
            count = int(fields.pop())
    return fields[0], fields[1] if len(fields) == 2 else "", count


def format_gres(items: Iterable[tuple[str, str, int]]) -> str:
    """Print gres as scontrol shows ``Gres=``: ``gpu:8``, ``gpu:a100:2,tpu:1``.

    Args:
        items: ``(name, type_or_empty, count)`` tuples, as ``parse_gres`` returns.

    Returns:
        The comma-separated list (``""`` for none).
    """
    return ",".join(
        f"{name}:{kind}:{number}" if kind else f"{name}:{number}" for name, kind, number in items
    )


# --------------------------------------------------------------------------- signals

# Linux's numbers (x86 and arm), written out because importing ``signal``
# costs the commands ~9 ms (it imports ``enum``).
_SIGNALS = (
    "HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT "
    "CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS"
).split()
_SIGNAL_NUMBERS = {name: number for number, name in enumerate(_SIGNALS, start=1)}
_SIGNAL_NUMBERS.update(IOT=6, CLD=17, POLL=29)
_MAX_SIGNAL = 64  # SIGRTMAX


def parse_signal(text: str) -> int:
    """Parse a signal as ``scancel --signal`` reads it (Slurm's ``sig_name2num``).

    Args:
        text: a name with or without ``SIG``, in any case (``TERM``,
            ``SIGusr1``), or a number (``9``).

    Returns:
        The Linux signal number.

    Raises:
        ValueError: an unknown name, or a number outside 1..64.
    """
    word = text.strip()
    if _is_number(word):
        number = int(word)
        if 1 <= number <= _MAX_SIGNAL:
            return number
        raise ValueError(f"Invalid signal number {text!r}")
    name = word.upper()
    if name.startswith("SIG"):
        name = name[3:]
    if name not in _SIGNAL_NUMBERS:
        raise ValueError(f"Invalid signal name {text!r}")
    return _SIGNAL_NUMBERS[name]


def signal_name(number: int) -> str:
    """Name a signal without ``SIG``, as Slurm prints it (``USR1``).

    Args:
        number: a signal number.

    Returns:
        The name, or the number as text when it has no standard name (real-time signals).
    """
    if 1 <= number <= len(_SIGNALS):
        return _SIGNALS[number - 1]
    return str(number)


# --------------------------------------------------------------------------- timestamps, exit codes


def format_timestamp(epoch_seconds: float | None) -> str:
    """Print a time as scontrol prints SubmitTime: ``2026-11-30T04:26:06``, local time.

    Args:
        epoch_seconds: seconds since the epoch; 0, None and INFINITE mean "not set".

    Returns:
        ``YYYY-MM-DDTHH:MM:SS``, or ``Unknown`` when not set.
    """
    if not epoch_seconds or epoch_seconds == INFINITE:
        return "Unknown"
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(epoch_seconds))


def parse_timestamp(text: str) -> int:
    """Parse ``YYYY-MM-DD[THH:MM[:SS]]`` in local time (the ISO form of ``--begin``).

    Args:
        text: e.g. ``"2026-11-30T04:26:06"`` or ``"2026-11-30"`` (midnight).

    Returns:
        Seconds since the epoch.

    Raises:
        ValueError: not of that form, or a field out of range (month 13, Feb 30, 25:00).
    """
    date, separator, clock = text.strip().partition("T")
    date_fields = date.split("-")
    clock_fields = clock.split(":") if separator else ["0", "0"]
    fields = date_fields + clock_fields + (["0"] if len(clock_fields) == 2 else [])
    shape_ok = len(date_fields) == 3 and len(clock_fields) in (2, 3) and len(date_fields[0]) == 4
    if not shape_ok or not all(_is_number(f) and len(f) <= 4 for f in fields):
        raise ValueError(f"Invalid time specification {text!r}")
    year, month, day, hour, minute, second = (int(f) for f in fields)
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        raise ValueError(f"Invalid date in {text!r}")
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"Invalid time of day in {text!r}")
    return int(time.mktime((year, month, day, hour, minute, second, 0, 0, -1)))


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def format_exit_code(exit_code: int, signal: int = 0) -> str:
    """Print an exit status as Slurm's ExitCode field: ``3:0``, ``0:9``.

    Args:
        exit_code: the process's exit code (0-255).
        signal: the number of the signal that ended it, or 0.

    Returns:
        ``"<exit_code>:<signal>"``.
    """
    return f"{exit_code}:{signal}"


def compress_counts(counts: list[int]) -> str:
    """Slurm's compact form of per-node counts: ``[4, 4]`` -> ``4(x2)``, ``[8, 4]`` -> ``8,4``.

    Args:
        counts: one count per node, in node order.

    Returns:
        The compact text.
    """
    groups: list[list[int]] = []
    for c in counts:
        if groups and groups[-1][0] == c:
            groups[-1][1] += 1
        else:
            groups.append([c, 1])
    return ",".join(str(c) if n == 1 else f"{c}(x{n})" for c, n in groups)
