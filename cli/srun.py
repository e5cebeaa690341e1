"""srun: run a parallel job step, inside an allocation or in one of its own.

Inside a batch job or salloc (``SLURM_JOB_ID`` is set, or ``--jobid``), srun
asks the controller for a step, then launches the tasks through the node
agents and relays their I/O (cli/steprun.py). Outside, it first obtains an
allocation (cli/alloc.py) and releases it afterwards. As Slurm's srun, it
reads its input environment variables as options (the task geometry of the
surrounding allocation among them: ``SLURM_NTASKS``, ``SLURM_NNODES``...),
the command line overriding them (cli/stepspec.py).

Imports cli.alloc, cli.cmdcheck, cli.common, cli.helptext, cli.jobflags, cli.jobspec,
cli.multiprog, cli.steprun, cli.stepspec, cli.submit, cli.terminal and minislurm's lean modules.
"""

from __future__ import annotations

import os
import sys
import time

from cli import cmdcheck, jobflags
from cli.alloc import allocate, immediate, release
from cli.common import (
    CommandError,
    call,
    client_config,
    controller,
    parse_or_exit,
    rpc_message,
    run,
)
from cli.helptext import HELP, USAGE
from cli.jobspec import allocation_spec
from cli.multiprog import multi_prog
from cli.steprun import StepRun, install_signal_pipe
from cli.stepspec import (
    check_command_options,
    launch_request,
    merged_values,
    open_mode,
    seconds,
    step_spec,
)
from cli.submit import CLIENT_ERROR, check_clusters, check_gres, parse_count, report_test
from cli.terminal import pty_window
from minislurm import hostlist
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "srun"
RETRY_FIRST, RETRY_MAX = 0.02, 0.5  # seconds between step creation attempts
OPTIONS = jobflags.options(PROG)


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
            if err.code == "NOT_FOUND":
                job_id = spec["job_id"]
                raise CommandError(
                    f"error: Unable to confirm allocation for job {job_id}: {rpc_message(err)}\n"
                    "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job"
                    f" {job_id}"
                ) from None
            if err.code != "RESOURCE_EXHAUSTED":
                *details, last = rpc_message(err).split("\n")
                lines = [
                    *(f"error: {d}" for d in details),
                    f"error: Unable to create step for job {spec['job_id']}: {last}",
                ]
                raise CommandError("\nsrun: ".join(lines)) from None
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


def run_step(
    values: dict[str, object], argv: list[str], job_id: int, own_allocation: bool = False
) -> int:
    """Create, launch and follow one step of ``job_id``.

    Args:
        values: the merged options.
        argv: the command.
        job_id: the allocation.
        own_allocation: this srun made the allocation (it runs outside one).

    Returns:
        srun's exit status.
    """
    quiet = bool(values.get("quiet"))
    spec = step_spec(values, argv, job_id)
    if values.get("resv_ports") is not None:  # no MpiParams=ports= here: none can be reserved
        raise CommandError(
            f"error: Unable to create step for job {job_id}: Requires more ports than can be"
            " reserved"
        )
    reply = create_step(spec, quiet)
    request = launch_request(values, reply, argv, own_allocation)
    stdin = str(values.get("input", "0"))
    options = {
        "label": values.get("label"),
        "unbuffered": values.get("unbuffered"),
        "kill_on_bad_exit": request["kill_on_bad_exit"],
        "stdin_to": "none" if request["stdin"] else ("all" if stdin == "all" else "task0"),
        "wait": seconds(values, "wait") if "wait" in values else None,
        "quit_on_interrupt": values.get("quit_on_interrupt"),
        "pty": request["pty"],
    }
    step_id = int(reply.step.step_id)
    prolog, epilog = (
        _program(values.get(opt), str(getattr(client_config(), f"srun_{opt}")))
        for opt in ("prolog", "epilog")
    )
    if prolog:
        status = _srun_script(prolog, reply, "prolog_srun")
        if status:
            sys.stderr.write(f"srun: error: srun prolog failed rc = {status}. Aborting step.\n")
            call("EndStep", job_id=job_id, step_id=step_id, requester_uid=os.getuid())
            return 1
    wake = install_signal_pipe(bool(request["pty"]))
    step = StepRun(PROG, reply, request, options, lambda: step_addresses(job_id, step_id))
    try:
        step.launch()
        return step.wait(wake)
    finally:
        step.close()
        if epilog:
            status = _srun_script(epilog, reply, "epilog_srun")
            if status:
                sys.stderr.write(f"srun: error: srun epilog failed status={status}\n")


def _program(option: object, configured: str) -> str:
    """srun's ``--prolog``/``--epilog``, else slurm.conf's SrunProlog/SrunEpilog ("none": none)."""
    chosen = configured if option is None else str(option)
    return "" if chosen.lower() == "none" else chosen


