"""sbatch: submit a batch script.

Options come from ``#SBATCH`` lines at the top of the script (up to the
first line that is neither blank nor a comment), then from the command
line, which wins. Everything after the script's name is passed to the
script. Values that cannot be parsed are rejected here, as Slurm's client
does (exit 255); the controller validates everything again.

Imports cli.common, cli.opts, cli.jobspec, cli.submit and minislurm's lean modules only.
"""

from __future__ import annotations

import os
import sys
import time

from cli.common import CommandError, call, client_config, parse_or_exit, rpc_message, run
from cli.jobspec import build_spec, option_text
from cli.opts import NO_ARG, OPTIONAL, REQUIRED, Option
from cli.submit import check_gres
from minislurm import units
from minislurm.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.protowire import Message

PROG = "sbatch"

OPTIONS = [
    Option("account", "A", REQUIRED),
    Option("array", "a", REQUIRED),
    Option("begin", "b", REQUIRED),
    Option("chdir", "D", REQUIRED),
    Option("comment", "", REQUIRED),
    Option("cpus-per-task", "c", REQUIRED),
    Option("deadline", "", REQUIRED),
    Option("dependency", "d", REQUIRED),
    Option("error", "e", REQUIRED),
    Option("exclude", "x", REQUIRED),
    Option("exclusive", "", OPTIONAL),
    Option("export", "", REQUIRED),
    Option("gpus", "G", REQUIRED),
    Option("gpus-per-node", "", REQUIRED),
    Option("gpus-per-task", "", REQUIRED),
    Option("gres", "", REQUIRED),
    Option("help", "h", NO_ARG),
    Option("hold", "H", NO_ARG),
    Option("input", "i", REQUIRED),
    Option("job-name", "J", REQUIRED),
    Option("kill-on-invalid-dep", "", REQUIRED),
    Option("mail-type", "", REQUIRED),
    Option("mail-user", "", REQUIRED),
    Option("mem", "", REQUIRED),
    Option("mem-per-cpu", "", REQUIRED),
    Option("nice", "", OPTIONAL),
    Option("no-requeue", "", NO_ARG),
    Option("nodelist", "w", REQUIRED),
    Option("nodes", "N", REQUIRED),
    Option("ntasks", "n", REQUIRED),
    Option("ntasks-per-node", "", REQUIRED),
    Option("open-mode", "", REQUIRED),
    Option("output", "o", REQUIRED),
    Option("parsable", "", NO_ARG),
    Option("partition", "p", REQUIRED),
    Option("qos", "q", REQUIRED),
    Option("quiet", "Q", NO_ARG),
    Option("requeue", "", NO_ARG),
    Option("reservation", "", REQUIRED),
    Option("signal", "", REQUIRED),
    Option("test-only", "", NO_ARG),
    Option("time", "t", REQUIRED),
    Option("usage", "", NO_ARG),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V", NO_ARG),
    Option("wait", "W", NO_ARG),
    Option("wckey", "", REQUIRED),
    Option("wrap", "", REQUIRED),
]

