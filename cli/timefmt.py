"""Time stamps as Slurm's commands print them, in the form ``SLURM_TIME_FORMAT`` asks for.

``standard`` (the default, also when unset or empty): ``2026-11-30T04:26:06``.
``relative``: ``04:26:06`` today, ``Ystday 04:26``, ``Tomorr 04:26``, the
weekday for the coming week (``Mon 04:26``), ``30 Nov 04:26`` within a
year, ``30 Nov 2026`` beyond. Anything else with a ``%`` and shorter than
32 characters is a ``strftime`` format; any other value is refused once
per command (``<command>: error: invalid SLURM_TIME_FORMAT = '...'``) and
the standard form is used. As in Slurm, what does not fit in 31
characters is cut there. Local time throughout.

Imports the standard library only.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping

STANDARD = "%Y-%m-%dT%H:%M:%S"
RELATIVE = "relative"
MAX_FORMAT = 31  # Slurm keeps formats, and what they print, in 32-byte buffers
_warned: set[str] = set()  # the bad values already complained about


def time_format(environ: Mapping[str, str]) -> tuple[str, str]:
    """The time format ``SLURM_TIME_FORMAT`` names.

    Args:
        environ: the environment.

    Returns:
        ``(format, error)``: a strftime format or ``relative``, and Slurm's
        complaint ("" when the value was fine).
    """
    value = environ.get("SLURM_TIME_FORMAT", "")
    if value in ("", "standard"):
        return STANDARD, ""
    if value == RELATIVE:
        return RELATIVE, ""
    if "%" not in value or len(value) > MAX_FORMAT:
        return STANDARD, f"invalid SLURM_TIME_FORMAT = '{value}'"
    return value, ""


def _format() -> str:
    chosen, error = time_format(os.environ)
    if error and error not in _warned:
        _warned.add(error)
        sys.stderr.write(f"{os.path.basename(sys.argv[0])}: error: {error}\n")
    return chosen


def relative_format(when: time.struct_time, today: time.struct_time) -> str:
    """The strftime format of the ``relative`` form for a time, seen from today.

    Args:
        when: the time, local.
        today: now, local.

    Returns:
        A format (Slurm's ``_relative_date_fmt``).
    """
    distance = (1000 * when.tm_year + when.tm_yday) - (1000 * today.tm_year + today.tm_yday)
    if distance == -1:
        return "Ystday %H:%M"
    if distance == 0:
        return "%H:%M:%S"
    if distance == 1:
        return "Tomorr %H:%M"
    if distance < -365 or distance > 365:
        return "%-d %b %Y"
    if distance < -1 or distance > 6:
        return "%-d %b %H:%M"
    return "%a %H:%M"


def format_time(epoch: float, form: str, now: float) -> str:
    """One time stamp in a given form.

    Args:
        epoch: seconds since the epoch.
        form: a strftime format, or ``relative``.
        now: the current time (for ``relative``).

    Returns:
        The text, at most 31 characters.
    """
    when = time.localtime(epoch)
    if form == RELATIVE:
        form = relative_format(when, time.localtime(now))
    return time.strftime(form, when)[:MAX_FORMAT]


def timestamp(epoch: float) -> str:
    """A set time stamp as this command prints it (``SLURM_TIME_FORMAT``).

    Args:
        epoch: seconds since the epoch (not 0).

    Returns:
        The text.
    """
    return format_time(epoch, _format(), time.time())
