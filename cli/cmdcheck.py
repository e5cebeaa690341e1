"""Values of srun's and salloc's own options accepted without effect, checked as Slurm checks them.

These concern the command or its steps alone (CPU and accelerator binding,
MPI, broadcasting files, prolog scripts...): the command checks them, says
what Slurm says of them, and sends nothing (:mod:`minislurm.optcheck` checks
the options kept with a job).

Imports minislurm.optcheck and minislurm.units.
"""

from __future__ import annotations

from minislurm import optcheck, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def _free(text: str) -> str:
    return text


def check_accel_bind(text: str) -> str:
    """srun ``--accel-bind``: the letters g, m, n and v."""
    if not text or any(letter not in "gmnv" for letter in text):
        raise optcheck.invalid("accel-bind")
    return text


def check_cpu_bind(text: str) -> str:
    """srun ``--cpu-bind=[{quiet|verbose},]type``: no CPU is bound here (TaskPlugin=task/none)."""
    if text.lower() == "help":
        raise optcheck.OptionError(
            status=1, output="CPU bind options not supported with current configuration\n"
        )
    words = text.split(",")
    while len(words) > 1 and words[0].lower() in ("quiet", "q", "verbose", "v"):
        words.pop(0)
    kind, colon, rest = ",".join(words).partition(":")
    allowed = {"quiet", "q", "verbose", "v", "none", "no", "rank", "sockets", "cores", "threads"}
    allowed |= {"ldoms", "boards", "rank_ldom"}
    listed = kind.lower() in ("map_cpu", "mask_cpu", "map_ldom", "mask_ldom") and rest
    if not listed and (colon or kind.lower() not in allowed):
        raise optcheck.OptionError(
            "cluster configuration lacks support for cpu binding",
            f'error: unrecognized --cpu-bind argument "{kind}"',
            "fatal: Failed to parse --cpu-bind= values.",
            status=1,
        )
    return text


MPI_TYPES = ("pmix", "none", "cray_shasta", "pmi2")


def check_mpi(text: str) -> str:
    """srun ``--mpi``: one of the MPI plugin types (tasks get no PMI server here)."""
    if text.lower() not in MPI_TYPES and text.lower() != "pmix_v4":
        raise optcheck.OptionError(
            f"error: Couldn't find the specified plugin name for mpi/{text} looking at all files",
            f"error: cannot find mpi plugin for mpi/{text}",
            f"error: MPI: Cannot create context for mpi/{text}",
            "error: MPI: Unable to load any plugin",
            f"error: Invalid MPI type '{text}', --mpi=list for acceptable types",
            status=1,
        )
    return text


def check_het_group(text: str) -> str:
    """srun ``--het-group``: component indices and ranges (``0``, ``0-2,4``)."""
    for word in text.split(","):
        low, _, high = word.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise optcheck.OptionError(
                f"error: _parse_single_range: Invalid range: `{text}'",
                f"error: Invalid --het-group value: {text}",
                status=1,
            )
    return text


def check_kill_command(text: str) -> str:
    """salloc ``--kill-command[=signal]``."""
    if text:
        try:
            units.parse_signal(text)
        except ValueError:
            raise optcheck.invalid("kill-command") from None
    return text


def check_send_libs(text: str) -> str:
    """srun ``--send-libs[=yes|no]``."""
    if text and text.lower() not in ("yes", "y", "no", "n"):
        raise optcheck.invalid("send-libs")
    return text


def compress_warnings(text: str) -> list[str]:
    """srun ``--compress[=type]``: an unknown type is warned about and ignored, as in Slurm.

    Args:
        text: the value.

    Returns:
        The warning, if any.
    """
    if text and text.lower() not in ("lz4", "zlib", "none"):
        return [f"error: Compression type '{text}' unknown, disabling compression support."]
    return []


# Options of srun and salloc that concern only the command (or a step).
COMMAND_OPTIONS: dict[str, Callable[[str], str]] = {
    "accel-bind": check_accel_bind,
    "bcast": _free,
    "bcast-exclude": _free,
    "cpu-bind": check_cpu_bind,
    "epilog": _free,
    "het-group": check_het_group,
    "kill-command": check_kill_command,
    "mpi": check_mpi,
    "msg-timeout": optcheck.counter("msg-timeout"),
    "prolog": _free,
    "resv-ports": lambda text: str(optcheck.count(text, "--resv-port")) if text else text,
    "send-libs": check_send_libs,
    "slurmd-debug": _free,
    "task-epilog": _free,
    "task-prolog": _free,
    "threads": optcheck.counter("threads"),
}


def check(option: str, value: str) -> str:
    """Check one of srun's or salloc's own options as Slurm's client does.

    Args:
        option: the long name (a key of :data:`COMMAND_OPTIONS`).
        value: the value as given ("" for a flag).

    Returns:
        The value.

    Raises:
        OptionError: Slurm's message and exit status.
    """
    return COMMAND_OPTIONS[option](value)
