"""Slurm's file-name patterns for job output: ``slurm-%j.out``, ``%x-%A_%a.err``.

Codes: ``%%`` ``%A`` (array job id) ``%a`` (array task id) ``%J`` (job.step)
``%j`` (job id) ``%N`` (first node) ``%n`` (node index) ``%s`` (step)
``%t`` (task) ``%u`` (user) ``%x`` (job name). A number between ``%`` and the
code zero-pads (``%4j``). A pattern containing a backslash is taken
literally, with the backslashes removed, as Slurm does.

Imports nothing beyond the standard library.
"""

from __future__ import annotations

import os

DEFAULT_OUTPUT = "slurm-%j.out"
DEFAULT_ARRAY_OUTPUT = "slurm-%A_%a.out"


def expand_pattern(pattern: str, values: dict[str, str], keep: str = "") -> str:
    """Replace the ``%`` codes of ``pattern`` with ``values``.

    Args:
        pattern: the pattern as the user gave it.
        values: code letter -> value (e.g. ``{"j": "42", "x": "train"}``).
            Codes without a value are left as they are.
        keep: code letters to leave unexpanded even when a value is known
            (``scontrol`` shows ``%N`` literally).

    Returns:
        The expanded text.
    """
    if "\\" in pattern:
        return pattern.replace("\\", "")
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch != "%" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        j = i + 1
        while j < n and pattern[j].isdigit():
            j += 1
        if j >= n:
            out.append(pattern[i:])
            break
        code = pattern[j]
        width = int(pattern[i + 1 : j]) if j > i + 1 else 0
        if code == "%":
            out.append("%")
        elif code in values and code not in keep:
            value = values[code]
            out.append(value.zfill(width) if value.isdigit() else value)
        else:
            out.append(pattern[i : j + 1])
        i = j + 1
    return "".join(out)


def output_path(pattern: str, work_dir: str, values: dict[str, str], keep: str = "") -> str:
    """The absolute path an output pattern names, relative to ``work_dir``.

    Args:
        pattern: the user's pattern ("" for nothing given).
        work_dir: the job's working directory.
        values: the ``%`` code values, see :func:`expand_pattern`.
        keep: codes to leave unexpanded.

    Returns:
        The absolute path.
    """
    path = expand_pattern(pattern, values, keep)
    return os.path.normpath(os.path.join(work_dir, path))
