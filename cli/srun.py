"""srun: run a parallel job step, inside an allocation or in one of its own.

Inside a batch job or salloc (``SLURM_JOB_ID`` is set, or ``--jobid``), srun
asks the controller for a step, then launches the tasks through the node
agents and relays their I/O (cli/steprun.py). Outside, it first obtains an
allocation (cli/alloc.py) and releases it afterwards. As Slurm's srun, it
takes the task geometry of the surrounding allocation from ``SLURM_NTASKS``,
``SLURM_NTASKS_PER_NODE``, ``SLURM_NNODES``... unless the command line gives
its own.

Imports cli.common, cli.opts, cli.submit, cli.alloc, cli.steprun, cli.terminal.
"""

from __future__ import annotations

import os
import socket
import sys
import time

from cli.alloc import allocate, release
from cli.common import (
    CommandError,
    call,
    client_config,
    controller,
    parse_or_exit,
    rpc_message,
    run,
)
from cli.opts import NO_ARG, OPTIONAL, REQUIRED, Option
from cli.steprun import StepRun, install_signal_pipe
from cli.submit import (
    CLIENT_ERROR,
    check_gres,
    job_identity,
    parse_export,
    parse_node_range,
    parse_positive,
)
from cli.terminal import pty_window
from minislurm import jobopts, units
from minislurm.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.protowire import Message

PROG = "srun"
RETRY_FIRST, RETRY_MAX = 0.02, 0.5  # seconds between step creation attempts

OPTIONS = [
    Option("account", "A", REQUIRED),
    Option("chdir", "D", REQUIRED),
    Option("cpu-bind", "", REQUIRED),
    Option("cpus-per-task", "c", REQUIRED),
    Option("distribution", "m", REQUIRED),
    Option("error", "e", REQUIRED),
    Option("exact", "", NO_ARG),
    Option("exclude", "x", REQUIRED),
    Option("exclusive", "", OPTIONAL),
    Option("export", "", REQUIRED),
    Option("gpu-bind", "", REQUIRED),
    Option("gpus", "G", REQUIRED),
    Option("gpus-per-node", "", REQUIRED),
    Option("gpus-per-task", "", REQUIRED),
    Option("gres", "", REQUIRED),
    Option("help", "h", NO_ARG),
    Option("input", "i", REQUIRED),
    Option("interactive", "", NO_ARG),  # salloc's interactive step; undocumented, as in Slurm
    Option("job-name", "J", REQUIRED),
    Option("jobid", "", REQUIRED),
    Option("kill-on-bad-exit", "K", OPTIONAL),
    Option("label", "l", NO_ARG),
    Option("mem", "", REQUIRED),
    Option("mem-per-cpu", "", REQUIRED),
    Option("mpi", "", REQUIRED),
    Option("nodelist", "w", REQUIRED),
    Option("nodes", "N", REQUIRED),
    Option("ntasks", "n", REQUIRED),
    Option("ntasks-per-node", "", REQUIRED),
    Option("open-mode", "", REQUIRED),
    Option("output", "o", REQUIRED),
    Option("overlap", "", NO_ARG),
    Option("partition", "p", REQUIRED),
    Option("preserve-env", "E", NO_ARG),
    Option("pty", "", NO_ARG),
    Option("qos", "q", REQUIRED),
    Option("reservation", "", REQUIRED),
    Option("quiet", "Q", NO_ARG),
    Option("time", "t", REQUIRED),
    Option("unbuffered", "u", NO_ARG),
    Option("usage", "", NO_ARG),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V", NO_ARG),
]