def _srun_script(program: str, reply: Message, context: str) -> int:
    """Run SrunProlog or SrunEpilog with the step's variables; its exit status.

    Args:
        program: the program.
        reply: the step as CreateStep gave it.
        context: SLURM_SCRIPT_CONTEXT (prolog_srun, epilog_srun).

    Returns:
        0 when it succeeded; 1 when it could not be started.
    """
    step = reply.step
    env = {
        **os.environ,
        "SLURM_JOB_ID": str(step.job_id),
        "SLURM_JOBID": str(step.job_id),
        "SLURM_STEP_ID": str(step.step_id),
        "SLURM_STEPID": str(step.step_id),
        "SLURM_NNODES": str(len(step.nodes)),
        "SLURM_STEP_NODELIST": str(step.nodelist),
        "SLURM_NTASKS": str(sum(len(n.task_ids) for n in step.nodes)),
        "SLURM_SCRIPT_CONTEXT": context,
    }
    try:  # not subprocess: it loads signal, which srun does without (~9 ms)
        pid = os.posix_spawn(program, [program], env)
    except OSError as err:
        sys.stderr.write(f"srun: error: {program}: {err.strerror}\n")
        return 1
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


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


def srun(argv: list[str]) -> int:
    """srun's body.

    Args:
        argv: its arguments.

    Returns:
        The exit status.
    """
    cli, command = parse_or_exit(
        PROG, OPTIONS, argv, True, HELP[PROG], USAGE[PROG], usage_status=CLIENT_ERROR
    )
    if str(cli.get("mpi", "")).lower() == "list":
        print("MPI plugin types are...", *(f"\t{t}" for t in cmdcheck.MPI_TYPES), sep="\n")
        print("specific pmix plugin versions available: pmix_v4")
        return 0
    if not command:
        raise CommandError("fatal: No command given to execute.")
    values = merged_values(cli, os.environ)
    values["open_mode"] = open_mode(values)
    if values.get("pty"):
        _check_pty(values)
    check_command_options(values)
    gpus_asked = any(k in values for k in ("gpus", "gpus_per_node", "gpus_per_task"))
    check_gres(
        str(values["gres"]) if "gres" in values else None, gpus_asked, client_config().gres_types
    )
    program = command[0]
    if values.get("multi_prog"):
        values.setdefault("job_name", os.path.basename(program))
        command = multi_prog(program)
    check_clusters(PROG, None if values.get("clusters") is None else str(values["clusters"]))
    if "jobid" in values and not values.get("test_only"):
        return run_step(values, command, parse_count(str(values["jobid"]), "--jobid"))
    return run_in_allocation(values, command, program)


def run_in_allocation(values: dict[str, object], command: list[str], program: str) -> int:
    """srun outside an allocation: make one, run the step in it, release it.

    Args:
        values: the merged options.
        command: the command.
        program: the program as given (the ``--multi-prog`` file): the job's
            ``Command``, and its name unless ``-J`` gives one.

    Returns:
        srun's exit status.
    """
    if "relative" in values:
        raise CommandError("fatal: --relative option invalid for job allocation request")
    if values.get("no_allocate") and not values.get("nodelist"):
        raise CommandError("error: must specify a node list with -Z, --no-allocate.")
    fit_nodelist(values)
    quiet = bool(values.get("quiet"))
    spec = allocation_spec(PROG, values, program, os.path.basename(program))
    if values.get("test_only"):
        return test_allocation(spec)
    job = allocate(PROG, spec, quiet, immediate(values))
    status = 1
    try:
        status = run_step(values, command, int(job.job_id), own_allocation=True)
    finally:
        release(
            int(job.job_id),
            exit_code=min(status, 255) if status < 128 else 0,
            signal_number=status - 128 if status > 128 else 0,
        )
    return status


def test_allocation(spec: dict[str, object]) -> int:
    """``--test-only``: when and where the allocation would start; nothing is submitted.

    Args:
        spec: the allocation's JobSpec fields.

    Returns:
        The exit status.
    """
    try:
        reply = call("SubmitJob", spec={**spec, "test_only": True})
    except RpcError as err:
        *details, failure = rpc_message(err).split("\n")
        for line in details:
            sys.stderr.write(f"srun: error: {line}\n")
        sys.stderr.write(f"allocation failure: {failure}\n")  # Slurm's srun says it so
        return 1
    if not reply.expected_start:
        sys.stderr.write("allocation failure: Requested node configuration is not available\n")
        return 1
    return report_test(PROG, reply)


def fit_nodelist(values: dict[str, object]) -> None:
    """A ``-w`` list longer than ``-N`` allows loses its last nodes, as Slurm's srun warns.

    Args:
        values: the merged options (``nodelist`` is changed in place).
    """
    nodes, nodelist = str(values.get("nodes") or ""), str(values.get("nodelist") or "")
    if not nodelist or not nodes:
        return
    high = nodes.split("-")[-1]
    try:
        names = list(dict.fromkeys(hostlist.expand(nodelist)))
    except ValueError:
        return  # the controller says what is wrong with it
    if high.isdigit() and 0 < int(high) < len(names):
        sys.stderr.write(
            "srun: error: Required nodelist includes more nodes than permitted by max-node count"
            f" ({len(names)} > {high}). Eliminating nodes from the nodelist.\n"
        )
        values["nodelist"] = hostlist.compress(names[: int(high)])


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
