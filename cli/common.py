"""What every command shares: finding the controller, calling it, and failing like Slurm.

Commands print Slurm's messages on stderr (``squeue: error: ...``) and exit
non-zero; nobody sees a traceback. Kept cheap to import: no grpc, no
protobuf runtime, no argparse (see minislurm.wire.ctlclient).

Imports minislurm's lean modules only.
"""

from __future__ import annotations

import os
import sys
import time

from cli.opts import Option, UsageError, parse
from minislurm import VERSION_LINE
from minislurm.conffile import ClientConfig, find_config, read_client_config
from minislurm.errors import ConfigError
from minislurm.security import auth
from minislurm.wire import tls
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import RpcError, Unreachable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _ssl import _SSLContext

    from minislurm.wire.protowire import Message

UNREACHABLE = "Unable to contact slurm controller (connect failure)"
TIMED_OUT = "Socket timed out on send/recv operation"
RPC_TIMEOUT = 60.0


class CommandError(Exception):
    """Ends a command: ``message`` goes to stderr, ``status`` is the exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def rpc_message(err: RpcError) -> str:
    """Slurm's words for a failed call.

    Args:
        err: the error.

    Returns:
        The controller's message, or "unable to contact" when it was not reached.
    """
    if err.code == "UNAVAILABLE":
        return UNREACHABLE
    if err.code == "DEADLINE_EXCEEDED":
        return TIMED_OUT
    return err.details or err.code


_config: list[ClientConfig] = []


def client_config() -> ClientConfig:
    """What this command reads of slurm.conf (read once per process).

    Returns:
        The controller's address and the facts commands need.

    Raises:
        CommandError: no configuration was found, or it is malformed.
    """
    if not _config:
        path = find_config(os.environ)
        if path is None:
            raise CommandError(
                "error: no slurm.conf found: set SLURM_CONF, or start a local cluster"
                " with `minislurm cluster up`"
            )
        try:
            _config.append(read_client_config(path))
        except (ConfigError, OSError) as err:
            raise CommandError(f"error: {err}") from None
    return _config[0]


_tls: list[_SSLContext | None] = []


def tls_context() -> _SSLContext | None:
    """The TLS context every connection of this command uses (None: no TLS).

    Returns:
        A context trusting the cluster's CA under ``TLSType=tls/openssl``, else None.

    Raises:
        CommandError: the CA file cannot be read.
    """
    if not _tls:
        ca = client_config().tls_ca
        try:
            _tls.append(tls.client_context(ca) if ca else None)
        except OSError as err:  # ssl.SSLError is one
            raise CommandError(f"error: TLS CA {ca}: {err}") from None
    return _tls[0]


_clients: dict[tuple[str, int], ControllerClient] = {}


def controller(own: bool = False) -> ControllerClient:
    """The client of the controller named by slurm.conf (or the local cluster).

    One connection per process: a command making several calls (srun:
    allocate, wait, create a step, release) opens it once.

    Args:
        own: a client with a connection of its own instead (for another thread).

    Returns:
        The client (connects on first call).

    Raises:
        CommandError: no configuration was found.
    """
    config = client_config()
    key = (config.host, config.port)
    client = None if own else _clients.get(key)
    if client is None:
        client = _client(config.host, RPC_TIMEOUT, config.hosts[1:])
        if not own:
            _clients[key] = client
    return client


def call(method: str, **fields: object) -> Message:
    """One RPC to the controller in control, tried once a second for MessageTimeout seconds.

    As Slurm's commands do, a controller that cannot be connected to (a restart
    under way), or backups none of which is in control yet (a takeover under
    way), are tried again. A call that reached the controller in control is
    not repeated, unless it only reads (``Get*``, ``Ping``) and the controller
    went away before answering: ``sbatch --wait`` and ``squeue -i`` ride
    through a takeover.

    Args:
        method: the SlurmController method.
        fields: the request's fields.

    Returns:
        The reply.

    Raises:
        RpcError: the call failed.
        CommandError: no configuration.
    """
    client = controller()
    reads = method.startswith("Get") or method == "Ping"
    for _ in range(client_config().message_timeout - 1):
        try:
            return client.call(method, **fields)
        except RpcError as err:
            if not isinstance(err, Unreachable) and not (reads and err.code == "UNAVAILABLE"):
                raise
            time.sleep(1)
    return client.call(method, **fields)


def call_at(host: str, method: str, **fields: object) -> Message:
    """One RPC to the controller at ``host`` (one of slurm.conf's), whatever its role, tried once.

    Args:
        host: its address.
        method: the SlurmController method.
        fields: the request's fields.

    Returns:
        The reply.

    Raises:
        RpcError: the call failed (a standby answers UNAVAILABLE, but to Ping and Takeover).
        CommandError: no configuration.
    """
    with _client(host, float(client_config().message_timeout)) as client:
        return client.call(method, **fields)


def _client(host: str, timeout: float, backups: tuple[str, ...] = ()) -> ControllerClient:
    """A new client of the controller at ``host`` (then ``backups``), as slurm.conf says."""
    config = client_config()
    signer = auth.signer_for(config.path, config.auth_type)
    return ControllerClient(
        host, config.port, timeout, signer=signer, tls=tls_context(), backups=backups
    )


def invoked_as(prog: str) -> str:
    """The command's name as getopt prints it: argv[0], which is the bare name when found on PATH.

    Args:
        prog: the command's name.

    Returns:
        ``prog``, or the path it was run by.
    """
    path = sys.argv[0] if sys.argv else ""
    if os.path.basename(path) != prog or os.sep not in path:
        return prog  # run in-process, or by its bare name
    directory = os.path.realpath(os.path.dirname(path))
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return prog if any(d and os.path.realpath(d) == directory for d in dirs) else path


def parse_or_exit(
    prog: str,
    options: list[Option],
    argv: list[str],
    stop_at_positional: bool = False,
    help_text: str = "",
    usage_text: str = "",
    try_help: bool = True,
    usage_status: int = 1,
) -> tuple[dict[str, object], list[str]]:
    """Parse options; on a bad command line print getopt's message and exit.

    Also answers ``--help``, ``--usage`` and ``-V/--version`` (options with
    those destinations) for every command, and exits.

    Args:
        prog: the command's name.
        options: its options.
        argv: its arguments.
        stop_at_positional: see :func:`cli.opts.parse`.
        help_text: what ``--help`` prints.
        usage_text: what ``--usage`` prints (default: the help).
        try_help: add getopt's ``Try "<prog> --help"`` line (sacct and sstat do not).
        usage_status: the exit status of a bad command line (sbatch, srun
            and salloc exit 255).

    Returns:
        ``(values, positionals)``.
    """
    try:
        values, rest = parse(options, argv, stop_at_positional)
    except UsageError as err:
        hint = f'Try "{prog} --help" for more information\n' if try_help else ""
        sys.stderr.write(f"{invoked_as(prog)}: {err}\n{hint}")
        sys.exit(usage_status)
    if values.get("version"):
        print(VERSION_LINE)
        sys.exit(0)
    if values.get("help") or values.get("usage"):
        sys.stdout.write(help_text if values.get("help") else usage_text or help_text)
        sys.exit(0)
    return values, rest


def run(prog: str, body: object, argv: list[str] | None) -> int:
    """Run a command's body, turning errors into Slurm-style messages and exit codes.

    Invoked from the command line (``argv`` None), the process then ends at
    once: tearing the interpreter down would cost a command 4-6 ms.

    Args:
        prog: the command's name, for messages.
        body: ``body(argv) -> int``.
        argv: its arguments (None: sys.argv[1:], and exit when done).

    Returns:
        The exit status (when ``argv`` was given).
    """
    status = _status_of(prog, body, sys.argv[1:] if argv is None else argv)
    if argv is None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        os._exit(status)
    return status


def _status_of(prog: str, body: object, args: list[str]) -> int:
    try:
        return int(body(args))  # type: ignore[operator]
    except CommandError as err:
        if err.message:  # none after a help text (``--hint=help``)
            sys.stderr.write(f"{prog}: {err.message}\n")
        return err.status
    except RpcError as err:
        sys.stderr.write(f"{prog}: error: {rpc_message(err)}\n")
        return 1
    except SystemExit as done:  # --help, --version, a bad option: main() still returns
        return done.code if isinstance(done.code, int) else int(done.code is not None)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `squeue | head`: the reader went away; that is not an error.
        sys.stderr.close()
        return 0
