"""What the submitting commands (sbatch, and later srun and salloc) share.

Who is submitting, which environment travels with the job, and the
client-side parsing of counts, as Slurm's ``slurm_opt.c`` does it.

Imports cli.common, the standard library and (lazily) minislurm's lean modules.
"""

from __future__ import annotations

import grp
import os
import pwd
import sys

from cli.common import CommandError

CLIENT_ERROR = 255  # Slurm's clients exit(-1) on values they cannot parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def option_text(values: dict[str, object], key: str) -> str | None:
    """An option's value as text.

    Args:
        values: the merged options.
        key: the option's destination name.

    Returns:
        The text, or None when the option was not given.
    """
    value = values.get(key)
    return None if value is None else str(value)


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


def parse_count(text: str, option: str) -> int:
    """A positive count (``-n``, ``-c``, ``--ntasks-per-node``...), as Slurm's ``parse_int``.

    Args:
        text: the value.
        option: the option's name, for the message.

    Returns:
        The number.

    Raises:
        CommandError: ``Invalid numeric value "X" for --opt.`` (status 1, as Slurm).
    """
    from minislurm import optcheck

    try:
        return optcheck.count(text, option)
    except optcheck.OptionError as err:
        raise CommandError(err.lines[0], err.status) from None


def parse_gpus(prog: str, text: str) -> tuple[str, int]:
    """``--gpus``, ``--gpus-per-node``, ``--gpus-per-task``: ``[type:]count``.

    As Slurm reads it, a value that is not a count names a type, of which
    one GPU is asked (``--gpus=a100`` asks for one GPU of type a100).

    Args:
        prog: the command (for messages).
        text: the value.

    Returns:
        ``(type, count)``; the type is "" when none was named.

    Raises:
        CommandError: a negative count: the controller's answer to such a request.
    """
    kind, colon, number = text.rpartition(":")
    if not colon:
        kind, number = "", text
    if kind.lower().startswith("gpu:"):
        kind = kind[4:]
    word = number.strip()
    if not word.lstrip("-").isdigit():
        return (f"{kind}:{word}" if kind else word), 1
    if int(word) < 0:
        raise controller_refusal(prog, "Requested node configuration is not available")
    return kind, int(word)


def controller_refusal(prog: str, message: str) -> CommandError:
    """What the controller answers a request that cannot even be sent (a negative count).

    Args:
        prog: sbatch, srun or salloc.
        message: the controller's message.

    Returns:
        The error, worded as the command words a rejected submission.
    """
    what = {
        "sbatch": "Batch job submission failed",
        "srun": "Unable to allocate resources",
        "salloc": "Job submit/allocate failed",
    }[prog]
    return CommandError(f"error: {what}: {message}", error_status(prog))


def option_error(prog: str, err: object) -> CommandError:
    """A rejected option value (:class:`minislurm.optcheck.OptionError`) as the command's error.

    A help text (``--hint=help``) is printed on stdout here.

    Args:
        prog: the command.
        err: the OptionError.

    Returns:
        The error that ends the command.
    """
    lines: tuple[str, ...] = err.lines  # type: ignore[attr-defined]
    if err.output:  # type: ignore[attr-defined]
        sys.stdout.write(err.output)  # type: ignore[attr-defined]
    return CommandError(f"\n{prog}: ".join(lines), err.status)  # type: ignore[attr-defined]


def parse_node_range(text: str) -> tuple[int, int]:
    """``-N min[-max]``, counts with an optional k or m suffix (``1k`` is 1024).

    ``-N0`` asks for no node: the controller refuses it ("Node count
    specification invalid"); a minimum of 0 with a maximum is taken as 1.

    Args:
        text: the value.

    Returns:
        ``(min, max)``; max equals min when one number was given.

    Raises:
        CommandError: malformed, or a maximum below the minimum (status 255).
    """
    low_text, dash, high_text = text.partition("-")
    low = _node_count(low_text, text)
    high = low if not dash else _node_count(high_text, high_text) if high_text else -1
    if high < low:
        raise CommandError(
            f"error: Maximum node count {high} is less than minimum node count {low}",
            CLIENT_ERROR,
        )
    return (max(low, 1) if dash else low), high


