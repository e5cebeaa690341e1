"""The JobSpec of a submission: options as its fields, values parsed as Slurm's client parses them.

sbatch's batch jobs and the allocations srun and salloc make share the
fields built here. A value that does not parse is rejected with Slurm's
message and exit status (255 for most values, 1 for counts); the
controller validates everything again.

Imports cli.common, cli.gpuspec, cli.submit, cli.timespec and minislurm's lean modules only.
"""

from __future__ import annotations

import errno
import os
import sys
import time

from cli.common import CommandError
from cli.gpuspec import gpu_fields
from cli.submit import (
    CLIENT_ERROR,
    controller_refusal,
    job_identity,
    option_error,
    option_text,
    parse_count,
    parse_node_range,
)
from cli.timespec import parse_time
from minislurm import hostlist, jobopts, optcheck, units

_TEXT_FIELDS = (
    ("partition", "partition"),
    ("account", "account"),
    ("qos", "qos"),
    ("gres", "gres"),
    ("nodelist", "nodelist"),
    ("exclude", "exclude"),
    ("comment", "comment"),
    ("mail_user", "mail_user"),
    ("reservation", "reservation"),
)


def job_fields(prog: str, values: dict[str, object]) -> dict[str, object]:
    """The JobSpec fields every submission shares: what it asks for and who asks.

    Args:
        prog: the command (for messages).
        values: the merged options.

    Returns:
        JobSpec fields.

    Raises:
        CommandError: a value that does not parse, with Slurm's message and status.
    """
    values = {**values, **_read_files(prog, values)}
    spec: dict[str, object] = {"hold": bool(values.get("hold"))}
    for key, field in _TEXT_FIELDS:
        text = option_text(values, key)
        if text:
            spec[field] = text
    spec.update(resource_fields(values, prog))
    spec.update(gpu_fields(prog, values))
    spec.update(workflow_fields(values))
    spec.update(notice_fields(values))
    spec["options"] = accepted_options(prog, values)
    spec.update(job_identity())
    spec.update(_run_as(values))
    return spec


def _read_files(prog: str, values: dict[str, object]) -> dict[str, object]:
    """``-F/--nodefile`` (hosts, one or more a line) and ``--bbf`` (a burst buffer's)."""
    read: dict[str, object] = {}
    path = option_text(values, "nodefile")
    if path is not None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                hosts = f.read().replace(",", " ").split()
        except (OSError, ValueError) as err:  # ValueError: a NUL in a #SBATCH line's path
            reason = err.strerror if isinstance(err, OSError) else os.strerror(errno.ENOENT)
            raise CommandError(
                f"error: slurm_allocate_resources error opening file {path}, {reason}\n"
                f"{prog}: error: Invalid --nodefile node file",
                CLIENT_ERROR,
            ) from None
        if not hosts:
            raise CommandError(
                f"error: Hostlist is empty!\n{prog}: error: Invalid --nodefile node file",
                CLIENT_ERROR,
            )
        read["nodelist"] = ",".join(hosts)
    path = option_text(values, "bbf")
    if path is not None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                read["bb"] = f.read().strip()
        except (OSError, ValueError):
            raise CommandError("error: Invalid --bbf specification") from None
    return read


def _run_as(values: dict[str, object]) -> dict[str, object]:
    """``--uid``/``--gid``: root submits a job that runs as another user or group."""
    found: dict[str, object] = {}
    for key, lookup in (("uid", _user), ("gid", _group)):
        text = option_text(values, key)
        if text is None:
            continue
        if os.getuid() != 0:
            raise CommandError(f"error: --{key} only permitted by root user", CLIENT_ERROR)
        entry = lookup(text)
        if entry is None:
            raise CommandError(f"error: Invalid --{key} specification", CLIENT_ERROR)
        found[key], found["user" if key == "uid" else "group"] = entry
    return found


def _user(text: str) -> tuple[int, str] | None:
    import pwd

    try:
        entry = pwd.getpwuid(int(text)) if text.isdigit() else pwd.getpwnam(text)
    except (KeyError, ValueError, OverflowError):  # no such user, a NUL, a number too large
        return None
    return entry.pw_uid, entry.pw_name


def _group(text: str) -> tuple[int, str] | None:
    import grp

    try:
        entry = grp.getgrgid(int(text)) if text.isdigit() else grp.getgrnam(text)
    except (KeyError, ValueError, OverflowError):  # no such group, a NUL, a number too large
        return None
    return entry.gr_gid, entry.gr_name


