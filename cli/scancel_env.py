"""scancel's input environment variables, as its man page lists them.

Each stands for an option the command line does not give:
``SCANCEL_ACCOUNT`` (-A), ``SCANCEL_NAME`` (-n), ``SCANCEL_PARTITION``
(-p), ``SCANCEL_QOS`` (-q), ``SCANCEL_STATE`` (-t), ``SCANCEL_USER``
(-u), and the switches ``SCANCEL_BATCH`` (-b), ``SCANCEL_FULL`` (-f),
``SCANCEL_INTERACTIVE`` (-i), ``SCANCEL_VERBOSE`` (-v), which take
``true``/``T`` or ``false``/``F`` (anything else is Slurm's
``Unrecognized SCANCEL_BATCH value: x``, and ignored); ``SCANCEL_HURRY``
(-H) set to anything. ``SCANCEL_CTLD`` and ``SCANCEL_WCKEY`` name
features this cluster does not have and change nothing.

Pure; imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import Mapping

VALUES = (
    ("SCANCEL_ACCOUNT", "account"),
    ("SCANCEL_NAME", "name"),
    ("SCANCEL_PARTITION", "partition"),
    ("SCANCEL_QOS", "qos"),
    ("SCANCEL_STATE", "state"),
    ("SCANCEL_USER", "user"),
)
SWITCHES = (
    ("SCANCEL_BATCH", "batch"),
    ("SCANCEL_FULL", "full"),
    ("SCANCEL_INTERACTIVE", "interactive"),
)
_TRUE, _FALSE = ("true", "t"), ("false", "f")


def with_environment(
    values: dict[str, object], environ: Mapping[str, str]
) -> tuple[dict[str, object], list[str]]:
    """The options, completed by the environment where the command line is silent.

    Args:
        values: the parsed command-line options.
        environ: the environment.

    Returns:
        The options to use, and Slurm's complaints about values it does not read.
    """
    merged = dict(values)
    errors = []
    for variable, option in VALUES:
        if option not in merged and variable in environ:
            merged[option] = environ[variable]
    for variable, option in (*SWITCHES, ("SCANCEL_VERBOSE", "verbose")):
        if variable not in environ:
            continue
        word = environ[variable].lower()
        if word not in _TRUE + _FALSE:
            errors.append(f"Unrecognized {variable} value: {environ[variable]}")
        elif option not in values:
            on = word in _TRUE
            merged[option] = ([True] if on else []) if option == "verbose" else on
    if "SCANCEL_HURRY" in environ:
        merged.setdefault("hurry", True)
    return merged, errors
