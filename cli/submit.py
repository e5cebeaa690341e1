"""What the submitting commands (sbatch, and later srun and salloc) share.

Who is submitting, which environment travels with the job, and the
client-side parsing of counts, as Slurm's ``slurm_opt.c`` does it.

Imports cli.common and the standard library.
"""

from __future__ import annotations

import grp
import os
import pwd

from cli.common import CommandError

CLIENT_ERROR = 255  # Slurm's clients exit(-1) on values they cannot parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def job_identity() -> dict[str, object]:
    """The submitter's identity and context, as JobSpec fields.

    Returns:
        uid, gid, user, group, submit host, umask and nice.
    """
    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    umask = os.umask(0)
    os.umask(umask)
    return {
        "uid": uid,
        "gid": gid,
        "user": user,
        "group": group,
        "submit_host": os.uname().nodename.split(".")[0],
        "umask": umask,
        "prio_process": os.getpriority(os.PRIO_PROCESS, 0),
    }


def parse_export(spec: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a job takes along (``--export``).

    ``ALL`` (the default) takes everything; ``NONE`` only the submitter's
    ``SLURM_*`` variables (which always travel, as in Slurm); otherwise those
    and the named variables, with ``NAME=value`` items setting values;
    ``ALL,NAME=value`` adds to everything.

    Args:
        spec: the option's value, or None.
        environ: the submitter's environment.

    Returns:
        The variables.
    """
    if spec is None or spec.upper() == "ALL":
        return dict(environ)
    items = [item for item in spec.split(",") if item]
    env = {k: v for k, v in environ.items() if k.startswith("SLURM_")}
    for item in items:
        name, eq, value = item.partition("=")
        if name.upper() == "ALL" and not eq:
            env.update(environ)
        elif name.upper() == "NONE" and not eq:
            continue
        elif eq:
            env[name] = value
        elif name in environ:
            env[name] = environ[name]
    return env


def parse_positive(text: str, option: str) -> int:
    """A positive count, as Slurm's clients read it.

    Args:
        text: the value.
        option: the option's name, for the message.

    Returns:
        The number.

    Raises:
        CommandError: not a positive integer (status 255).
    """
    if not text.isdigit() or int(text) <= 0:
        raise CommandError(f'error: Invalid numeric value "{text}" for {option}.', CLIENT_ERROR)
    return int(text)


def parse_node_range(text: str) -> tuple[int, int]:
    """``-N min[-max]``.

    Args:
        text: the value.

    Returns:
        ``(min, max)``; max equals min when one number was given.

    Raises:
        CommandError: malformed (status 255).
    """
    low, dash, high = text.partition("-")
    if not low.isdigit() or (dash and not high.isdigit()) or int(low) <= 0:
        raise CommandError(f'error: "{text}" is not a valid node count', CLIENT_ERROR)
    top = int(high) if dash else int(low)
    if top < int(low):
        raise CommandError(f'error: "{text}" is not a valid node count', CLIENT_ERROR)
    return int(low), top


def check_gres(gres: str | None, gpus_asked: bool, gres_types: tuple[str, ...]) -> None:
    """Reject generic resources slurm.conf does not define (GresTypes), as Slurm's client does.

    Args:
        gres: the ``--gres`` value, if given.
        gpus_asked: a ``--gpus*`` option was given (they need ``gpu``).
        gres_types: GresTypes from slurm.conf.

    Raises:
        CommandError: an unknown or malformed gres (status 1).
    """
    from minislurm import units

    try:
        names = [name for name, _kind, _count in units.parse_gres(gres or "")]
    except ValueError:
        names = [""]
    if gpus_asked:
        names.append("gpu")
    if any(name not in gres_types for name in names):
        raise CommandError("error: Invalid generic resource (gres) specification")