def notice_fields(values: dict[str, object]) -> dict[str, object]:
    """Mail, the output files' open mode, the warning signal and --exclusive.

    Args:
        values: the merged options.

    Returns:
        JobSpec fields.

    Raises:
        CommandError: a value that does not parse (status 255).
    """
    spec: dict[str, object] = {}
    for key, parse in (
        ("mail_type", jobopts.parse_mail_type),
        ("open_mode", jobopts.parse_open_mode),
    ):
        text = option_text(values, key)
        if text is not None:
            try:
                spec[key] = parse(text)
            except ValueError:
                option = key.replace("_", "-")
                raise CommandError(
                    f"error: Invalid --{option} specification", CLIENT_ERROR
                ) from None
    text = option_text(values, "signal")
    if text is not None:
        try:
            warn = jobopts.parse_warn_signal(text)
        except ValueError:
            raise CommandError("error: Invalid --signal specification", CLIENT_ERROR) from None
        spec.update(warn_signal=warn.signal, warn_time=warn.time, warn_batch=warn.batch)
    text = option_text(values, "exclusive")
    if text not in (None, "", "True", "user", "mcs", "topo"):
        raise CommandError("error: Invalid --exclusive specification", CLIENT_ERROR)
    if text in ("", "True", "topo"):  # a topology segment of its own takes whole nodes
        spec["exclusive"] = True
    return spec


def workflow_fields(values: dict[str, object]) -> dict[str, object]:
    """Array, dependency, begin and deadline, parsed as Slurm's client parses them.

    Args:
        values: the merged options.

    Returns:
        JobSpec fields.

    Raises:
        CommandError: a value that does not parse (status 255), or a begin
            time after the deadline (status 1, as Slurm).
    """
    spec: dict[str, object] = {}
    for key in ("array", "dependency"):
        text = option_text(values, key)
        if text:
            spec[key] = text
    kill = option_text(values, "kill_on_invalid_dep")
    if kill is not None:
        if kill.lower() not in ("yes", "no"):
            raise CommandError("error: Invalid --kill-on-invalid-dep specification", CLIENT_ERROR)
        spec["kill_on_invalid_dep"] = kill.lower() == "yes"
    now = time.time()
    times = {}
    for key in ("begin", "deadline"):
        text = option_text(values, key)
        if text is None:
            continue
        try:
            times[key] = parse_time(text, now)
        except ValueError as err:
            sys.stderr.write(f"{err}\n")  # Slurm prints this line without a prefix
            raise CommandError(f"error: Invalid --{key} specification", CLIENT_ERROR) from None
    if "deadline" in times and "begin" in times and times["begin"] > times["deadline"]:
        raise CommandError("error: Incompatible begin and deadline time specification")
    spec["begin_time"] = times.get("begin", 0)
    spec["deadline"] = times.get("deadline", 0)
    return spec