HELP = """\
Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]]

Parallel run options:
  -A, --account=name          charge job to specified account
  -c, --cpus-per-task=ncpus   number of cpus required per task
  -D, --chdir=path            change remote current working directory
  -e, --error=err             location of stderr redirection
  -E, --preserve-env          env vars for node and task counts override
                              command-line flags
      --exact                 use only the resources requested for the step
      --exclusive             steps do not share CPUs (implies --exact)
      --export=env_vars|NONE  environment passed to the tasks
      --gpu-bind=type         none, single:N, per_task:N, map_gpu:...
  -G, --gpus=n                count of GPUs required for the step
      --gpus-per-node=n       number of GPUs required per allocated node
      --gpus-per-task=n       number of GPUs required per spawned task
      --gres=list             required generic resources per node
  -i, --input=in              stdin: task id, "all", "none" or a file
  -J, --job-name=jobname      name of job
      --jobid=id              run under an already allocated job
  -K, --kill-on-bad-exit      kill the step if any task exits non-zero
  -l, --label                 prepend task number to lines of stdout/err
  -m, --distribution=type     block or cyclic distribution of tasks
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
  -n, --ntasks=ntasks         number of tasks to run
      --ntasks-per-node=n     number of tasks to invoke on each node
      --open-mode=append|truncate  how task output files are opened
  -o, --output=out            location of stdout redirection
      --overlap               share the allocation's resources with other steps
  -p, --partition=partition   partition requested
      --pty                   run task zero in pseudo terminal
  -t, --time=minutes          time limit
  -u, --unbuffered            do not line-buffer stdout/err
  -w, --nodelist=hosts...     request a specific list of hosts
  -x, --exclude=hosts...      exclude a specific list of hosts

  -h, --help                  show this help message
  -V, --version               output version information and exit
"""

DEFAULT_ENV = {"cpus_per_task": "SLURM_CPUS_PER_TASK", "gpus_per_task": "SLURM_GPUS_PER_TASK"}


def _env_count(env: dict[str, str], name: str) -> str | None:
    text = env.get(name, "").split("(")[0]  # "4(x2)" -> "4"
    return text if text.isdigit() else None


def with_environment_defaults(values: dict[str, object], env: dict[str, str]) -> dict[str, object]:
    """The options, completed from the allocation's variables as Slurm's srun does.

    Inside an allocation a step spans its nodes (``SLURM_NNODES``) unless
    ``-N`` says otherwise; its task count is ``-n``, else ``--ntasks-per-node``
    times the nodes, else the job's ``SLURM_NTASKS`` (with its
    ``SLURM_NTASKS_PER_NODE``), else one per node. Fewer tasks than nodes
    shrink the step, with srun's warning. Output files are opened as
    ``SLURM_OPEN_MODE`` (from ``sbatch --open-mode``) says.

    Args:
        values: the parsed command line.
        env: srun's environment.

    Returns:
        The merged options.
    """
    merged = dict(values)
    nodes = _env_count(env, "SLURM_NNODES")
    if "nodes" not in merged and nodes:
        merged["nodes"] = nodes
    given = any(k in values for k in ("ntasks", "ntasks_per_node", "nodes"))
    if not given:
        for key, name in (("ntasks", "SLURM_NTASKS"), ("ntasks_per_node", "SLURM_NTASKS_PER_NODE")):
            count = _env_count(env, name)
            if count:
                merged[key] = count
    for key, name in DEFAULT_ENV.items():
        if key not in merged and env.get(name, "").isdigit():
            merged[key] = env[name]
    if "open_mode" not in merged and env.get("SLURM_OPEN_MODE"):  # set by sbatch --open-mode
        merged["open_mode"] = env["SLURM_OPEN_MODE"]
    ntasks, node_text = str(merged.get("ntasks", "")), str(merged.get("nodes", ""))
    if ntasks.isdigit() and node_text.isdigit() and int(ntasks) < int(node_text):
        sys.stderr.write(
            f"srun: Warning: can't run {ntasks} processes on {node_text} nodes, "
            f"setting nnodes to {ntasks}\n"
        )
        merged["nodes"] = ntasks
    return merged


def _counts(values: dict[str, object]) -> dict[str, object]:
    """Task geometry and GPU counts, parsed as Slurm's client parses them."""
    fields: dict[str, object] = {}
    if "nodes" in values:
        fields["min_nodes"], fields["max_nodes"] = parse_node_range(str(values["nodes"]))
    for key in (
        "ntasks",
        "ntasks_per_node",
        "cpus_per_task",
        "gpus",
        "gpus_per_node",
        "gpus_per_task",
    ):
        if key in values:
            fields[key] = parse_positive(str(values[key]), "--" + key.replace("_", "-"))
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
    return fields


def step_spec(values: dict[str, object], argv: list[str], job_id: int) -> dict[str, object]:
    """The StepSpec fields of this srun.

    Args:
        values: the merged options.
        argv: the command and its arguments.
        job_id: the allocation.

    Returns:
        The fields.
    """
    spec = _counts(values)
    distribution = str(values.get("distribution", "block")).split(":")[0]
    if distribution not in ("block", "cyclic"):
        raise CommandError(
            f"error: Invalid --distribution specification: {distribution}", CLIENT_ERROR
        )
    spec.update(
        job_id=job_id,
        name=str(values.get("job_name") or os.path.basename(argv[0])),
        argv=argv,
        distribution=distribution,
        exclusive="exclusive" in values,
        exact=bool(values.get("exact")),
        overlap=bool(values.get("overlap")),
        interactive=bool(values.get("interactive")),
        requester_uid=os.getuid(),
        cwd=_cwd(values),
        srun_host=srun_host(),
        srun_pid=os.getpid(),
    )
    return spec