USAGE = """\
Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]

Parallel run options:
  -A, --account=name          charge job to specified account
  -a, --array=indexes         job array index values
  -b, --begin=time            defer job until HH:MM MM/DD/YY
      --comment=name          arbitrary comment
  -c, --cpus-per-task=ncpus   number of cpus required per task
  -D, --chdir=directory       set working directory for batch script
      --deadline=time         remove the job if no ending possible before
                              this deadline (start > (deadline - time[-min]))
  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied
  -e, --error=err             file for batch script's standard error
      --export[=names]        specify environment variables to export
  -G, --gpus=n                count of GPUs required for the job
      --gpus-per-node=n       number of GPUs required per allocated node
      --gpus-per-task=n       number of GPUs required per spawned task
      --gres=list             required generic resources per node
  -H, --hold                  submit job in held state
  -i, --input=in              file for batch script's standard input
  -J, --job-name=jobname      name of job
      --kill-on-invalid-dep=<yes|no> kill job if dependency becomes never satisfied
      --mail-type=type        notify on state change: BEGIN, END, FAIL or ALL
      --mail-user=user        who to send email notification for job state
                              changes
      --mem=MB                minimum amount of real memory
      --mem-per-cpu=MB        maximum amount of real memory per allocated cpu
      --nice[=value]          decrease scheduling priority by value
      --no-requeue            if set, do not permit the job to be requeued
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
  -n, --ntasks=ntasks         number of tasks to run
      --ntasks-per-node=n     number of tasks to invoke on each node
      --open-mode=append|truncate  open the output and error files that way
  -o, --output=out            file for batch script's standard output
      --parsable              outputs only the jobid and cluster name (if present)
  -p, --partition=partition   partition requested
  -q, --qos=qos               quality of service
  -Q, --quiet                 quiet mode (suppress informational messages)
      --requeue               if set, permit the job to be requeued
      --reservation=name      allocate resources from named reservation
      --signal=[[R][B]:]num[@time] send signal when time limit within time seconds
  -t, --time=minutes          time limit
      --test-only             validate batch script but do not submit job
  -W, --wait                  wait for completion of submitted job
  -w, --nodelist=hosts...     request a specific list of hosts
      --wckey=wckey           wckey to run job under
      --wrap[=command string] wrap command string in a sh script and submit
  -x, --exclude=hosts...      exclude a specific list of hosts

Consumable resources related options:
      --exclusive             allocate nodes in exclusive mode

Help options:
  -h, --help                  show this help message
      --usage                 display brief usage message

Other options:
  -V, --version               output version information and exit
"""


def directives(script: bytes) -> list[str]:
    """The options of the script's ``#SBATCH`` lines, as argv words.

    Scanning stops at the first line that is neither blank nor a comment;
    on a ``#SBATCH`` line, a word starting with ``#`` begins a comment.

    Args:
        script: the batch script.

    Returns:
        The words, in order.

    Raises:
        CommandError: a line with an unterminated quote.
    """
    words: list[str] = []
    for line in script.decode(errors="replace").splitlines()[1:]:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if line.startswith("#SBATCH"):  # an indented one is an ordinary comment
            words.extend(split_words(line[len("#SBATCH") :]))
    return words


def split_words(text: str) -> list[str]:
    """Split a line into words as a shell would (quotes, backslashes), up to a ``#`` comment.

    Args:
        text: the line.

    Returns:
        The words.

    Raises:
        CommandError: an unterminated quote.
    """
    words: list[str] = []
    current: list[str] | None = None
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
            else:
                current.append(ch)  # type: ignore[union-attr]
        elif ch in "'\"":
            quote = ch
            current = current if current is not None else []
        elif ch == "\\" and i + 1 < len(text):
            i += 1
            current = current if current is not None else []
            current.append(text[i])
        elif ch.isspace():
            if current is not None:
                words.append("".join(current))
                current = None
        elif ch == "#" and current is None:
            break
        else:
            current = current if current is not None else []
            current.append(ch)
        i += 1
    if quote:
        raise CommandError(f"error: unmatched {quote} in #SBATCH line: {text.strip()}")
    if current is not None:
        words.append("".join(current))
    return words


def read_script(path: str | None, wrap: str | None) -> tuple[bytes, str]:
    """The batch script and the job's default name.

    Args:
        path: the script's path (None: read standard input).
        wrap: the ``--wrap`` command, if given.

    Returns:
        ``(script, default_name)``.

    Raises:
        CommandError: no script, an unreadable file or something that is not a script.
    """
    if wrap is not None:
        text = f"#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{wrap}\n"
        return text.encode(), "wrap"
    if path is None:
        if sys.stdin.isatty():
            raise CommandError("error: Batch script is empty!")
        script, name = sys.stdin.buffer.read(), "sbatch"
    else:
        try:
            with open(path, "rb") as f:
                script = f.read()
        except OSError:
            raise CommandError(f"error: Unable to open file {path}") from None
        name = os.path.basename(path)
    check_script(script)
    return script, name


