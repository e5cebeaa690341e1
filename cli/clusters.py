"""``-M/--clusters`` and ``SLURM_CLUSTERS``: the clusters a command is asked about.

This controller knows one cluster, its ``ClusterName``; ``all`` names it
too, in any case. A name it does not know gets Slurm's ``No cluster 'x'
known by database.``; when no name is known, Slurm's second line follows
and the command ends (exit 1). Commands that list (squeue, sinfo, sshare)
then print ``CLUSTER: <name>`` above their header, as Slurm does for a
command given clusters.

Imports cli.common and cli.fmt.
"""

from __future__ import annotations

import os
import sys

from cli import common, fmt

OPTION, VARIABLE = "--cluster", "SLURM_CLUSTERS"


def requested(prog: str, values: dict[str, object]) -> str | None:
    """The cluster a command is asked about: ``-M``, else ``SLURM_CLUSTERS``.

    Args:
        prog: the command's name, for its messages.
        values: the parsed options (``clusters`` holds ``-M``'s value).

    Returns:
        This cluster's name when it is named, None when no cluster is named.

    Raises:
        SystemExit: no name is this cluster's (after Slurm's messages).
    """
    if "clusters" in values:
        return check(prog, str(values["clusters"]), OPTION)
    if VARIABLE in os.environ:
        return check(prog, os.environ[VARIABLE], VARIABLE)
    return None


def check(prog: str, text: str, source: str) -> str:
    """This cluster's name, after complaining of the other names in ``text``.

    Args:
        prog: the command's name.
        text: a comma-separated list of cluster names.
        source: where the list came from (``--cluster`` or ``SLURM_CLUSTERS``).

    Returns:
        This cluster's name.

    Raises:
        SystemExit: no name in the list is this cluster's.
    """
    ours = common.client_config().cluster_name
    names = fmt.split_list(text)
    if any(name.lower() in ("all", ours.lower()) for name in names):
        unknown = [n for n in names if n.lower() not in ("all", ours.lower())]
    else:
        unknown = names or [text]
    for name in unknown:
        sys.stderr.write(f"{prog}: error: No cluster '{name}' known by database.\n")
    if len(unknown) == len(names or [text]):
        sys.stderr.write(
            f"{prog}: error: '{text}' can't be reached now, or it is an invalid entry for "
            f"{source}.  Use 'sacctmgr list clusters' to see available clusters.\n"
        )
        raise SystemExit(1)
    return ours
