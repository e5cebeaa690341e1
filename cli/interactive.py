"""Interactive mode of scontrol and sacctmgr: one command per line of stdin.

As Slurm's: each line is prompted for with ``<prog>: ``, and when stdin is
not a terminal the line read is echoed after the prompt (readline does so),
so a transcript reads like a session. ``quit`` or ``exit`` ends it, as does
the end of input (after one last prompt). The exit status is the last
command's; an empty line counts as a failure, as it does in Slurm.

Imports the standard library only.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable


def run_lines(prog: str, command: Callable[[list[str]], int]) -> int:
    """Read and run commands until ``quit``, ``exit`` or the end of input.

    Args:
        prog: the command's name, for the prompt.
        command: runs one line's words and returns its exit status.

    Returns:
        The exit status of the last line.
    """
    status = 0
    echo = not sys.stdin.isatty()
    while True:
        sys.stdout.write(f"{prog}: ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stdout.write("\n")
            return status
        if echo:
            sys.stdout.write(line if line.endswith("\n") else line + "\n")
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        if not words:
            status = 1
            continue
        if words[0].lower() in ("quit", "exit"):
            return status
        status = command(words)
