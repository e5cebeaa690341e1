"""salloc: obtain an allocation, run a command in it (a shell by default), release it.

The command runs here, on the submit host, with the job's variables set
(``SLURM_JOB_ID``, ``SLURM_JOB_NODELIST``, ...), so that ``srun`` inside it
starts steps in the allocation, as with Slurm's salloc. Without a command,
under ``LaunchParameters=use_interactive_step``, it runs the srun beside it
with ``InteractiveStepOptions`` (``--interactive --preserve-env --pty
$SHELL``) through ``/bin/sh -c``, as Slurm's salloc does: the shell then
runs on the job's first node, in the job's interactive step.

Imports cli.common, cli.opts, cli.submit, cli.alloc, cli.srun's option parsing.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # ``signal`` imports enum (~9 ms)
import os
import subprocess
import sys

from cli.alloc import allocate, release
from cli.common import CommandError, client_config, parse_or_exit, run
from cli.opts import NO_ARG, REQUIRED, Option
from cli.srun import allocation_spec
from cli.submit import check_gres
from minislurm.units import compress_counts

PROG = "salloc"

OPTIONS = [
    Option("account", "A", REQUIRED),
    Option("chdir", "D", REQUIRED),
    Option("cpus-per-task", "c", REQUIRED),
    Option("exclude", "x", REQUIRED),
    Option("gpus", "G", REQUIRED),
    Option("gpus-per-node", "", REQUIRED),
    Option("gpus-per-task", "", REQUIRED),
    Option("gres", "", REQUIRED),
    Option("help", "h", NO_ARG),
    Option("job-name", "J", REQUIRED),
    Option("mem", "", REQUIRED),
    Option("mem-per-cpu", "", REQUIRED),
    Option("nodelist", "w", REQUIRED),
    Option("nodes", "N", REQUIRED),
    Option("ntasks", "n", REQUIRED),
    Option("ntasks-per-node", "", REQUIRED),
    Option("partition", "p", REQUIRED),
    Option("qos", "q", REQUIRED),
    Option("reservation", "", REQUIRED),
    Option("quiet", "Q", NO_ARG),
    Option("time", "t", REQUIRED),
    Option("usage", "", NO_ARG),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V", NO_ARG),
]

HELP = """\
Usage: salloc [OPTIONS(0)...] [command(0) [args(0)...]]

  -A, --account=name, -c, --cpus-per-task=ncpus, -D, --chdir=path,
  -G, --gpus=n, --gpus-per-node=n, --gpus-per-task=n, --gres=list,
  -J, --job-name=jobname, --mem=MB, --mem-per-cpu=MB, -N, --nodes=N,
  -n, --ntasks=ntasks, --ntasks-per-node=n, -p, --partition=partition,
  -t, --time=minutes, -w, --nodelist=hosts, -x, --exclude=hosts, -Q, --quiet

  -h, --help                  show this help message
  -V, --version               output version information and exit
"""


def allocation_environment(job: object, values: dict[str, object]) -> dict[str, str]:
    """The variables salloc sets for its command (those srun reads to find the allocation).

    Args:
        job: the running JobInfo.
        values: salloc's options.

    Returns:
        The environment for the command.
    """
    per_node = [(int(a.cpus), int(a.ntasks)) for a in job.allocation]  # type: ignore[attr-defined]
    env = dict(os.environ)
    job_id = str(job.job_id)  # type: ignore[attr-defined]
    env.update(
        {
            "SLURM_JOB_ID": job_id,
            "SLURM_JOBID": job_id,
            "SLURM_JOB_NAME": str(job.name),  # type: ignore[attr-defined]
            "SLURM_JOB_NODELIST": str(job.nodes),  # type: ignore[attr-defined]
            "SLURM_NODELIST": str(job.nodes),  # type: ignore[attr-defined]
            "SLURM_JOB_NUM_NODES": str(len(per_node)),
            "SLURM_NNODES": str(len(per_node)),
            "SLURM_JOB_PARTITION": str(job.partition),  # type: ignore[attr-defined]
            "SLURM_JOB_CPUS_PER_NODE": compress_counts([c for c, _ in per_node]),
            "SLURM_TASKS_PER_NODE": compress_counts([t for _, t in per_node]),
            "SLURM_SUBMIT_DIR": os.getcwd(),
            "SLURM_SUBMIT_HOST": os.uname().nodename.split(".")[0],
            "SLURM_CLUSTER_NAME": client_config().cluster_name,
            "SLURM_CONF": client_config().path,
        }
    )
    if "ntasks" in values or "ntasks_per_node" in values:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(job.num_tasks)  # type: ignore[attr-defined]
    if "ntasks_per_node" in values:
        env["SLURM_NTASKS_PER_NODE"] = str(values["ntasks_per_node"])
    return env


def default_command() -> list[str]:
    """What salloc runs when given no command.

    Returns:
        The interactive step's srun under ``LaunchParameters=use_interactive_step``,
        else the user's shell, here.
    """
    config = client_config()
    if "use_interactive_step" not in config.launch_parameters:
        return [os.environ.get("SHELL", "/bin/sh")]
    srun = os.path.join(os.path.dirname(sys.argv[0]), "srun")
    return ["/bin/sh", "-c", f"{srun} {config.interactive_step_options}"]


def salloc(argv: list[str]) -> int:
    """salloc's body.

    Args:
        argv: its arguments.

    Returns:
        The command's exit status.
    """
    values, command = parse_or_exit(PROG, OPTIONS, argv, True, help_text=HELP)
    command = command or default_command()
    values.setdefault("job_name", "interactive")  # Slurm's salloc names its jobs so
    gpus_asked = any(k in values for k in ("gpus", "gpus_per_node", "gpus_per_task"))
    check_gres(
        str(values["gres"]) if "gres" in values else None, gpus_asked, client_config().gres_types
    )
    quiet = bool(values.get("quiet"))
    job = allocate(PROG, allocation_spec(values, command), quiet)
    job_id = int(job.job_id)
    if not quiet:
        sys.stderr.write(f"salloc: Granted job allocation {job_id}\n")
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command gets Ctrl-C, not salloc
        status = subprocess.call(command, env=allocation_environment(job, values))
    except OSError as err:
        raise CommandError(f"error: {command[0]}: {err.strerror}") from None
    finally:
        if not quiet:
            sys.stderr.write(f"salloc: Relinquishing job allocation {job_id}\n")
        release(
            job_id,
            exit_code=status if status >= 0 else 0,
            signal_number=-status if status < 0 else 0,
        )
    return status if status >= 0 else 128 - status


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``salloc`` command.

    Args:
        argv: arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return run(PROG, salloc, argv)


if __name__ == "__main__":
    sys.exit(main())
