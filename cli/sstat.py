"""sstat: the live usage of running job steps, as Slurm 22.05's sstat prints it.

For each ``-j`` item it asks the controller for the job's running steps
(GetSteps), chooses them as Slurm does (the named step; else the job's first
srun step, or with ``-a`` every step, the batch step included), and asks for
each step's usage (GetStepStats: the controller gathers it from the agents
of the step's nodes). Columns are sstat's fields (cli.sstat_fields) laid
out as sacct lays out its own (cli.sacct_layout). Errors about a job or a
step go to stderr and the exit status stays 0, as in Slurm.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import sys

from cli import common, fmt, sacct_layout
from cli.opts import NO_ARG, REQUIRED, Option
from cli.sstat_fields import DEFAULT_FIELDS, FIELDS, PID_FIELDS
from cli.usagefmt import StepFigures
from minislurm.stepids import MAX_NORMAL_STEP, STEP_IDS, step_id_text
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sstat"

OPTIONS = [
    Option("allsteps", "a"),
    Option("helpformat", "e"),
    Option("help", "h"),
    Option("jobs", "j", REQUIRED, many=True),
    Option("noheader", "n"),
    Option("fields", "", REQUIRED, dest="format", many=True),
    Option("format", "o", REQUIRED, many=True),
    Option("noconvert"),
    Option("pidformat", "i"),
    Option("parsable", "p"),
    Option("parsable2", "P"),
    Option("usage"),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V"),
]

USAGE = "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n"

# sstat --help: each line padded to 76 columns (tabs at 8), as Slurm's source pads them;
# the --format line is 2 short (its \" counted twice there).
_HELP_LINES = [
    "sstat [<OPTION>] -j <job(.stepid)>",
    "    Valid <OPTION> values are:",
    "      -a, --allsteps:",
    "                   Print all steps for the given job(s) when no step is",
    "                   specified.",
    "      -e, --helpformat:",
    "\t           Print a list of fields that can be specified with the",
    "\t           '--format' option",
    "     -h, --help:   Print this description of use.",
    "     -i, --pidformat:",
    "                   Predefined format to list the pids running for each",
    "                   job step.  (JobId,Nodes,Pids)",
    "     -j, --jobs:",
    "\t           Format is <job(.step)>. Stat this job step",
    "                   or comma-separated list of job steps. This option is",
    "                   required.  The step portion will default to the lowest",
    "                   numbered (not batch, extern, etc) step running if not",
    "                   specified, unless the --allsteps flag is set where not",
    "                   specifying a step will result in all running steps",
    "                   to be displayed. A step id of 'batch' will display the",
    "                   information about the batch step. A step id of 'extern'",
    "                   will display the information about the extern step",
    "                   when using PrologFlags=contain.",
    "     -n, --noheader:",
    "\t           No header will be added to the beginning of output.",
    "                   The default is to print a header.",
    "     --noconvert:  Don't convert units from their original type",
    "\t\t   (e.g. 2048M won't be converted to 2G).",
    "     -o, --format:",
    '\t           Comma separated list of fields. (use "--helpformat"',
    "                   for a list of available fields).",
    "     -p, --parsable: output will be '|' delimited with a '|' at the end",
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end",
    "     --usage:      Display brief usage message.",
    "     -v, --verbose:",
    "\t           Primarily for debugging purposes, report the state of",
    "                   various variables during processing.",
    "     -V, --version: Print version.",
]
HELP = (
    "".join(
        line + " " * ((74 if '"' in line else 76) - len(line.expandtabs())) + "\n"
        for line in _HELP_LINES
    )
    + "\n"
)

Ref = tuple[int, int | None, int | None]  # job id, array task, step id (None: not named)


def parse_ref(item: str) -> Ref:
    """One ``-j`` item as Slurm's ``slurm_parse_step_str`` reads it: ``12.0``, ``12_3.batch``.

    Args:
        item: the item.

    Returns:
        ``(job id, array task or None, step id or None)``.

    Raises:
        CommandError: it does not start with a digit, or its step or array task is no number.
    """
    if not item[:1].isdigit():
        raise common.CommandError(f"fatal: Bad job/step specified: {item}")
    head, dot, step = item.partition(".")
    step_id = None
    if dot:
        step_id = STEP_IDS.get(step)
        if step_id is None and step[:1].isdigit():
            step_id = fmt.strtol(step)[0]
        if step_id is None:
            raise common.CommandError(f"fatal: Bad step specified: {head}")
    job, under, task_text = head.partition("_")
    task = None
    if under:
        if not task_text[:1].isdigit():
            raise common.CommandError(f"fatal: Bad job array element specified: {job}")
        task = fmt.strtol(task_text)[0]
    return fmt.strtol(job)[0], task, step_id


def parse_refs(values: dict[str, object], rest: list[str]) -> list[Ref]:
    """Every ``-j`` list, and the first argument, without repeats.

    Args:
        values: the parsed options.
        rest: positional arguments (only the first is read, as Slurm does).

    Returns:
        The references in order.
    """
    lists = [*values.get("jobs", []), *rest[:1]]  # type: ignore[misc]
    refs: list[Ref] = []
    for text in lists:
        for item in fmt.split_list(str(text)):
            ref = parse_ref(item)
            if ref not in refs:
                refs.append(ref)
    return refs


def parse_columns(spec: str) -> list[sacct_layout.Column]:
    """Read the field list: names abbreviated to their start, ``%width`` (0: the default).

    A width given to a field applies to every use of it, as in sstat.

    Args:
        spec: comma-separated names.

    Returns:
        The columns.

    Raises:
        CommandError: a name that names no field.
    """
    picked, widths = [], {}
    for item in spec.split(","):
        name, _, width = item.lstrip().partition("%")
        if not name:
            continue
        try:
            field = sacct_layout.find_field(name, FIELDS)
        except sacct_layout.InvalidField:
            raise common.CommandError(f'error: Invalid field requested: "{name}"') from None
        if fmt.strtol(width)[0]:
            widths[field.name] = fmt.strtol(width)[0]
        picked.append(field)
    return [sacct_layout.Column(f, widths.get(f.name, f.width)) for f in picked]


def _columns(values: dict[str, object]) -> list[sacct_layout.Column]:
    specs = [PID_FIELDS] if values.get("pidformat") else []
    specs += [str(s) for s in values.get("format", [])]  # type: ignore[attr-defined]
    return parse_columns(",".join(specs) if specs else DEFAULT_FIELDS)


def chosen_steps(steps: list[Message], ref: Ref, all_steps: bool) -> list[Message]:
    """The steps one ``-j`` item selects, as sstat's main loop picks them.

    Args:
        steps: the job's running steps, in the controller's order (batch first).
        ref: the item.
        all_steps: ``-a``: every step of the job (even when a step was named, as in Slurm).

    Returns:
        The steps.
    """
    _, task, step_id = ref
    steps = [s for s in steps if task is None or (s.array_job_id and s.array_task_id == task)]
    if all_steps:
        return steps
    if step_id is None:
        normal = [s for s in steps if s.step_id <= MAX_NORMAL_STEP]
        return normal[:1]
    return [s for s in steps if s.step_id == step_id]


def _step_name(job_id: int, step_id: int) -> str:
    return f"StepId={job_id}.{step_id_text(step_id)}"


def stat_step(step: Message, pid_format: bool, convert: bool) -> list[StepFigures]:
    """Ask for one step's usage; report a failure as sstat does.

    Args:
        step: a running step.
        pid_format: ``-i``: one line per node, its processes only.
        convert: sizes in their largest exact unit.

    Returns:
        What to print (nothing when the step ended meanwhile or the call failed).
    """
    job_text = f"{step.job_id}.{step_id_text(step.step_id)}"
    try:
        reply = common.call("GetStepStats", job_id=step.job_id, step_id=step.step_id)
    except RpcError as err:
        if err.code == "NOT_FOUND":
            return []  # it has already completed
        message = common.rpc_message(err)
        if err.code == "PERMISSION_DENIED":
            for node in fmt.split_list(str(step.nodelist)):
                sys.stderr.write(
                    f"{PROG}: error: slurm_job_step_stat: there was an error with the request "
                    f"to {node} rc = {message}\n"
                )
        name = _step_name(step.job_id, step.step_id)
        sys.stderr.write(f"{PROG}: error: problem getting step_layout for {name}: {message}\n")
        return []
    nodes = list(reply.nodes)
    if pid_format:
        return [StepFigures(job_text, [n], convert, usage=False) for n in nodes]
    return [StepFigures(job_text, nodes, convert)]


def stat_ref(ref: Ref, values: dict[str, object]) -> list[StepFigures]:
    """Everything one ``-j`` item prints, its errors on stderr.

    Args:
        ref: the item.
        values: the parsed options (``-a``, ``-i``, ``--noconvert``).

    Returns:
        The lines' figures.
    """
    job_id, _, step_id = ref
    try:
        reply = common.call("GetSteps", job_id=job_id, running=True)
    except RpcError:
        sys.stderr.write(f"{PROG}: error: couldn't get steps for job {job_id}\n")
        return []
    steps = list(reply.steps)
    if step_id is not None:
        steps = [s for s in steps if s.step_id == step_id] if not values.get("allsteps") else steps
    if not steps:
        if step_id is None:
            sys.stderr.write(f"{PROG}: error: No steps running for job {job_id}\n")
        else:
            sys.stderr.write(f"{PROG}: error: {_step_name(job_id, step_id)} not found running.\n")
        return []
    figures = []
    for step in chosen_steps(steps, ref, bool(values.get("allsteps"))):
        figures += stat_step(step, bool(values.get("pidformat")), not values.get("noconvert"))
    return figures


def run(values: dict[str, object], rest: list[str]) -> int:
    """sstat's work after option parsing.

    Args:
        values: the parsed options.
        rest: positional arguments.

    Returns:
        The exit status: 1 for a bad command line or no job, else 0.
    """
    if values.get("helpformat"):
        sys.stdout.write(sacct_layout.help_format(FIELDS))
        return 0
    refs = parse_refs(values, rest)
    columns = _columns(values)
    if not refs:
        raise common.CommandError("error: You didn't give me any jobs to stat.")
    parsable = bool(values.get("parsable") or values.get("parsable2"))
    layout = sacct_layout.Layout(parsable, bool(values.get("parsable")))
    out = sys.stdout
    if not values.get("noheader"):
        out.write("".join(line + "\n" for line in sacct_layout.header_lines(columns, layout)))
        out.flush()
    for ref in refs:
        lines = [sacct_layout.record_line(columns, f, 0, layout) for f in stat_ref(ref, values)]
        out.write("".join(line + "\n" for line in lines))
        out.flush()
    return 0


def _sstat(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(
        PROG, OPTIONS, argv, help_text=HELP, usage_text=USAGE, try_help=False
    )
    return run(values, rest)


def main(argv: list[str] | None = None) -> int:
    """Run sstat.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sstat, argv)
