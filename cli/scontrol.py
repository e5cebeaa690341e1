"""scontrol: show and change jobs, nodes and partitions, as Slurm 22.05's scontrol.

Supported: ``show job|node|partition|step|config|topology|hostnames|hostlist|hostlistsorted``,
``hold|uhold|release``, ``update JobId=...`` and ``update NodeName=...``,
``ping`` (each SlurmctldHost), ``takeover [INDEX]``, ``version``; keywords may be
abbreviated as Slurm allows (``scontrol sho jo 5``). The records are formatted by cli.scontrol_show
(steps: cli.scontrol_steps).

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import time

from cli import clusters, common, interactive
from cli import scontrol_hold as holds
from cli import scontrol_resv as resv
from cli import scontrol_show as show
from cli import scontrol_steps as steps
from cli import scontrol_update as update
from cli.opts import NO_ARG, REQUIRED, Option
from minislurm import VERSION_LINE, conffile, hostlist
from minislurm.arrays import parse_job_ref
from minislurm.errors import ConfigError
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

PROG = "scontrol"
RESTORE_BANNER = (
    "*****************************************\n"
    "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
    "*****************************************\n"
)

OPTIONS = [
    Option("all", "a"),
    Option("clusters", "M", REQUIRED),
    Option("details", "d", NO_ARG, many=True),
    Option("help", "h"),
    Option("oneliner", "o"),
    Option("quiet", "Q"),
    Option("usage"),
    Option("verbose", "v", NO_ARG, many=True),
    Option("version", "V"),
]

HELP = """\
scontrol [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a or --all: equivalent to "all" command
     -d or --details: equivalent to "details" command
     -h or --help: equivalent to "help" command
     -o or --oneliner: equivalent to "oneliner" command
     -Q or --quiet: equivalent to "quiet" command
     -v or --verbose: equivalent to "verbose" command
     -V or --version: equivalent to "version" command

  <keyword> may be omitted from the execute line and scontrol will execute
  in interactive mode. It will process commands as entered until explicitly
  terminated.

    Valid <COMMAND> values are:
     help                     print this description of use.
     hold <job_list>          prevent specified job from starting. <job_list>
                              is either a space separate list of job IDs or
                              job names
     cancel_reboot <node_list> cancel pending reboot on nodes.
     ping                     print status of slurmctld daemons.
     reconfigure              re-read configuration files.
     reboot [ASAP] [nextstate={RESUME|DOWN}] [reason=<reason>] {ALL|<NodeList>}
                              reboot the nodes when they become idle.
     release <job_list>       permit specified job to start (see hold)
     requeue <job_id>         re-queue a batch job
     requeuehold <job_id>     re-queue and hold a batch job
     show <ENTITY> [<ID>]     display state of identified entity, default
                              is all records.
     takeover [<INDEX>]       ask slurm backup controller to take over.
     token [lifespan=<lifespan>] [username=<username>]
                              Generate a JWT token.
     uhold <job_list>         place user hold on specified job (see hold)
     update <SPECIFICATIONS>  update job or node configuration.
     version                  display tool version number.

  <ENTITY> may be "config", "hostnames", "hostlist", "hostlistsorted",
       "job", "node", "partition" or "step".

  <SPECIFICATIONS> are specified in the same format as the configuration
  file. You may wish to use the "show" keyword then use its output as
  input for the update keyword, editing as needed.  Supported job keys are
  TimeLimit (+/- for relative changes), Name/JobName, Partition, Nice,
  Priority, NumNodes, NumTasks, Account, QOS, Comment, Dependency,
  StartTime/EligibleTime, Deadline, ReservationName, ExcNodeList,
  ReqNodeList, Requeue, WorkDir, MailType, MailUser and ArrayTaskThrottle;
  node keys are State (DRAIN, RESUME, DOWN, UNDRAIN, IDLE, CANCEL_REBOOT) and Reason.
"""


class Settings:
    """The global options that shape output."""

    def __init__(self, values: dict[str, object]) -> None:
        self.oneliner = bool(values.get("oneliner"))
        self.details = bool(values.get("details"))
        self.quiet = bool(values.get("quiet"))


def keyword_matches(word: str, keyword: str, minimum: int) -> bool:
    """Slurm's abbreviation rule: a case-insensitive prefix at least ``minimum`` long.

    Args:
        word: what the user typed.
        keyword: the full keyword.
        minimum: the shortest accepted abbreviation.

    Returns:
        True when ``word`` names ``keyword``.
    """
    return len(word) >= minimum and keyword.startswith(word.lower())


def _fail(text: str) -> int:
    sys.stderr.write(text + "\n")
    return 1


def _not_found(text: str) -> int:
    """Slurm prints that a named record was not found on stdout, and fails."""
    sys.stdout.write(text + "\n")
    return 1


# --------------------------------------------------------------------------- show


def show_jobs(args: list[str], settings: Settings) -> int:
    """``show job [ID]``: every job the controller remembers, or one.

    Args:
        args: at most one job id.
        settings: -o / -d.

    Returns:
        The exit status.
    """
    request: dict[str, object] = {"all_states": True}
    if args:
        try:
            job_id, tasks, step = parse_job_ref(args[0])
        except ValueError:
            job_id, tasks, step = 0, None, "-"
        if not job_id or step:
            return _fail("scontrol_print_job error: Invalid job id specified")
        if tasks is None:
            request["job_ids"] = [job_id]
        else:
            request["array_tasks"] = [args[0]]
    try:
        reply = common.call("GetJobs", **request)
    except RpcError as err:
        return _fail(f"slurm_load_jobs error: {common.rpc_message(err)}")
    jobs = sorted(reply.jobs, key=lambda j: j.job_id)
    if not jobs:
        sys.stdout.write("No jobs in the system\n")
        return 0
    sys.stdout.write("".join(show.job_text(j, settings.oneliner, settings.details) for j in jobs))
    return 0


def show_nodes(args: list[str], settings: Settings) -> int:
    """``show node [NAMES]``: every node, or those of a hostlist expression.

    Args:
        args: at most one hostlist expression.
        settings: -o.

    Returns:
        The exit status.
    """
    names = _expand(args[0]) if args else []
    if names is None:
        return _not_found(f"Node {args[0]} not found")
    try:
        reply = common.call("GetNodes", names=names)
    except RpcError as err:
        return _fail(f"slurm_load_node error: {common.rpc_message(err)}")
    if not reply.nodes:
        if args:
            return _not_found(f"Node {args[0]} not found")
        sys.stdout.write("No nodes in the system\n")
        return 0
    sys.stdout.write("".join(show.node_text(n, settings.oneliner) for n in reply.nodes))
    return 0


def show_partitions(args: list[str], settings: Settings) -> int:
    """``show partition [NAME]``.

    Args:
        args: at most one partition name.
        settings: -o.

    Returns:
        The exit status (1 with ``Partition X not found``).
    """
    try:
        reply = common.call("GetPartitions", names=args[:1])
    except RpcError as err:
        return _fail(f"slurm_load_partitions error: {common.rpc_message(err)}")
    if not reply.partitions:
        if args:
            return _not_found(f"Partition {args[0]} not found")
        sys.stdout.write("No partitions in the system\n")
        return 0
    text = "".join(show.partition_text(p, settings.oneliner) for p in reply.partitions)
    sys.stdout.write(text)
    return 0


def show_config(args: list[str], settings: Settings) -> int:
    """``show config``: the controller's settings, then its ping status as Slurm adds it.

    Args:
        args: ignored (as Slurm ignores them).
        settings: unused.

    Returns:
        The exit status.
    """
    try:
        reply = common.call("GetConfig")
    except RpcError as err:
        return _fail(f"slurm_load_ctl_conf error: {common.rpc_message(err)}")
    sys.stdout.write(show.config_text(list(reply.entries), time.time()))
    return ping([], settings)


def show_topology(args: list[str], settings: Settings) -> int:
    """``show topology [NAME]``: the switches or blocks, those named, or those holding nodes.

    NAME is a switch or block (also as ``unit=``, ``switch=`` or ``block=``),
    or nodes (a hostlist, also as ``node=``): then the units that hold them all.

    Args:
        args: at most one name.
        settings: unused (the lines are one-liners already).

    Returns:
        The exit status (0 even when nothing matches, as Slurm's).
    """
    try:
        reply = common.call("GetTopology")
    except RpcError as err:
        return _fail(f"slurm_load_topo error: {common.rpc_message(err)}")
    units = list(reply.units)
    name = args[0] if args else ""
    key, eq, value = name.partition("=")
    if eq and key.lower() in ("unit", "switch", "block", "node"):
        name = value
    if not (units or name):
        sys.stderr.write("scontrol: error: No topology information available\n")
        return 0
    if name:
        units = show.topology_matches(units, name, by_node=bool(eq) and key.lower() == "node")
        if not units:
            sys.stderr.write(
                f"scontrol: error: Topology information contains no switch or node named {name}\n"
            )
            return 0
    sys.stdout.write("".join(show.topology_line(unit, reply.plugin) for unit in units))
    return 0


def show_hostnames(args: list[str], settings: Settings) -> int:
    """``show hostnames EXPR``: one host name per line (``$SLURM_JOB_NODELIST`` by default).

    Args:
        args: at most one hostlist expression.
        settings: unused.

    Returns:
        The exit status.
    """
    expr = args[0] if args else os.environ.get("SLURM_JOB_NODELIST", "")
    if not (args or expr):
        sys.stderr.write("scontrol: error: host list is empty\n")
        return 0
    names = _expand(expr)
    if names is None:
        _fail(f"Invalid hostlist: {expr}")
        return 0  # Slurm's scontrol says so, and succeeds
    sys.stdout.write("".join(name + "\n" for name in names))
    return 0


def _show_hostlist(args: list[str], sort: bool) -> int:
    expr = args[0] if args else os.environ.get("SLURM_JOB_NODELIST", "")
    if not (args or expr):
        sys.stderr.write("scontrol: error: host list is empty\n")
        return 0
    names = _expand(expr)
    if names is None:
        return _fail(f"Invalid hostlist: {expr}")
    sys.stdout.write(hostlist.compress(names, sort=sort) + "\n")
    return 0


def _no_licenses() -> int:
    sys.stdout.write("No licenses configured in Slurm.\n")  # there are none to configure
    return 0


def _expand(expr: str) -> list[str] | None:
    try:
        return hostlist.expand(expr)
    except ValueError:
        return None


# entity: (minimum abbreviation, handler); Slurm's order of matching.
SHOW_ENTITIES: list[tuple[str, int, Callable[[list[str], Settings], int]]] = [
    ("config", 1, show_config),
    ("hostnames", 5, show_hostnames),
    ("hostlist", 5, lambda a, s: _show_hostlist(a, False)),
    ("hostlistsorted", 9, lambda a, s: _show_hostlist(a, True)),
    ("jobs", 1, show_jobs),
    ("licenses", 2, lambda a, s: _no_licenses()),
    ("nodes", 1, show_nodes),
    ("partitions", 2, show_partitions),
    ("reservations", 3, lambda a, s: resv.show_reservations(a, s.oneliner)),
    ("steps", 2, lambda a, s: steps.show_steps(a, s.oneliner)),
    ("topology", 1, show_topology),
]


def show_command(args: list[str], settings: Settings) -> int:
    """``show ENTITY [ID]``.

    Args:
        args: the entity and at most one id.
        settings: the global options.

    Returns:
        The exit status.
    """
    if not args:
        return _fail("too few arguments for keyword:show")
    if len(args) > 2:
        return _fail("too many arguments for keyword:show")
    for entity, minimum, handler in SHOW_ENTITIES:
        if keyword_matches(args[0], entity, minimum):
            return handler(args[1:], settings)
    return _fail(f"invalid entity:{args[0]} for keyword:show ")


# --------------------------------------------------------------------------- ping, dispatch


def controller_names() -> list[str]:
    """The controllers' names as slurm.conf gives them (``SlurmctldHost``), the primary's first.

    Returns:
        The names, or ``["(null)"]`` when the configuration does not say.
    """
    path = conffile.find_config(os.environ)
    names: list[str] = []
    try:
        for record in conffile.parse_file(path or "", ("SlurmctldHost", "ControlMachine")):
            for key, value in record.pairs:
                if key == "SlurmctldHost":
                    names.append(conffile.parse_slurmctld_host(value)[0])
                elif key == "ControlMachine" and not names:
                    names.append(value)
    except (OSError, ValueError, ConfigError):
        pass
    return names or ["(null)"]


def ping(args: list[str], settings: Settings) -> int:
    """``ping``: whether each controller answers, the primary and its backups.

    Args:
        args: ignored.
        settings: unused.

    Returns:
        0 when one of them is UP, 1 when all are DOWN.
    """
    hosts = common.client_config().hosts
    names = controller_names()
    up = []
    for index, host in enumerate(hosts):
        try:
            common.call_at(host, "Ping")
            up.append(True)
        except RpcError:
            up.append(False)
        label = "primary" if index == 0 else "backup" if len(hosts) == 2 else f"backup{index}"
        name = names[index] if index < len(names) else host
        sys.stdout.write(f"Slurmctld({label}) at {name} is {'UP' if up[-1] else 'DOWN'}\n")
    if not all(up):
        sys.stdout.write(RESTORE_BANNER)
    return 0 if any(up) else 1


def takeover(word: str, args: list[str]) -> int:
    """``takeover [INDEX]``: the backup controller INDEX (default 1) takes control.

    The controller in control, deposed, shuts down (as Slurm's primary does).
    As a controller restarted after a takeover stays a backup, INDEX 0 (which
    Slurm refuses) gives control back to the primary of slurm.conf.

    Args:
        word: the keyword as typed.
        args: the index, if given.

    Returns:
        The exit status.
    """
    hosts = common.client_config().hosts
    if len(args) > 1:
        return _fail(f"{word}: too many arguments")
    index = _atoi(args[0]) if args else 1
    if args and (not args[0].isdigit() or index >= len(hosts)):
        return _fail(f"{word}: invalid backup controller index ({index})")
    if len(hosts) < 2:
        return _fail(f"{word}: no backup controller defined")
    try:
        common.call_at(hosts[index], "Takeover")
    except RpcError as err:
        return _fail(f"slurm_takeover error: {common.rpc_message(err)}")
    return 0


def _atoi(text: str) -> int:
    """C's atoi: the leading digits (and sign) of ``text``, 0 when there are none."""
    digits = re.match(r"\s*[-+]?\d+", text)
    return int(digits.group()) if digits else 0


def reconfigure() -> int:
    """``reconfigure``: the controller and every slurmd re-read slurm.conf.

    Returns:
        The exit status; what changed that only a restart applies is said on stderr.
    """
    try:
        reply = common.call("Reconfigure", requester_uid=os.getuid())
    except RpcError as err:
        return _fail(f"slurm_reconfigure error: {common.rpc_message(err)}")
    for what in reply.restart_needed:
        sys.stderr.write(f"scontrol: {what} changed: it applies once slurmctld restarts\n")
    return 0


def token(args: list[str]) -> int:
    """``token [lifespan=SECONDS] [username=NAME]``: ``SLURM_JWT=...`` for HTTP callers.

    Args:
        args: the words after ``token``.

    Returns:
        The exit status.
    """
    request: dict[str, object] = {"requester_uid": os.getuid()}
    for word in args:
        key, eq, value = word.partition("=")
        if eq and key.lower() == "lifespan" and value.isdigit():
            request["lifespan"] = int(value)
        elif eq and key.lower() == "username" and value:
            request["username"] = value
        else:
            return _fail(f"Invalid parameter: {word}")
    try:
        reply = common.call("GetToken", **request)
    except RpcError as err:
        return _fail(f"error: {common.rpc_message(err)}")
    sys.stdout.write(f"SLURM_JWT={reply.token}\n")
    return 0


def dispatch(args: list[str], settings: Settings) -> int:
    """Run one scontrol command.

    Args:
        args: the command and its arguments.
        settings: the global options.

    Returns:
        The exit status.
    """
    word, rest = args[0], args[1:]
    if keyword_matches(word, "show", 3):
        return show_command(rest, settings)
    if keyword_matches(word, "update", 1):
        return update.update_command(word, rest)
    if keyword_matches(word, "create", 2):
        return resv.create_command(word, rest)
    if keyword_matches(word, "delete", 3):
        return resv.delete_command(word, rest)
    action = holds.hold_keyword(word)
    if action is not None:
        return holds.hold_command(word, rest, action)
    if keyword_matches(word, "reboot", 6):
        return update.reboot_command(rest)
    if keyword_matches(word, "cancel_reboot", 13):
        return update.cancel_reboot_command(rest)
    if keyword_matches(word, "reconfigure", 7):
        return _fail(f"too many arguments for keyword:{word}") if rest else reconfigure()
    if keyword_matches(word, "token", 3):
        return token(rest)
    if keyword_matches(word, "takeover", 8):
        return takeover(word, rest)
    if keyword_matches(word, "ping", 3):
        return _fail(f"too many arguments for keyword:{word}") if rest else ping(rest, settings)
    if keyword_matches(word, "version", 4):
        sys.stdout.write(VERSION_LINE + "\n")
        return _fail(f"too many arguments for {word} keyword") if rest else 0
    if keyword_matches(word, "help", 2):
        sys.stdout.write(HELP)
        return 0
    return _fail(f"invalid keyword: {word}")


def _scontrol(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP)
    settings = Settings(values)
    clusters.requested(PROG, values)
    if not rest:
        return interactive.run_lines(PROG, lambda words: _one(words, settings))
    return _one(rest, settings)


def _one(words: list[str], settings: Settings) -> int:
    if not settings.quiet:
        return dispatch(words, settings)
    return quietly(lambda: dispatch(words, settings))


def quietly(command: Callable[[], int]) -> int:
    """Run a command under ``-Q``: Slurm prints no error message but ``invalid keyword``.

    Args:
        command: the command.

    Returns:
        Its exit status.
    """
    with contextlib.redirect_stderr(io.StringIO()) as muted:
        status = command()
    lines = muted.getvalue().splitlines(keepends=True)
    sys.stderr.write("".join(line for line in lines if line.startswith("invalid keyword")))
    return status


def main(argv: list[str] | None = None) -> int:
    """Run scontrol.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _scontrol, argv)
