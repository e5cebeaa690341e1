"""squeue's input environment variables, as its man page lists them.

Each stands for an option when the command line does not give it:
``SQUEUE_ACCOUNT`` (-A), ``SQUEUE_NAMES`` (--name), ``SQUEUE_PARTITION``
(-p), ``SQUEUE_QOS`` (-q), ``SQUEUE_STATES`` (-t), ``SQUEUE_USERS`` (-u),
``SQUEUE_SORT`` (-S), ``SQUEUE_LICENSES`` (-L), and, set to anything,
``SQUEUE_ALL`` (-a), ``SQUEUE_ARRAY`` (-r), ``SQUEUE_PRIORITY`` (-P).
``SQUEUE_FORMAT`` (-o), else ``SQUEUE_FORMAT2`` (-O), apply when neither
-o nor -O is given (an empty one prints empty lines; -l wins over
SQUEUE_FORMAT, as in Slurm).

Pure; imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import Mapping

VALUES = (
    ("SQUEUE_ACCOUNT", "account"),
    ("SQUEUE_NAMES", "name"),
    ("SQUEUE_PARTITION", "partition"),
    ("SQUEUE_QOS", "qos"),
    ("SQUEUE_STATES", "states"),
    ("SQUEUE_USERS", "user"),
    ("SQUEUE_SORT", "sort"),
    ("SQUEUE_LICENSES", "licenses"),
)
FLAGS = (("SQUEUE_ALL", "all"), ("SQUEUE_ARRAY", "array"), ("SQUEUE_PRIORITY", "priority"))


def with_environment(values: dict[str, object], environ: Mapping[str, str]) -> dict[str, object]:
    """The options, completed by the environment where the command line is silent.

    Args:
        values: the parsed command-line options.
        environ: the environment.

    Returns:
        The options to use, with ``env_format``/``env_Format`` for the
        environment's output format (apart, since -l may stand beside it).
    """
    merged = dict(values)
    for variable, option in VALUES:
        if option not in merged and variable in environ:
            merged[option] = environ[variable]
    for variable, option in FLAGS:
        if variable in environ:
            merged.setdefault(option, True)
    if "format" not in values and "Format" not in values:
        if "SQUEUE_FORMAT" in environ:
            merged["env_format"] = environ["SQUEUE_FORMAT"]
        elif "SQUEUE_FORMAT2" in environ:
            merged["env_Format"] = environ["SQUEUE_FORMAT2"]
    return merged
