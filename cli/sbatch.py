"""sbatch: submit a batch script.

Options come from ``#SBATCH`` lines at the top of the script (up to the
first line that is neither blank nor a comment), then from the input
environment variables (``SBATCH_*``), then from the command line, each
overriding the one before. Everything after the script's name is passed to
the script. Values that cannot be parsed are rejected here, as Slurm's
client does (exit 255, or 1 for counts); the controller validates
everything again.

Imports cli.common, cli.helptext, cli.jobflags, cli.jobspec, cli.submit and minislurm's lean
modules only.
"""

from __future__ import annotations

import os
import sys
import time

from cli import jobflags
from cli.common import CommandError, call, client_config, parse_or_exit, rpc_message, run
from cli.helptext import HELP, USAGE
from cli.jobspec import job_fields
from cli.submit import (
    CLIENT_ERROR,
    check_clusters,
    check_gres,
    error_status,
    option_text,
    parse_export,
    report_test,
)
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sbatch"
OPTIONS = jobflags.options(PROG)


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
    """Read the script's directives, the environment and the command line, each overriding the last.

    Args:
        argv: sbatch's arguments.

    Returns:
        ``(values, script, default_name, script_args)``.
    """
    cli_values, rest = parse_or_exit(
        PROG, OPTIONS, argv, True, HELP[PROG], USAGE[PROG], usage_status=CLIENT_ERROR
    )
    wrap = option_text(cli_values, "wrap")
    if wrap is not None and rest:
        raise CommandError("error: Script arguments not permitted with --wrap option")
    path = None if wrap is not None or not rest else rest[0]
    script_args = rest[1:] if path is not None else rest
    script, name = read_script(path, wrap)
    values, _ = parse_or_exit(PROG, OPTIONS, directives(script), usage_status=CLIENT_ERROR)
    values.update(jobflags.environment_values(PROG, os.environ))
    values.update(cli_values)
    if path is not None:
        values["script_path"] = path
    return values, script, name, script_args


def batch_spec(
    values: dict[str, object], script: bytes, name: str, argv: list[str]
) -> dict[str, object]:
    """The JobSpec fields of a batch job.

    Args:
        values: the merged options.
        script: the batch script.
        name: the default job name.
        argv: the script's arguments.

    Returns:
        The fields of a JobSpec message.

    Raises:
        CommandError: a value that does not parse.
    """
    spec = job_fields(PROG, values)
    cwd = os.getcwd()
    environment = parse_export(option_text(values, "export"), os.environ)
    environment.update(export_file(option_text(values, "export_file")))
    spec.update(
        name=option_text(values, "job_name") or name,
        script=script,
        argv=argv,
        work_dir=os.path.normpath(os.path.join(cwd, option_text(values, "chdir") or "")),
        submit_dir=cwd,
        batch=True,
        command=os.path.abspath(str(values["script_path"])) if "script_path" in values else "",
        environment=environment,
    )
    for key, field in (("output", "stdout"), ("error", "stderr"), ("input", "stdin")):
        text = option_text(values, key)
        if text:
            spec[field] = text
    # The job's sruns read these, as the options they stand for.
    if "open_mode" in spec:
        environment["SLURM_OPEN_MODE"] = str(spec["open_mode"])[0]
    if "ntasks_per_gpu" in values:
        environment["SLURM_NTASKS_PER_GPU"] = str(values["ntasks_per_gpu"])
    if "distribution" in values:
        environment["SLURM_DISTRIBUTION"] = str(values["distribution"])
    umask = os.environ.get("SLURM_UMASK", "")
    if umask and all(c in "01234567" for c in umask):
        spec["umask"] = int(umask, 8)
    return spec


def export_file(path: str | None) -> dict[str, str]:
    """``--export-file``: ``NAME=value`` definitions separated by NUL characters (or newlines).

    Args:
        path: the file, or a file descriptor's number; None when not given.

    Returns:
        The variables.

    Raises:
        CommandError: the file cannot be read.
    """
    if path is None:
        return {}
    try:
        if path.isdigit() and 2 < int(path) <= 0x7FFFFFFF:  # a descriptor, else a file name
            with os.fdopen(int(path), "rb", closefd=False) as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, ValueError):  # ValueError: a NUL in a #SBATCH line's path
        raise CommandError(f"error: Could not open user environment file {path}") from None
    text = data.decode(errors="replace")
    items = text.split("\0") if "\0" in text else text.splitlines()
    return dict(item.split("=", 1) for item in items if "=" in item)


def submit(argv: list[str]) -> int:
    """sbatch's body.

    Args:
        argv: its arguments.

    Returns:
        The exit status.
    """
    refused = error_status(PROG)
    values, script, name, script_args = merged_options(argv)
    spec = batch_spec(values, script, name, script_args)
    gpus_asked = any(k in values for k in ("gpus", "gpus_per_node", "gpus_per_task"))
    check_gres(option_text(values, "gres"), gpus_asked, client_config().gres_types)
    cluster = check_clusters(PROG, option_text(values, "clusters"))
    test_only = bool(values.get("test_only"))
    try:
        reply = call("SubmitJob", spec={**spec, "test_only": test_only})
    except RpcError as err:
        *details, last = rpc_message(err).split("\n")
        what = "Job submit/allocate failed" if test_only else "Batch job submission failed"
        lines = [f"error: {d}" for d in details]
        lines.append(f"error: {what}: {last}")
        raise CommandError("\nsbatch: ".join(lines), refused) from None
    if test_only:
        return report_test(PROG, reply)
    if values.get("parsable"):
        print(f"{reply.job_id};{cluster}" if cluster else reply.job_id, flush=True)
    elif not values.get("quiet"):
        where = f" on cluster {cluster}" if cluster else ""
        print(f"Submitted batch job {reply.job_id}{where}", flush=True)
    return wait_for(reply.job_id) if values.get("wait") else 0


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
