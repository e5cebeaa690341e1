"""srun ``--multi-prog``: each task runs the program its rank is given in a configuration file.

The file names, a line each, the task ranks (``0``, ``1-3``, ``4,6``, ``*``
for the others) and the program with its arguments, where ``%t`` is the
task's rank and ``%o`` its offset within the line's ranks. srun runs, in
every task, a shell command that picks the line by ``SLURM_PROCID``.

Imports cli.common and the standard library.
"""

from __future__ import annotations

from cli.common import CommandError


def multi_prog(path: str) -> list[str]:
    """``--multi-prog``: the command that runs, in each task, the program its rank is given.

    The configuration file names, a line each, the task ranks (``0``, ``1-3``,
    ``4,6``, ``*`` for the others) and the program with its arguments, in which
    ``%t`` is the task's rank and ``%o`` its offset within the line's ranks.

    Args:
        path: the configuration file (srun's first argument).

    Returns:
        A shell command choosing by ``SLURM_PROCID``.

    Raises:
        CommandError: the file cannot be read, or a line is malformed.
    """
    import shlex

    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        raise CommandError(f"error: Could not open multi_prog config file {path}") from None
    cases, default = [], ""
    for line in lines:
        words = shlex.split(line, comments=True)
        if len(words) < 2:
            continue
        ranks, program = words[0], words[1:]
        if ranks == "*":
            default = _exec(program, '"$SLURM_PROCID"', '"$SLURM_PROCID"')
            continue
        try:
            numbers = [int(r) for r in _expand_ranks(ranks)]
        except ValueError:
            raise CommandError(f"error: Invalid task range specification ({ranks})") from None
        for offset, rank in enumerate(numbers):
            cases.append(f"{rank}) {_exec(program, str(rank), str(offset))} ;;")
    if default:
        cases.append(f"*) {default} ;;")
    script = 'case "$SLURM_PROCID" in\n' + "\n".join(cases) + "\nesac\n"
    return ["/bin/sh", "-c", script, "multi-prog"]


def _expand_ranks(text: str) -> list[str]:
    ranks = []
    for part in text.split(","):
        low, dash, high = part.partition("-")
        ranks += [str(r) for r in range(int(low), int(high) + 1)] if dash else [str(int(low))]
    return ranks


def _exec(program: list[str], task: str, offset: str) -> str:
    """``exec program args...`` with %t and %o replaced (by shell words: numbers or "$VAR")."""
    import shlex

    words = []
    for word in program:
        pieces = []
        for i, part in enumerate(word.split("%t")):
            if i:
                pieces.append(task)
            pieces.append(offset.join(shlex.quote(p) for p in part.split("%o")) if part else "")
        words.append("".join(pieces) or "''")
    return "exec " + " ".join(words)
