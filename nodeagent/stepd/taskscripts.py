"""TaskProlog and TaskEpilog: the site's programs stepd runs as the user around each task.

As Slurm's slurmstepd: the TaskProlog runs before a task starts, with the
task's environment, and what it prints sets that environment: ``export
NAME=value`` sets a variable, ``unset NAME`` removes one, ``print text``
writes a line to the task's standard output; other lines are ignored, as
is its standard error. A TaskProlog that fails keeps its task from
starting. The TaskEpilog runs once the task has ended; its failure is
only logged.

Imports the standard library and nodeagent.stepd.common.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from nodeagent.stepd.common import log

PROLOG_TASK = "prolog_task"  # SLURM_SCRIPT_CONTEXT
EPILOG_TASK = "epilog_task"


@dataclass(frozen=True)
class PrologResult:
    """What a TaskProlog did: the task's environment after it, and what it printed."""

    env: dict[str, str]
    printed: bytes
    error: str = ""  # why the task may not start ("" when it may)


def apply_output(env: dict[str, str], output: str) -> tuple[dict[str, str], bytes]:
    """A task's environment after its TaskProlog printed ``output``.

    Args:
        env: the task's environment.
        output: the TaskProlog's standard output.

    Returns:
        The new environment, and the ``print`` lines for the task's output.
    """
    env = dict(env)
    printed = []
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word == "export":
            name, eq, value = rest.partition("=")
            if eq and name:
                env[name] = value
        elif word == "unset" and rest.strip():
            env.pop(rest.strip(), None)
        elif word == "print":
            printed.append(rest + "\n")
    return env, "".join(printed).encode()


def _run(program: str, env: dict[str, str], cwd: str, context: str) -> tuple[int, bytes]:
    """Run one of them with the task's environment: its status and standard output.

    Raises:
        OSError: it could not be started.
    """
    done = subprocess.run(
        [program],
        env={**env, "SLURM_SCRIPT_CONTEXT": context},
        cwd=cwd if os.path.isdir(cwd) else "/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode, done.stdout


def task_prolog(program: str, env: dict[str, str], cwd: str) -> PrologResult:
    """Run the TaskProlog of one task (stepd runs as the task's user already).

    Args:
        program: the TaskProlog.
        env: the task's environment.
        cwd: the task's directory.

    Returns:
        The task's environment, the lines to print before it starts, and an
        error when the program failed.
    """
    try:
        status, output = _run(program, env, cwd, PROLOG_TASK)
    except OSError as error:
        return PrologResult(env, b"", f"TaskProlog {program}: {error.strerror}")
    if status != 0:
        return PrologResult(env, b"", f"TaskProlog failed status={status}")
    new_env, printed = apply_output(env, output.decode(errors="replace"))
    return PrologResult(new_env, printed)


def task_epilog(program: str, env: dict[str, str], cwd: str) -> None:
    """Run the TaskEpilog of one ended task; a failure is only logged.

    Args:
        program: the TaskEpilog.
        env: the task's environment.
        cwd: the task's directory.
    """
    try:
        status, _ = _run(program, env, cwd, EPILOG_TASK)
    except OSError as error:
        log(f"TaskEpilog {program}: {error.strerror}")
        return
    if status != 0:
        log(f"TaskEpilog failed status={status}")