def check_script(script: bytes) -> None:
    """Reject what Slurm's sbatch rejects before submitting.

    Args:
        script: the batch script.

    Raises:
        CommandError: empty, not starting with ``#!``, DOS line breaks or NUL bytes.
    """
    if not script.strip():
        raise CommandError("error: Batch script is empty!")
    if not script.startswith(b"#!"):
        raise CommandError(
            "error: This does not look like a batch script.  The first\n"
            "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
            "sbatch: error: For instance: #!/bin/sh"
        )
    if b"\r\n" in script:
        raise CommandError(
            "error: Batch script contains DOS line breaks (\\r\\n)\n"
            "sbatch: error: instead of expected UNIX line breaks (\\n)."
        )
    if b"\0" in script:
        raise CommandError(
            "error: The SLURM controller does not allow scripts that "
            "contain a NULL character '\\0'."
        )


def merged_options(argv: list[str]) -> tuple[dict[str, object], bytes, str, list[str]]:
    """Read the command line and the script's directives; the command line wins.

    Args:
        argv: sbatch's arguments.

    Returns:
        ``(values, script, default_name, script_args)``.
    """
    cli_values, rest = parse_or_exit(PROG, OPTIONS, argv, True, help_text=USAGE)
    wrap = option_text(cli_values, "wrap")
    path = None if wrap is not None or not rest else rest[0]
    script_args = rest[1:] if path is not None else rest
    script, name = read_script(path, wrap)
    values, _ = parse_or_exit(PROG, OPTIONS, directives(script))
    values.update(cli_values)
    if path is not None:
        values["script_path"] = path
    return values, script, name, script_args


def submit(argv: list[str]) -> int:
    """sbatch's body.

    Args:
        argv: its arguments.

    Returns:
        The exit status.
    """
    values, script, name, script_args = merged_options(argv)
    spec = build_spec(values, script, name, script_args)
    gpus_asked = any(k in values for k in ("gpus", "gpus_per_node", "gpus_per_task"))
    check_gres(option_text(values, "gres"), gpus_asked, client_config().gres_types)
    test_only = bool(values.get("test_only"))
    try:
        reply = call("SubmitJob", spec={**spec, "test_only": test_only})
    except RpcError as err:
        *details, last = rpc_message(err).split("\n")
        what = "Job submit/allocate failed" if test_only else "Batch job submission failed"
        lines = [f"error: {d}" for d in details]
        lines.append(f"error: {what}: {last}")
        raise CommandError("\nsbatch: ".join(lines)) from None
    if test_only:
        return report_test(reply)
    if values.get("parsable"):
        print(reply.job_id, flush=True)
    elif not values.get("quiet"):
        print(f"Submitted batch job {reply.job_id}", flush=True)
    return wait_for(reply.job_id) if values.get("wait") else 0


def report_test(reply: Message) -> int:
    """``--test-only``: say when and where the job would start, as Slurm does.

    Args:
        reply: the SubmitJob reply (nothing was stored).

    Returns:
        The exit status.

    Raises:
        CommandError: it could never start.
    """
    job = reply.job
    if not reply.expected_start:
        raise CommandError(
            "error: Job submit/allocate failed: Requested node configuration is not available"
        )
    sys.stderr.write(
        f"sbatch: Job {reply.job_id} to start at {units.format_timestamp(reply.expected_start)} "
        f"using {job.num_cpus} processors on nodes {job.nodes} in partition {job.partition}\n"
    )
    return 0


def wait_for(job_id: int) -> int:
    """``--wait``: poll until the job (every task of an array) has ended.

    Args:
        job_id: the job.

    Returns:
        Its exit code; the highest of an array's tasks; 1 for a job that
        ended without one (a signal, a cancel), as Slurm.
    """
    delay = 0.1
    while True:
        try:
            jobs = call("GetJobs", job_ids=[job_id], all_states=True).jobs
        except RpcError as err:
            if err.code == "NOT_FOUND":
                return 0
            raise
        if jobs and all(j.state in _ENDED for j in jobs):
            return max(_exit_status(j) for j in jobs)
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)


_ENDED = frozenset(
    ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "DEADLINE", "OUT_OF_MEMORY")
)


def _exit_status(job: Message) -> int:
    if job.state == "COMPLETED":
        return 0
    return int(job.exit_code) or 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``sbatch`` command.

    Args:
        argv: arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return run(PROG, submit, argv)


if __name__ == "__main__":
    sys.exit(main())
