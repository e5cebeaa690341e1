"""srun's options as a step: the task geometry, the StepSpec, and what every node gets to launch.

srun reads its input environment variables as options (``SLURM_NTASKS``,
``SLURM_NNODES``, ``SLURM_JOB_ID``... which a batch job or salloc sets), the
command line overriding each. As Slurm's srun does, it then reconciles the
counts: a ``--ntasks-per-node`` that does not match the tasks and nodes is
dropped, and fewer tasks than nodes shrink the node count, each with
Slurm's warning. Options that concern srun alone (``--cpu-bind``,
``--mpi``...) are checked and have no effect.

Imports cli.cmdcheck, cli.common, cli.jobflags, cli.submit and minislurm's lean modules.
"""

from __future__ import annotations

import os
import sys

from cli import cmdcheck, jobflags
from cli.common import CommandError
from cli.submit import (
    CLIENT_ERROR,
    check_x11,
    option_error,
    parse_count,
    parse_export,
    parse_gpus,
    parse_node_range,
)
from minislurm import jobopts, optcheck, units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from minislurm.wire.protowire import Message

PROG = "srun"


def merged_values(cli: dict[str, object], environ: Mapping[str, str]) -> dict[str, object]:
    """srun's options: its environment's, overridden by the command line's, counts reconciled.

    Args:
        cli: the parsed command line.
        environ: srun's environment.

    Returns:
        The merged options.
    """
    env = jobflags.environment_values(PROG, environ)
    if "jobid" in env or "jobid" in cli:
        env.pop("job_name", None)  # the allocation's name is not its steps'
    values = {**env, **cli}
    if "nodes" in values and str(values["nodes"]).isdigit():
        nodes = int(str(values["nodes"]))
        ntasks, per_node = str(values.get("ntasks", "")), str(values.get("ntasks_per_node", ""))
        if ntasks.isdigit() and per_node.isdigit() and int(ntasks) != nodes * int(per_node):
            sys.stderr.write(
                f"srun: Warning: can't honor --ntasks-per-node set to {per_node} which doesn't"
                f" match the requested tasks {ntasks} with the number of requested nodes"
                f" {nodes}. Ignoring --ntasks-per-node.\n"
            )
            del values["ntasks_per_node"]
        if ntasks.isdigit() and int(ntasks) < nodes:
            sys.stderr.write(
                f"srun: Warning: can't run {ntasks} processes on {nodes} nodes,"
                f" setting nnodes to {ntasks}\n"
            )
            values["nodes"] = ntasks
    return values


def check_command_options(values: dict[str, object]) -> None:
    """Check the options that concern srun alone, as Slurm's srun does (they have no effect).

    Args:
        values: the merged options.

    Raises:
        CommandError: a value Slurm rejects.
    """
    for long in cmdcheck.COMMAND_OPTIONS:
        value = values.get(long.replace("-", "_"))
        if value is None:
            continue
        try:
            cmdcheck.check(long, "" if value is True else str(value))
        except optcheck.OptionError as err:
            raise option_error(PROG, err) from None
    if "cpu_bind" in values:
        sys.stderr.write("srun: cluster configuration lacks support for cpu binding\n")
    for line in cmdcheck.compress_warnings(str(values.get("compress") or "")):
        sys.stderr.write(f"srun: {line}\n")
    check_x11(values)
    for key in ("prolog", "epilog"):
        path = str(values.get(key) or "none")
        if path.lower() != "none" and not os.access(path, os.X_OK):
            reason = "Permission denied" if os.path.exists(path) else "No such file or directory"
            sys.stderr.write(f"srun: Access denied for {path}: {reason}\n")
    for key in ("wait", "relative"):
        if key in values:
            seconds(values, key)


def seconds(values: dict[str, object], key: str) -> int:
    """A count of seconds (or nodes) that may be 0: ``--wait``, ``--relative``, ``--immediate``.

    Args:
        values: the merged options.
        key: the option's destination.

    Returns:
        The number.

    Raises:
        CommandError: Slurm's ``Invalid numeric value`` (status 1).
    """
    try:
        return optcheck.count(str(values[key]), "--" + key.replace("_", "-"), least=0)
    except optcheck.OptionError as err:
        raise CommandError(err.lines[0], err.status) from None


