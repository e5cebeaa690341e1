"""The JobSpec of a submission: options as its fields, values parsed as Slurm's client parses them.

A value that does not parse is rejected here with Slurm's message and exit
status 255; the controller validates everything again.

Imports cli.common, cli.submit, cli.timespec and minislurm's lean modules only.
"""

from __future__ import annotations

import os
import sys
import time

from cli.common import CommandError
from cli.submit import CLIENT_ERROR, job_identity, parse_export, parse_node_range, parse_positive
from cli.timespec import parse_time
from minislurm import jobopts, units


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


def build_spec(
    values: dict[str, object], script: bytes, name: str, argv: list[str]
) -> dict[str, object]:
    """The JobSpec fields of a submission.

    Args:
        values: the merged options.
        script: the batch script.
        name: the default job name.
        argv: the script's arguments.

    Returns:
        The fields of a JobSpec message.

    Raises:
        CommandError: a value that does not parse (status 255).
    """
    cwd = os.getcwd()
    spec: dict[str, object] = {
        "name": option_text(values, "job_name") or name,
        "script": script,
        "argv": argv,
        "work_dir": os.path.join(cwd, option_text(values, "chdir") or ""),
        "submit_dir": cwd,
        "batch": True,
        "command": os.path.abspath(str(values["script_path"])) if "script_path" in values else "",
        "environment": parse_export(option_text(values, "export"), os.environ),
        "hold": bool(values.get("hold")),
    }
    spec["work_dir"] = os.path.normpath(str(spec["work_dir"]))
    for key, field in (
        ("output", "stdout"),
        ("error", "stderr"),
        ("input", "stdin"),
        ("partition", "partition"),
        ("account", "account"),
        ("qos", "qos"),
        ("gres", "gres"),
        ("nodelist", "nodelist"),
        ("exclude", "exclude"),
    ):
        text = option_text(values, key)
        if text:
            spec[field] = text
    spec.update(resource_fields(values))
    spec.update(workflow_fields(values))
    spec.update(notice_fields(values))
    if "open_mode" in spec:  # the job's sruns open their files the same way
        env = spec["environment"]
        assert isinstance(env, dict)
        env["SLURM_OPEN_MODE"] = str(spec["open_mode"])[0]
    spec.update(job_identity())
    return spec


def notice_fields(values: dict[str, object]) -> dict[str, object]:
    """Comment, mail, the output files' open mode, the warning signal and --exclusive.

    ``--wckey`` is accepted and ignored, as Slurm does without TrackWCKey.

    Args:
        values: the merged options.

    Returns:
        JobSpec fields.

    Raises:
        CommandError: a value that does not parse (status 255).
    """
    spec: dict[str, object] = {}
    for key in ("comment", "mail_user", "reservation"):
        text = option_text(values, key)
        if text:
            spec[key] = text
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
    if text in ("user", "mcs"):
        raise CommandError(f"error: --exclusive={text} is not supported", CLIENT_ERROR)
    if text is not None:
        if text:
            raise CommandError("error: Invalid --exclusive specification", CLIENT_ERROR)
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
    if "deadline" in times and times.get("begin", now) > times["deadline"]:
        raise CommandError("error: Incompatible begin and deadline time specification")
    spec["begin_time"] = times.get("begin", 0)
    spec["deadline"] = times.get("deadline", 0)
    return spec


def resource_fields(values: dict[str, object]) -> dict[str, object]:
    """Counts, memory, time, GPUs, nice and requeue, parsed as Slurm's client parses them.

    Args:
        values: the merged options.

    Returns:
        JobSpec fields.

    Raises:
        CommandError: a value that does not parse (status 255).
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
    for key in (
        "ntasks",
        "ntasks_per_node",
        "cpus_per_task",
        "gpus",
        "gpus_per_node",
        "gpus_per_task",
    ):
        text = option_text(values, key)
        if text is not None:
            spec[key] = parse_positive(text, "--" + key.replace("_", "-"))
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
        text = option_text(values, "nice") or "100"
        try:
            spec["nice"] = int(text)
        except ValueError:
            raise CommandError(
                f'error: Invalid numeric value "{text}" for --nice.', CLIENT_ERROR
            ) from None
    if values.get("requeue") or values.get("no_requeue"):
        spec["requeue"] = bool(values.get("requeue"))
    return spec