def srun_host() -> str:
    """Where this srun runs, as scontrol show step names it: the node inside a job."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _cwd(values: dict[str, object]) -> str:
    return os.path.normpath(os.path.join(os.getcwd(), str(values.get("chdir") or "")))


def allocation_spec(values: dict[str, object], argv: list[str]) -> dict[str, object]:
    """The JobSpec of the allocation srun makes when it runs outside one.

    Args:
        values: the merged options.
        argv: the command.

    Returns:
        The JobSpec fields.
    """
    spec = _counts(values)
    cyclic = str(values.get("distribution", "")).startswith("cyclic")
    if cyclic and "ntasks" in spec and "min_nodes" in spec and "ntasks_per_node" not in spec:
        # The allocation is made for the distribution: tasks dealt evenly over the nodes.
        spec["ntasks_per_node"] = -(-int(str(spec["ntasks"])) // int(str(spec["min_nodes"])))
    spec.update(job_identity())
    spec.update(
        name=str(values.get("job_name") or os.path.basename(argv[0])),
        batch=False,
        work_dir=_cwd(values),
        submit_dir=os.getcwd(),
        command=" ".join(argv),
        environment={},
    )
    for key in ("partition", "account", "qos", "reservation"):
        if values.get(key):
            spec[key] = str(values[key])
    if "time" in values:
        try:
            spec["time_limit"] = units.parse_time_limit(str(values["time"]))
        except ValueError:
            raise CommandError("error: Invalid --time specification", CLIENT_ERROR) from None
    return spec


def create_step(spec: dict[str, object], quiet: bool) -> Message:
    """CreateStep, retrying while other steps hold the resources (as Slurm's srun waits).

    Args:
        spec: the StepSpec fields.
        quiet: no informational messages.

    Returns:
        The CreateStepReply.

    Raises:
        CommandError: the step can never be created.
    """
    waited = False
    delay = RETRY_FIRST
    while True:
        try:
            reply: Message = call("CreateStep", spec=spec)
            break
        except RpcError as err:
            if err.code != "RESOURCE_EXHAUSTED":
                raise CommandError(
                    f"error: Unable to create step for job {spec['job_id']}: {rpc_message(err)}"
                ) from None
            if not waited and not quiet:
                sys.stderr.write(
                    f"srun: Job {spec['job_id']} step creation temporarily disabled, retrying "
                    f"({rpc_message(err)})\n"
                )
            waited = True
            time.sleep(delay)  # the step ahead usually ends within milliseconds
            delay = min(delay * 2, RETRY_MAX)
    if waited and not quiet:
        sys.stderr.write(f"srun: Step created for StepId={spec['job_id']}.{reply.step.step_id}\n")
    return reply


def launch_request(values: dict[str, object], reply: Message, argv: list[str]) -> dict[str, object]:
    """What every node agent gets to start its tasks.

    Args:
        values: the merged options.
        reply: the CreateStepReply.
        argv: the command.

    Returns:
        The LaunchTasksRequest fields.
    """
    stdin = str(values.get("input", "0"))
    umask = os.umask(0)
    os.umask(umask)
    return {
        "credential": reply.credential,
        "job_id": reply.step.job_id,
        "step_id": reply.step.step_id,
        "argv": argv,
        "environment": parse_export(
            None if values.get("export") is None else str(values["export"]), os.environ
        ),
        "cwd": _cwd(values),
        "stdout": str(values.get("output") or ""),
        "stderr": str(values.get("error") or ""),
        "stdin": "" if stdin.isdigit() or stdin == "all" else stdin,
        "stdin_all": stdin == "all",
        "gpu_bind": str(values.get("gpu_bind") or ""),
        "unbuffered": bool(values.get("unbuffered")),
        "umask": umask,
        "open_append": values.get("open_mode") == "append",
        "kill_on_bad_exit": _kill_on_bad_exit(values),
        "job": reply.job,
        "step": reply.step,
        "launch_host": os.uname().nodename.split(".")[0],
        "preserve_env": bool(values.get("preserve_env")),
        "pty": "window" in values,
        "window": values.get("window", {}),
    }


def _check_pty(values: dict[str, object]) -> None:
    """``--pty``: no stream options beside it; a terminal's size, or no pty after all.

    Args:
        values: the options; ``window`` (WindowSize fields) is added when a
            pty will be used, which implies ``--unbuffered``.

    Raises:
        CommandError: ``-i``, ``-o`` or ``-e`` given too.
    """
    if any(key in values for key in ("input", "output", "error")):
        raise CommandError("error: --error/--input/--output are incompatible with --pty")
    window = pty_window(PROG)
    if window is not None:
        values["window"] = {"rows": window[0], "cols": window[1]}
        values["unbuffered"] = True


def _open_mode(values: dict[str, object]) -> str:
    if "open_mode" not in values:
        return "truncate"
    try:
        return jobopts.parse_open_mode(str(values["open_mode"]))
    except ValueError:
        raise CommandError("error: Invalid --open-mode specification", CLIENT_ERROR) from None


def _kill_on_bad_exit(values: dict[str, object]) -> bool:
    if "kill_on_bad_exit" not in values:
        return False
    return str(values["kill_on_bad_exit"]) not in ("0",)


def step_addresses(job_id: int, step_id: int) -> dict[str, tuple[str, int]] | None:
    """Where the agents of a step's nodes listen now, as the controller knows (one try).

    Args:
        job_id: the job.
        step_id: the step.

    Returns:
        Node name -> (address, port); None when the controller cancelled the
        step (its job ended) or no longer knows it.

    Raises:
        RpcError: the controller did not answer.
    """
    reply = controller().call("GetSteps", job_id=job_id)
    for step in reply.steps:
        if step.step_id == step_id and step.state != "CANCELLED":
            return {n.node: (n.addr, int(n.port)) for n in step.nodes}
    return None


def run_step(values: dict[str, object], argv: list[str], job_id: int) -> int:
    """Create, launch and follow one step of ``job_id``.

    Args:
        values: the merged options.
        argv: the command.
        job_id: the allocation.

    Returns:
        srun's exit status.
    """
    quiet = bool(values.get("quiet"))
    reply = create_step(step_spec(values, argv, job_id), quiet)
    request = launch_request(values, reply, argv)
    stdin = str(values.get("input", "0"))
    options = {
        "label": values.get("label"),
        "unbuffered": values.get("unbuffered"),
        "kill_on_bad_exit": request["kill_on_bad_exit"],
        "stdin_to": "none" if request["stdin"] else ("all" if stdin == "all" else "task0"),
        "pty": request["pty"],
    }
    wake = install_signal_pipe(bool(request["pty"]))
    step_id = int(reply.step.step_id)
    step = StepRun(PROG, reply, request, options, lambda: step_addresses(job_id, step_id))
    try:
        step.launch()
        return step.wait(wake)
    finally:
        step.close()


def srun(argv: list[str]) -> int:
    """srun's body.

    Args:
        argv: its arguments.

    Returns:
        The exit status.
    """
    values, command = parse_or_exit(PROG, OPTIONS, argv, True, help_text=HELP)
    if not command:
        raise CommandError("fatal: No command given to execute.")
    values = with_environment_defaults(values, dict(os.environ))
    values["open_mode"] = _open_mode(values)
    if values.get("pty"):
        _check_pty(values)
    gpus_asked = any(k in values for k in ("gpus", "gpus_per_node", "gpus_per_task"))
    check_gres(
        str(values["gres"]) if "gres" in values else None, gpus_asked, client_config().gres_types
    )
    job_text = str(values.get("jobid") or os.environ.get("SLURM_JOB_ID") or "")
    if job_text:
        if not job_text.isdigit():
            raise CommandError(f"error: Invalid --jobid specification: {job_text}", CLIENT_ERROR)
        return run_step(values, command, int(job_text))
    quiet = bool(values.get("quiet"))
    job = allocate(PROG, allocation_spec(values, command), quiet)
    status = 1
    try:
        status = run_step(values, command, int(job.job_id))
    finally:
        release(
            int(job.job_id),
            exit_code=min(status, 255) if status < 128 else 0,
            signal_number=status - 128 if status > 128 else 0,
        )
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``srun`` command.

    Args:
        argv: arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return run(PROG, srun, argv)


if __name__ == "__main__":
    sys.exit(main())