def _node_count(word: str, shown: str) -> int:
    scale = {"k": 1024, "m": 1024 * 1024}.get(word[-1:].lower(), 1)
    digits = (word[:-1] if scale > 1 else word).removeprefix("+")
    if not digits.isdigit():
        raise CommandError(f'error: "{shown}" is not a valid node count', CLIENT_ERROR)
    return int(digits) * scale


def gres_gpu_type(gres: str) -> str:
    """The GPU type a ``--gres`` list names (``gpu:a100:2`` -> ``a100``), or "".

    Args:
        gres: the value.

    Returns:
        The type.
    """
    for item in gres.split(","):
        fields = item.split(":")
        if fields[0] in ("gpu", "gres/gpu") and len(fields) > 1:
            candidate = fields[1]
            if not candidate.lstrip("-").replace(".", "", 1).isdigit():
                return candidate
    return ""


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
        names = [name for name, _kind, _count in units.parse_gres(gres or "", signed=True)]
    except units.GresCountError:
        names = []  # the controller answers a count that is not whole
    except ValueError:
        names = [""]
    if gpus_asked:
        names.append("gpu")
    if any(name not in gres_types for name in names):
        raise CommandError("error: Invalid generic resource (gres) specification")


def check_clusters(prog: str, names: str | None) -> str:
    """``-M/--clusters``: this cluster is the only one the commands can reach.

    Args:
        prog: the command.
        names: the option's value (None: not given).

    Returns:
        The cluster's name when the option named it, else "".

    Raises:
        CommandError: another cluster, worded as Slurm's when slurmdbd does not know it.
    """
    if names is None:
        return ""
    from cli.common import client_config

    ours = client_config().cluster_name
    for name in names.split(","):
        if name != ours:
            raise CommandError(
                f"error: No cluster '{name}' known by database.\n"
                f"{prog}: error: '{name}' can't be reached now, or it is an invalid entry for"
                " --cluster.  Use 'sacctmgr list clusters' to see available clusters."
            )
    return ours


def error_status(prog: str) -> int:
    """The exit status of a request the controller refuses: ``SLURM_EXIT_ERROR``, else 1.

    Args:
        prog: the command (for the warning about a zero value).

    Returns:
        The status.
    """
    text = os.environ.get("SLURM_EXIT_ERROR")
    if text is None:
        return 1
    status = int(text) if text.strip().isdigit() else 0
    if not status:
        sys.stderr.write(f"{prog}: error: SLURM_EXIT_ERROR has zero value\n")
        return 1
    return status


def check_x11(values: dict[str, object]) -> None:
    """``--x11[=all|first|last]``: Slurm first needs a display to forward, and there is none here.

    Without ``DISPLAY`` the option fails as in Slurm; with one it has no effect
    (PrologFlags=X11 is not supported). A value Slurm does not know turns it off.

    Args:
        values: the merged options.

    Raises:
        CommandError: no DISPLAY.
    """
    value = values.get("x11")
    if value is None or str(value).lower() not in ("", "true", "all", "first", "last", "batch"):
        return
    if not os.environ.get("DISPLAY"):
        raise CommandError(
            "error: No DISPLAY variable set, cannot setup x11 forwarding.", CLIENT_ERROR
        )


def report_test(prog: str, reply: object) -> int:
    """``--test-only``: say when and where the job would start, as Slurm does.

    Args:
        prog: sbatch or srun.
        reply: the SubmitJob reply (nothing was stored).

    Returns:
        The exit status.

    Raises:
        CommandError: it could never start.
    """
    from minislurm import units

    job = reply.job  # type: ignore[attr-defined]
    start: int = reply.expected_start  # type: ignore[attr-defined]
    if not start:
        raise CommandError(
            "error: Job submit/allocate failed: Requested node configuration is not available"
        )
    sys.stderr.write(
        f"{prog}: Job {reply.job_id} to start at {units.format_timestamp(start)} "  # type: ignore[attr-defined]
        f"using {job.num_cpus} processors on nodes {job.nodes} in partition {job.partition}\n"
    )
    return 0
