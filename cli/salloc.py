"""salloc: obtain an allocation, run a command in it (a shell by default), release it.

The command runs here, on the submit host, with the job's variables set
(``SLURM_JOB_ID``, ``SLURM_JOB_NODELIST``, ...), so that ``srun`` inside it
starts steps in the allocation, as with Slurm's salloc. Without a command,
under ``LaunchParameters=use_interactive_step``, it runs the srun beside it
with ``InteractiveStepOptions`` (``--interactive --preserve-env --pty
$SHELL``) through ``/bin/sh -c``, as Slurm's salloc does: the shell then
runs on the job's first node, in the job's interactive step. With
``--no-shell`` salloc runs nothing: it says the allocation was granted and
leaves it to ``srun --jobid`` until its time limit or ``scancel``.

Imports cli.alloc, cli.cmdcheck, cli.common, cli.helptext, cli.jobflags, cli.jobspec,
cli.submit and minislurm's lean modules.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # ``signal`` imports enum (~9 ms)
import os
import subprocess
import sys

from cli import cmdcheck, jobflags
from cli.alloc import Revocation, allocate, immediate, release
from cli.common import CommandError, client_config, parse_or_exit, run
from cli.helptext import HELP, USAGE
from cli.jobspec import allocation_spec
from cli.submit import CLIENT_ERROR, check_clusters, check_gres, check_x11, option_error
from minislurm import optcheck
from minislurm.units import compress_counts

PROG = "salloc"
OPTIONS = jobflags.options(PROG)


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
            "SLURM_JOB_QOS": str(job.qos),  # type: ignore[attr-defined]
            "SLURM_NODE_ALIASES": "(null)",
            "SLURM_JOB_CPUS_PER_NODE": compress_counts([c for c, _ in per_node]),
            "SLURM_TASKS_PER_NODE": compress_counts([t for _, t in per_node]),
            "SLURM_SUBMIT_DIR": os.getcwd(),
            "SLURM_SUBMIT_HOST": os.uname().nodename.split(".")[0],
            "SLURM_CLUSTER_NAME": client_config().cluster_name,
            "SLURM_CONF": client_config().path,
        }
    )
    if job.account:  # type: ignore[attr-defined]
        env["SLURM_JOB_ACCOUNT"] = str(job.account)  # type: ignore[attr-defined]
    if "ntasks" in values or "ntasks_per_node" in values:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(job.num_tasks)  # type: ignore[attr-defined]
    if "ntasks_per_node" in values:
        env["SLURM_NTASKS_PER_NODE"] = str(values["ntasks_per_node"])
    for key, name in (
        ("distribution", "SLURM_DISTRIBUTION"),
        ("ntasks_per_gpu", "SLURM_NTASKS_PER_GPU"),
    ):
        if key in values:
            env[name] = str(values[key])
    return env


def default_command() -> list[str]:
    """What salloc runs when given no command.

    Returns:
        The interactive step's srun under ``LaunchParameters=use_interactive_step``,
        else the user's shell, here.
    """
    config = client_config()
    if "use_interactive_step" not in config.launch_parameters:
        return [login_shell()]
    srun = os.path.join(os.path.dirname(sys.argv[0]), "srun")
    return ["/bin/sh", "-c", f"{srun} {config.interactive_step_options}"]


def login_shell() -> str:
    """The user's shell from the password database, as Slurm's salloc runs it (not $SHELL).

    Returns:
        Its path; $SHELL, else /bin/sh, for a user the database does not know.
    """
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"
    except KeyError:
        return os.environ.get("SHELL", "/bin/sh")


def salloc(argv: list[str]) -> int:
    """salloc's body.

    Args:
        argv: its arguments.

    Returns:
        The command's exit status (0 with ``--no-shell``).
    """
    cli, command = parse_or_exit(
        PROG, OPTIONS, argv, True, HELP[PROG], USAGE[PROG], usage_status=CLIENT_ERROR
    )
    values = {**jobflags.environment_values(PROG, os.environ), **cli}
    no_shell = bool(values.get("no_shell"))
    command = command or default_command()
    check_command_options(values)
    check_clusters(PROG, None if values.get("clusters") is None else str(values["clusters"]))
    gpus_asked = any(k in values for k in ("gpus", "gpus_per_node", "gpus_per_task"))
    check_gres(
        str(values["gres"]) if "gres" in values else None, gpus_asked, client_config().gres_types
    )
    if values.get("chdir"):
        try:
            os.chdir(str(values["chdir"]))
        except OSError as err:
            path = os.path.join(os.getcwd(), str(values["chdir"]))
            raise CommandError(f"error: chdir({path}): {err.strerror}") from None
        values.pop("chdir")  # the allocation's working directory is now this one
    quiet = bool(values.get("quiet"))
    name = "no-shell" if no_shell else "interactive"
    spec = allocation_spec(PROG, values, "", name)
    job = allocate(PROG, spec, quiet, immediate(values))
    job_id = int(job.job_id)
    if not quiet:
        sys.stderr.write(f"salloc: Granted job allocation {job_id}\n")
    if no_shell:  # the allocation stays until its time limit or scancel; srun --jobid uses it
        return 0
    status = 0
    revocation = Revocation(PROG, job_id, quiet)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command gets Ctrl-C, not salloc
        status = subprocess.call(command, env=allocation_environment(job, values))
    except OSError as err:
        raise CommandError(f"error: {command[0]}: {err.strerror}") from None
    finally:
        if revocation.release():
            if not quiet:
                sys.stderr.write(f"salloc: Relinquishing job allocation {job_id}\n")
            release(
                job_id,
                exit_code=status if status >= 0 else 0,
                signal_number=-status if status < 0 else 0,
            )
    return status if status >= 0 else 128 - status


def check_command_options(values: dict[str, object]) -> None:
    """Check salloc's own options (``--kill-command``, ``--x11``), which have no effect here.

    Args:
        values: the merged options.

    Raises:
        CommandError: a value Slurm rejects.
    """
    if "kill_command" in values:
        try:
            cmdcheck.check("kill-command", str(values["kill_command"] or ""))
        except optcheck.OptionError as err:
            raise option_error(PROG, err) from None
    check_x11(values)
    if values.get("container") is not None:  # salloc runs its command here, not in a step
        raise CommandError("error: --container requires LaunchParameters=use_interactive_step")


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
