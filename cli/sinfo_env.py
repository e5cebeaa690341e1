"""sinfo's input environment variables, as its man page lists them.

``SINFO_PARTITION`` stands for -p and ``SINFO_SORT`` for -S when the
command line does not give them; ``SINFO_ALL`` for -a (every partition is
shown anyway), and beside ``SINFO_PARTITION`` it is Slurm's error.
``SINFO_FORMAT`` is the format when neither -o nor -O is given, unless -s,
-N or -R choose theirs (it wins over -l, as in Slurm): it comes back as
``env_format``.

Pure; imports cli.common for its error only.
"""

from __future__ import annotations

from collections.abc import Mapping

from cli import common

CONFLICT = (
    "error: Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. "
    "Please choose one or the other."
)


def with_environment(values: dict[str, object], environ: Mapping[str, str]) -> dict[str, object]:
    """The options, completed by the environment where the command line is silent.

    Args:
        values: the parsed command-line options.
        environ: the environment.

    Returns:
        The options to use.

    Raises:
        CommandError: SINFO_ALL beside SINFO_PARTITION.
    """
    if "SINFO_ALL" in environ and "SINFO_PARTITION" in environ:
        raise common.CommandError(CONFLICT)
    merged = dict(values)
    for variable, option in (("SINFO_PARTITION", "partition"), ("SINFO_SORT", "sort")):
        if option not in merged and variable in environ:
            merged[option] = environ[variable]
    if "SINFO_ALL" in environ:
        merged.setdefault("all", True)
    if "SINFO_FORMAT" in environ:
        merged["env_format"] = environ["SINFO_FORMAT"]
    return merged