def resource_fields(values: dict[str, object], prog: str) -> dict[str, object]:
    """Counts, memory, time, nice and requeue, parsed as Slurm's client parses them.

    Args:
        values: the merged options.
        prog: the command (for messages).

    Returns:
        JobSpec fields.

    Raises:
        CommandError: a value that does not parse (status 255; 1 for counts).
    """
    spec: dict[str, object] = {}
    time_limit = option_text(values, "time")
    if time_limit is not None:
        try:
            spec["time_limit"] = units.parse_time_limit(time_limit)
        except ValueError:
            raise CommandError("error: Invalid --time specification", CLIENT_ERROR) from None
    nodes = option_text(values, "nodes")
    if nodes is not None:
        spec["min_nodes"], spec["max_nodes"] = parse_node_range(nodes)
        if not spec["max_nodes"]:
            raise controller_refusal(prog, "Node count specification invalid")
    for key in ("ntasks", "ntasks_per_node", "cpus_per_task"):
        text = option_text(values, key)
        if text is not None:
            spec[key] = parse_count(text, "--" + key.replace("_", "-"))
    _fit_nodes(prog, values, spec)
    memory = [key for key in ("mem", "mem_per_cpu", "mem_per_gpu") if key in values]
    if len(memory) > 1:
        raise CommandError("fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
    for key, field in (("mem", "mem_per_node"), ("mem_per_cpu", "mem_per_cpu")):
        text = option_text(values, key)
        if text is not None:
            try:
                spec[field] = units.parse_memory_mb(text)
            except ValueError:
                raise CommandError(
                    f"error: Invalid --{key.replace('_', '-')} specification", CLIENT_ERROR
                ) from None
    if "nice" in values:
        spec["nice"] = parse_nice(option_text(values, "nice") or "100")
    if "requeue" in values:
        spec["requeue"] = bool(values["requeue"])
    return spec


def _fit_nodes(prog: str, values: dict[str, object], spec: dict[str, object]) -> None:
    """Fewer tasks than nodes shrink the node count; a node list must fit within -N."""
    low, high = int(str(spec.get("min_nodes", 0))), int(str(spec.get("max_nodes", 0)))
    ntasks = int(str(spec.get("ntasks", 0)))
    if ntasks and ntasks < low:
        sys.stderr.write(
            f"{prog}: Warning: can't run {ntasks} processes on {low} nodes,"
            f" setting nnodes to {ntasks}\n"
        )
        spec["min_nodes"] = spec["max_nodes"] = low = high = ntasks
    nodelist = option_text(values, "nodelist")
    if not nodelist or not high:
        return
    try:
        count = len(set(hostlist.expand(nodelist)))
    except ValueError:
        return  # the controller says what is wrong with it
    if count > high:
        raise CommandError(f"error: invalid number of nodes (-N {count}-{high})")


def parse_nice(text: str) -> int:
    """``--nice[=adjustment]``, read as C's ``strtol`` reads it (``abc`` is 0).

    Args:
        text: the value.

    Returns:
        The adjustment.

    Raises:
        CommandError: out of range (status 255).
    """
    word = text.strip()
    sign = word[:1] if word[:1] in "+-" else ""
    digits = word[len(sign) :]
    digits = digits[: len(digits) - len(digits.lstrip("0123456789"))] or "0"
    nice = int(sign + digits)
    if abs(nice) > jobopts.NICE_LIMIT:
        raise CommandError(
            "error: Invalid --nice value, out of range (+/- 2147483645)", CLIENT_ERROR
        )
    return nice


def accepted_options(prog: str, values: dict[str, object]) -> dict[str, str]:
    """The options accepted without effect that are kept with the job, checked as Slurm checks them.

    Args:
        prog: the command (for messages).
        values: the merged options.

    Returns:
        Long option name -> the value to keep (:mod:`minislurm.optcheck`).

    Raises:
        CommandError: a value Slurm's client rejects.
    """
    kept: dict[str, str] = {}
    for long in optcheck.JOB_OPTIONS:
        value = values.get(long.replace("-", "_"))
        if value is None:
            continue
        text = "" if value is True else str(value)
        try:
            kept[long] = optcheck.check(long, text)
        except optcheck.OptionError as err:
            raise option_error(prog, err) from None
    exclusive = option_text(values, "exclusive")
    if exclusive in ("user", "mcs", "topo"):
        kept["exclusive"] = exclusive
    if "ntasks_per_gpu" in values:
        kept["ntasks-per-gpu"] = str(values["ntasks_per_gpu"])
    # sbatch reads its options in two passes, and warns in each.
    for line in optcheck.power_warnings(kept.get("power", "")) * (2 if prog == "sbatch" else 1):
        sys.stderr.write(f"{prog}: {line}\n")
    _check_combinations(prog, values, kept)
    return kept


def _check_combinations(prog: str, values: dict[str, object], kept: dict[str, str]) -> None:
    """What Slurm's client rejects of options taken together."""
    if "gpus-per-socket" in kept and "sockets-per-node" not in kept:
        raise CommandError(
            "error: --gpus-per-socket option requires --sockets-per-node specification\n"
            f"{prog}: error: Invalid generic resource (gres) specification"
        )
    if kept.get("distribution", "").lower().startswith("arbitrary") and not values.get("nodelist"):
        raise CommandError(
            "error: With Arbitrary distribution you need to specify a nodelist or hostfile"
            " with the -w option"
        )
    gpus = any(values.get(key) for key in ("gpus", "gpus_per_node", "gpus_per_task"))
    gpus = gpus or "gpu" in str(values.get("gres") or "")
    if kept.get("mem-per-gpu", "0") != "0" and not gpus:
        raise CommandError(
            f"error: Requested mem_per_tres=gres:gpu:{kept['mem-per-gpu']} but did not request"
            f" any GPU.\n{prog}: error: Invalid generic resource (gres) specification"
        )
    for key, option in (("core-spec", "-S"), ("thread-spec", "--thread-spec")):
        if key in kept:
            sys.stderr.write(
                f"{prog}: error: Ignoring {option} since it's not allowed by configuration"
                " (AllowSpecResourcesUsage = No)\n"
            )


def allocation_spec(
    prog: str, values: dict[str, object], program: str, name: str
) -> dict[str, object]:
    """The JobSpec of an allocation srun or salloc makes (no batch script).

    Args:
        prog: srun or salloc.
        values: the merged options.
        program: the job's ``Command``: srun's program as given (its
            ``--multi-prog`` file); none for salloc's, as Slurm records them.
        name: the job's name unless ``-J`` gives one.

    Returns:
        The JobSpec fields.

    Raises:
        CommandError: a value that does not parse.
    """
    spec = job_fields(prog, values)
    dealt = str(values.get("distribution", "")).lower().startswith(("cyclic", "plane"))
    if dealt and "ntasks" in spec and "min_nodes" in spec and "ntasks_per_node" not in spec:
        # The allocation is made for the distribution: tasks dealt evenly over the nodes.
        spec["ntasks_per_node"] = -(-int(str(spec["ntasks"])) // int(str(spec["min_nodes"])))
    cwd = os.getcwd()
    spec.update(
        name=option_text(values, "job_name") or name,
        batch=False,
        work_dir=os.path.normpath(os.path.join(cwd, option_text(values, "chdir") or "")),
        submit_dir=cwd,
        command=program,
        environment={},
    )
    return spec