def step_counts(values: dict[str, object]) -> dict[str, object]:
    """Task geometry, memory, GPUs and nodes of the step, parsed as Slurm's client parses them.

    Args:
        values: the merged options.

    Returns:
        StepSpec fields.

    Raises:
        CommandError: a value that does not parse.
    """
    fields: dict[str, object] = {}
    if "nodes" in values:
        fields["min_nodes"], fields["max_nodes"] = parse_node_range(str(values["nodes"]))
    for key in ("ntasks", "ntasks_per_node", "cpus_per_task"):
        if key in values:
            fields[key] = parse_count(str(values[key]), "--" + key.replace("_", "-"))
    for key in ("gpus", "gpus_per_node", "gpus_per_task"):
        if key in values:
            kind, fields[key] = parse_gpus(PROG, str(values[key]))
            if kind:
                fields["gpu_type"] = kind
    for key, field in (("mem", "mem_per_node"), ("mem_per_cpu", "mem_per_cpu")):
        if key in values:
            try:
                fields[field] = units.parse_memory_mb(str(values[key]))
            except ValueError:
                raise CommandError(
                    f"error: Invalid --{key.replace('_', '-')} specification", CLIENT_ERROR
                ) from None
    for key in ("gres", "nodelist", "exclude"):
        if values.get(key):
            fields[key] = str(values[key])
    per_gpu = values.get("ntasks_per_gpu")
    if per_gpu is not None and "ntasks" not in fields:
        gpus = int(str(fields.get("gpus") or fields.get("gpus_per_node") or 0))
        if gpus:
            fields["ntasks"] = gpus * parse_count(str(per_gpu), "--ntasks-per-gpu")
    return fields


def distribution(values: dict[str, object]) -> str:
    """The step's task distribution: ``block``, ``cyclic``, ``plane=N`` or ``arbitrary``.

    The second and third levels (``block:cyclic``) and ``,Pack`` are checked and
    have no effect: the tasks' CPUs are not bound here.

    Args:
        values: the merged options.

    Returns:
        The distribution over nodes.

    Raises:
        CommandError: a value Slurm rejects.
    """
    text = str(values.get("distribution") or "block")
    try:
        optcheck.check("distribution", text)
    except optcheck.OptionError as err:
        raise option_error(PROG, err) from None
    first = text.split(",")[0].split(":")[0].lower()
    if first == "arbitrary" and not values.get("nodelist"):
        raise CommandError(
            "error: With Arbitrary distribution you need to specify a nodelist or hostfile"
            " with the -w option"
        )
    plane = os.environ.get("SLURM_DIST_PLANESIZE", "")
    if first == "plane" and plane.isdigit():
        first = f"plane={plane}"
    return "block" if first == "*" else first


def step_spec(values: dict[str, object], argv: list[str], job_id: int) -> dict[str, object]:
    """The StepSpec fields of this srun.

    Args:
        values: the merged options.
        argv: the command and its arguments.
        job_id: the allocation.

    Returns:
        The fields.

    Raises:
        CommandError: a value that does not parse.
    """
    spec = step_counts(values)
    exclusive = values.get("exclusive")
    spec.update(
        job_id=job_id,
        name=str(values.get("job_name") or os.path.basename(argv[0])),
        argv=argv,
        distribution=distribution(values),
        exclusive=exclusive is not None and exclusive not in ("user", "mcs"),
        exact=bool(values.get("exact")),
        overlap="overlap" in values,
        interactive=bool(values.get("interactive")),
        requester_uid=os.getuid(),
        cwd=work_dir(values),
        srun_host=srun_host(),
        srun_pid=os.getpid(),
    )
    return spec


def srun_host() -> str:
    """Where this srun runs, as scontrol show step names it: the node inside a job.

    Returns:
        The host's short name.
    """
    import socket

    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def work_dir(values: dict[str, object]) -> str:
    """Where the tasks run: ``-D``, relative to srun's own directory.

    Args:
        values: the merged options.

    Returns:
        The absolute path.
    """
    return os.path.normpath(os.path.join(os.getcwd(), str(values.get("chdir") or "")))


def open_mode(values: dict[str, object]) -> str:
    """``--open-mode`` (or ``SLURM_OPEN_MODE``, set by ``sbatch --open-mode``).

    Args:
        values: the merged options.

    Returns:
        ``append`` or ``truncate``.

    Raises:
        CommandError: anything else.
    """
    if "open_mode" not in values:
        return "truncate"
    try:
        return jobopts.parse_open_mode(str(values["open_mode"]))
    except ValueError:
        raise CommandError("error: Invalid --open-mode specification", CLIENT_ERROR) from None


def kill_on_bad_exit(values: dict[str, object]) -> bool:
    """``-K[0|1]``: any number but 0 turns it on.

    Args:
        values: the merged options.

    Returns:
        Whether a task exiting non-zero kills the step.

    Raises:
        CommandError: not a number.
    """
    if "kill_on_bad_exit" not in values:
        return False
    text = str(values["kill_on_bad_exit"])
    if text in ("", "True"):
        return True
    try:
        return optcheck.count(text, "--kill-on-bad-exit", least=-(2**31)) != 0
    except optcheck.OptionError as err:
        raise CommandError(err.lines[0], err.status) from None


def gpu_bind(values: dict[str, object]) -> str:
    """``--gpu-bind``, or ``single:N`` as ``--ntasks-per-gpu=N`` implies.

    Args:
        values: the merged options.

    Returns:
        The binding ("" for the default).

    Raises:
        CommandError: a value Slurm rejects.
    """
    text = str(values.get("gpu_bind") or "")
    if text:
        try:
            optcheck.check("gpu-bind", text)
        except optcheck.OptionError as err:
            raise option_error(PROG, err) from None
        return ",".join(w for w in text.split(",") if w.lower() != "verbose")
    per_gpu = values.get("ntasks_per_gpu")
    return f"single:{per_gpu}" if per_gpu is not None else ""


def srun_variables(
    values: dict[str, object], step: Message, own_allocation: bool
) -> dict[str, str]:
    """What Slurm's srun adds to its tasks' environment itself.

    Its log level (``SRUN_DEBUG``: 3, one more per ``-v``, one less with
    ``-Q``); the step's distribution when ``-m`` was given, or, inside an
    allocation, the one it took (cyclic when there are no more tasks than
    nodes); and, inside an allocation, the job's CPUs again under the name of
    its first pack group.

    Args:
        values: the merged options.
        step: the step the controller made.
        own_allocation: this srun made the allocation (it runs outside one).

    Returns:
        The variables.
    """
    verbose = values.get("verbose")
    verbosity = (len(verbose) if isinstance(verbose, list) else 0) - bool(values.get("quiet"))
    env = {"SRUN_DEBUG": str(3 + verbosity)}
    distribution = str(step.distribution or "block")
    if distribution == "block" and step.ntasks <= len(step.nodes):
        distribution = "cyclic"
    if values.get("distribution") or not own_allocation:
        env["SLURM_DISTRIBUTION"] = distribution
    cpus = os.environ.get("SLURM_JOB_CPUS_PER_NODE")
    if cpus and not own_allocation:
        env["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"] = cpus
    return env


def launch_request(
    values: dict[str, object], reply: Message, argv: list[str], own_allocation: bool = False
) -> dict[str, object]:
    """What every node agent gets to start its tasks.

    Args:
        values: the merged options.
        reply: the CreateStepReply.
        argv: the command.
        own_allocation: this srun made the allocation (it runs outside one).

    Returns:
        The LaunchTasksRequest fields.
    """
    stdin = str(values.get("input", "0"))
    umask = os.umask(0)
    os.umask(umask)
    environment = parse_export(
        None if values.get("export") is None else str(values["export"]), os.environ
    )
    environment.update(srun_variables(values, reply.step, own_allocation))
    return {
        "credential": reply.credential,
        "job_id": reply.step.job_id,
        "step_id": reply.step.step_id,
        "argv": argv,
        "environment": environment,
        "cwd": work_dir(values),
        "stdout": str(values.get("output") or ""),
        "stderr": str(values.get("error") or ""),
        "stdin": "" if stdin.isdigit() or stdin == "all" else stdin,
        "stdin_all": stdin == "all",
        "gpu_bind": gpu_bind(values),
        "unbuffered": bool(values.get("unbuffered")),
        "umask": umask,
        "open_append": values.get("open_mode") == "append",
        "kill_on_bad_exit": kill_on_bad_exit(values),
        "job": reply.job,
        "step": reply.step,
        "launch_host": os.uname().nodename.split(".")[0],
        "preserve_env": bool(values.get("preserve_env")),
        "pty": "window" in values,
        "window": values.get("window", {}),
        # --task-prolog/--task-epilog, run by stepd as the user besides TaskProlog/TaskEpilog
        "task_prolog": _absolute(values.get("task_prolog")),
        "task_epilog": _absolute(values.get("task_epilog")),
    }


def _absolute(path: object) -> str:
    """A program path given on srun's command line, from where srun runs ("" for none)."""
    return os.path.abspath(str(path)) if path else ""
