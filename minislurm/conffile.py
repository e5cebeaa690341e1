"""A lean reader of Slurm's config-file syntax (slurm.conf, gres.conf), and config lookup.

``parse_file`` turns a file into records, one per line that holds
``Key=Value`` pairs, in file order with ``Include`` files spliced in where they
are named. It knows no key's meaning: ``minislurm.config`` builds the typed
configuration for the daemons. The commands need only ``find_config`` and
``read_controller_address``, which live here so that a command never imports
``minislurm.config``.

Syntax (Slurm's ``src/common/parse_config.c``): ``#`` starts a comment anywhere
outside double quotes (``\\#`` is a literal ``#``); a line ending in ``\\``
continues on the next; pairs are separated by whitespace, with optional
whitespace around ``=``; a value is a run of non-blank characters or a
double-quoted string; keys are case-insensitive; ``Include <path>`` reads
another file, relative to the including file's directory.

The commands import this module, so it imports nothing at module level but
``os`` (already loaded by the interpreter) and, of our packages, only
``minislurm.errors`` and ``minislurm.wire.tls`` (which imports only ``os``).
"""

from __future__ import annotations

import os

from minislurm import tlsconf
from minislurm.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

DEFAULT_CONFIG_PATH = "/etc/slurm/slurm.conf"
DEFAULT_SLURMCTLD_PORT = 6817
DEFAULT_MESSAGE_TIMEOUT = 10  # seconds; a command tries the controller once a second that long
DEFAULT_INTERACTIVE_STEP_OPTIONS = "--interactive --preserve-env --pty $SHELL"
DEFAULT_KILL_WAIT = 30  # seconds
_MAX_INCLUDE_DEPTH = 16
_SPACE = " \t\r\n\f\v"


class ConfRecord:
    """One config line: where it is, and its ``(key, value)`` pairs in order."""

    __slots__ = ("line", "pairs", "path")

    def __init__(self, path: str, line: int, pairs: list[tuple[str, str]]) -> None:
        self.path = path
        self.line = line
        self.pairs = pairs

    @property
    def key(self) -> str:
        """The line's first key (``NodeName`` for a node line)."""
        return self.pairs[0][0]

    @property
    def value(self) -> str:
        """The line's first value (the node names for a node line)."""
        return self.pairs[0][1]

    def get(self, key: str, default: str | None = None) -> str | None:
        """Return the value of the first pair with this (normalised) key, or ``default``."""
        for name, value in self.pairs:
            if name == key:
                return value
        return default

    def error(self, message: str) -> ConfigError:
        """Build a ConfigError that points at this line."""
        return ConfigError(self.path, self.line, message)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfRecord):
            return NotImplemented
        return (self.path, self.line, self.pairs) == (other.path, other.line, other.pairs)

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"ConfRecord({self.path!r}, {self.line}, {self.pairs!r})"


def parse_file(path: str, keys: Iterable[str] | None = None) -> list[ConfRecord]:
    """Read a config file (and the files it includes) into records.

    Args:
        path: the file.
        keys: the canonical spellings of the keys the caller knows; a key
            written in any case is returned in its canonical spelling, and an
            unknown key as it was written. Without ``keys``, every key is
            returned in lower case.

    Returns:
        One record per line that holds pairs, in order.

    Raises:
        ConfigError: the file (or an included one) cannot be read, or a line
            is malformed: no ``=`` (``Foo``), no key (``=bar``), an
            unterminated quote, an include loop.
    """
    canonical = None if keys is None else {key.lower(): key for key in keys}
    records: list[ConfRecord] = []
    _read_into(records, path, canonical, (), _ErrorAt(path, 0))
    return records


def parse_text(
    text: str, path: str = "<string>", keys: Iterable[str] | None = None
) -> list[ConfRecord]:
    """Parse config text as ``parse_file`` parses a file's contents.

    Args:
        text: the file's contents.
        path: the name to report in records and errors; relative ``Include``
            paths are taken from its directory.
        keys: as for ``parse_file``.

    Returns:
        One record per line that holds pairs, in order.

    Raises:
        ConfigError: a malformed line or an unreadable included file.
    """
    canonical = None if keys is None else {key.lower(): key for key in keys}
    records: list[ConfRecord] = []
    _parse_into(records, text, path, canonical, (os.path.realpath(path),))
    return records


def _read_into(
    records: list[ConfRecord],
    path: str,
    canonical: dict[str, str] | None,
    stack: tuple[str, ...],
    error: _ErrorAt,
) -> None:
    """Parse one file into ``records``; ``error`` points at the line that named it."""
    real = os.path.realpath(path)
    if real in stack:
        raise error(f"include loop: {path}")
    if len(stack) >= _MAX_INCLUDE_DEPTH:
        raise error(f"includes nested too deep: {path}")
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from None
    _parse_into(records, text, path, canonical, (*stack, real))


class _ErrorAt:
    """Builds ConfigErrors for one file and line."""

    __slots__ = ("line", "path")

    def __init__(self, path: str, line: int) -> None:
        self.path = path
        self.line = line

    def __call__(self, message: str) -> ConfigError:
        return ConfigError(self.path, self.line, message)


def _parse_into(
    records: list[ConfRecord],
    text: str,
    path: str,
    canonical: dict[str, str] | None,
    stack: tuple[str, ...],
) -> None:
    for line_no, line in _logical_lines(text):
        error = _ErrorAt(path, line_no)
        content = _strip_comment(line).strip(_SPACE)
        if not content:
            continue
        end = next((i for i, ch in enumerate(content) if ch in _SPACE), len(content))
        if content[:end].lower() == "include":
            include = _unquote(content[end:].strip(_SPACE), error)
            if not include:
                raise error("Include without a file name")
            for target in _include_targets(include, path):
                _read_into(records, target, canonical, stack, error)
            continue
        pairs = _split_pairs(content, error)
        if canonical is None:
            pairs = [(key.lower(), value) for key, value in pairs]
        else:
            pairs = [(canonical.get(key.lower(), key), value) for key, value in pairs]
        records.append(ConfRecord(path, line_no, pairs))


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join lines ending in a backslash; number each logical line by its first line."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        lines.append((start, "".join(pending)))
        pending = []
    if pending:
        lines.append((start, "".join(pending)))
    return lines


def _strip_comment(line: str) -> str:
    """Cut a ``#`` comment (not one inside double quotes); ``\\#`` is a literal ``#``."""
    if "#" not in line:
        return line
    out: list[str] = []
    quoted = False
    for i, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            if i > 0 and line[i - 1] == "\\":
                out[-1] = "#"
                continue
            break
        out.append(char)
    return "".join(out)


def _split_pairs(content: str, error: _ErrorAt) -> list[tuple[str, str]]:
    """Split ``A=1 B = "two words"`` into ``[("A", "1"), ("B", "two words")]``."""
    pairs: list[tuple[str, str]] = []
    pos, end = 0, len(content)
    while True:
        pos = _skip_space(content, pos)
        if pos >= end:
            return pairs
        start = pos
        while pos < end and content[pos] != "=" and content[pos] not in _SPACE:
            pos += 1
        key = content[start:pos]
        pos = _skip_space(content, pos)
        if not key:
            token = content[pos:].split(None, 1)[0]
            raise error(f'missing key in "{token}"')
        if pos >= end or content[pos] != "=":
            raise error(f"missing '=' in \"{key}\"")
        if not (key[0].isalpha() and key.replace("_", "").isalnum()):
            raise error(f'invalid key "{key}"')
        pos, value = _read_value(content, _skip_space(content, pos + 1), key, error)
        pairs.append((key, value))


def _read_value(content: str, pos: int, key: str, error: _ErrorAt) -> tuple[int, str]:
    """Read one value starting at ``pos``; return the position after it and the value."""
    end = len(content)
    if pos < end and content[pos] == '"':
        close = content.find('"', pos + 1)
        if close < 0:
            raise error(f"unterminated quote in the value of {key}")
        if close + 1 < end and content[close + 1] not in _SPACE:
            raise error(f"unexpected text after the quoted value of {key}")
        return close + 1, content[pos + 1 : close]
    start = pos
    while pos < end and content[pos] not in _SPACE:
        pos += 1
    return pos, content[start:pos]


def _skip_space(content: str, pos: int) -> int:
    while pos < len(content) and content[pos] in _SPACE:
        pos += 1
    return pos


def _unquote(text: str, error: _ErrorAt) -> str:
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise error("unterminated quote in Include")
        return text[1:-1]
    return text


def _include_targets(include: str, including: str) -> list[str]:
    """The files an ``Include`` names: relative to the including file, globs expanded."""
    if not os.path.isabs(include):
        include = os.path.join(os.path.dirname(os.path.abspath(including)), include)
    if any(char in include for char in "*?["):
        import glob  # only here: it imports re, which the commands must not pay for

        return sorted(glob.glob(include))
    return [include]


# --------------------------------------------------------------------------- lookup


def find_config(
    environ: Mapping[str, str] | None = None, *, system_path: str = DEFAULT_CONFIG_PATH
) -> str | None:
    """Find the slurm.conf a command should use.

    In order: ``$SLURM_CONF`` when set (as Slurm); else the config of a
    running local cluster started by ``minislurm cluster up``, in
    ``$MINISLURM_HOME`` or, when that is unset, ``~/.minislurm`` (running: the
    ``slurmctld.pid`` beside it names a live process); else ``system_path``
    when it exists.

    Args:
        environ: the environment to read (default ``os.environ``).
        system_path: the standard location, ``/etc/slurm/slurm.conf``.

    Returns:
        The path, or None when there is no config to use.
    """
    env = os.environ if environ is None else environ
    explicit = env.get("SLURM_CONF")
    if explicit:
        return explicit
    home = env.get("MINISLURM_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".minislurm"
    )
    local = os.path.join(home, "slurm.conf")
    if os.path.isfile(local) and _pid_file_is_live(os.path.join(home, "slurmctld.pid")):
        return local
    if os.path.isfile(system_path):
        return system_path
    return None


def _pid_file_is_live(pid_path: str) -> bool:
    try:
        with open(pid_path, encoding="ascii", errors="replace") as stream:
            pid = int(stream.read().strip())
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, but someone else's
    return True


class ClientConfig:
    """What the commands read of slurm.conf: the controller's address and a few facts."""

    __slots__ = (
        "auth_type",
        "cluster_name",
        "gres_types",
        "host",
        "hosts",
        "interactive_step_options",
        "kill_wait",
        "launch_parameters",
        "message_timeout",
        "path",
        "port",
        "srun_epilog",
        "srun_prolog",
        "tls_ca",
    )

    def __init__(
        self,
        path: str,
        host: str,
        port: int,
        gres_types: tuple[str, ...],
        cluster_name: str,
        auth_type: str = "auth/hmac",
        message_timeout: int = DEFAULT_MESSAGE_TIMEOUT,
        tls_ca: str = "",
    ) -> None:
        self.path = path
        self.host = host
        self.hosts: tuple[str, ...] = (host,)  # every SlurmctldHost's address, primary first
        self.port = port
        self.gres_types = gres_types
        self.cluster_name = cluster_name
        self.auth_type = auth_type
        self.message_timeout = message_timeout
        self.tls_ca = tls_ca  # the CA that signs the servers' certificates ("": no TLS)
        self.launch_parameters: tuple[str, ...] = ()  # LaunchParameters (salloc reads them)
        self.interactive_step_options = DEFAULT_INTERACTIVE_STEP_OPTIONS
        self.kill_wait = DEFAULT_KILL_WAIT  # KillWait: srun says how long an abort may take
        self.srun_prolog = ""  # SrunProlog: srun runs it before a step's launch
        self.srun_epilog = ""  # SrunEpilog: after the step


_CLIENT_KEYS = (
    "SlurmctldHost",
    "SlurmctldPort",
    "ControlMachine",
    "ControlAddr",
    "GresTypes",
    "ClusterName",
    "AuthType",
    "MessageTimeout",
    "TLSType",
    "TLSParameters",
    "LaunchParameters",
    "InteractiveStepOptions",
    "KillWait",
    "SrunProlog",
    "SrunEpilog",
)


def read_client_config(path: str) -> ClientConfig:
    """Read what the commands need, the only config reading they do.

    The first ``SlurmctldHost`` is the primary controller, later ones are
    backups (``hosts`` lists them all, in order); ``name(addr)`` gives
    ``addr``, a bare ``name`` gives ``name``. The deprecated
    ``ControlMachine``/``ControlAddr`` are read when there is no SlurmctldHost.
    ``SlurmctldPort`` defaults to 6817; of a range (``6817-6818``) the first
    port is used. ``MessageTimeout`` (default 10) is how many seconds a command
    keeps trying to reach a controller that does not answer. Under
    ``TLSType=tls/openssl`` the CA of ``TLSParameters`` is where the commands
    find whom to trust.

    Args:
        path: the slurm.conf.

    Returns:
        The controller's host and port, GresTypes, ClusterName, AuthType,
        MessageTimeout, the TLS CA, LaunchParameters and InteractiveStepOptions
        (salloc's), KillWait, SrunProlog and SrunEpilog (srun's).

    Raises:
        ConfigError: the file is unreadable or malformed, has no controller,
            or has a bad host or port.
    """
    found: dict[str, tuple[ConfRecord, str]] = {}
    backups: list[tuple[ConfRecord, str]] = []
    for record in parse_file(path, _CLIENT_KEYS):
        for key, value in record.pairs:
            if key == "SlurmctldHost" and key in found:
                backups.append((record, value))
            elif key in _CLIENT_KEYS:
                found[key] = (record, value)
    try:
        backup_hosts = []
        for backup in backups:
            record, value = backup  # the record, for an error's line number
            backup_hosts.append(parse_slurmctld_host(value)[1])
        if "SlurmctldHost" in found:
            record, value = found["SlurmctldHost"]
            host = parse_slurmctld_host(value)[1]
        elif "ControlMachine" in found or "ControlAddr" in found:
            record, host = found.get("ControlAddr") or found["ControlMachine"]
        else:
            raise ConfigError(path, 0, "no SlurmctldHost")
        port = DEFAULT_SLURMCTLD_PORT
        if "SlurmctldPort" in found:
            record, value = found["SlurmctldPort"]
            port = parse_port(value)
        message_timeout = DEFAULT_MESSAGE_TIMEOUT
        if "MessageTimeout" in found:
            record, value = found["MessageTimeout"]
            message_timeout = int(value) if value.isdigit() and 0 < int(value) <= 100 else 0
            if not message_timeout:
                raise ValueError(f"MessageTimeout={value}: not a number of seconds (1-100)")
    except ValueError as exc:
        raise record.error(str(exc)) from None
    gres = found.get("GresTypes", (None, ""))[1]
    cluster = found.get("ClusterName", (None, "cluster"))[1].lower()
    auth_type = found.get("AuthType", (None, "auth/hmac"))[1].lower()
    gres_types = tuple(g for g in gres.split(",") if g)
    tls_type = found.get("TLSType", (None, tlsconf.TLS_NONE))[1].lower()
    params = dict(
        p.partition("=")[::2] for p in found.get("TLSParameters", (None, ""))[1].split(",")
    )
    files = tlsconf.tls_files(path, tls_type, params)
    config = ClientConfig(
        path, host, port, gres_types, cluster, auth_type, message_timeout, files[0] if files else ""
    )
    config.hosts = (host, *backup_hosts)
    launch = found.get("LaunchParameters", (None, ""))[1]
    config.launch_parameters = tuple(p.strip() for p in launch.split(",") if p.strip())
    if "InteractiveStepOptions" in found:
        config.interactive_step_options = found["InteractiveStepOptions"][1]
    kill_wait = found.get("KillWait", (None, ""))[1]
    if kill_wait.isdigit():  # the daemons reject a bad one; a command need not
        config.kill_wait = int(kill_wait)
    for key in ("SrunProlog", "SrunEpilog"):  # relative to slurm.conf's directory
        program = found.get(key, (None, ""))[1]
        if program:
            setattr(config, f"srun_{key[4:].lower()}", os.path.join(os.path.dirname(path), program))
    return config


def read_controller_address(path: str) -> tuple[str, int]:
    """Where slurmctld listens, as :func:`read_client_config` reads it.

    Args:
        path: the slurm.conf.

    Returns:
        ``(host, port)``.

    Raises:
        ConfigError: see :func:`read_client_config`.
    """
    config = read_client_config(path)
    return config.host, config.port


def parse_slurmctld_host(value: str) -> tuple[str, str]:
    """Split a ``SlurmctldHost`` value into its name and address.

    Args:
        value: ``name`` or ``name(addr)``.

    Returns:
        ``(name, addr)``; the address is the name when none is given.

    Raises:
        ValueError: an empty name or address, or unbalanced parentheses.
    """
    name, paren, rest = value.partition("(")
    if not paren:
        if not name or ")" in name:
            raise ValueError(f"invalid SlurmctldHost {value!r}")
        return name, name
    if not name or not rest.endswith(")") or len(rest) < 2 or "(" in rest:
        raise ValueError(f"invalid SlurmctldHost {value!r}")
    return name, rest[:-1]


def parse_port(value: str) -> int:
    """Read a port, or the first of a ``6817-6818`` range.

    Args:
        value: e.g. ``"6817"``.

    Returns:
        The port number.

    Raises:
        ValueError: not a number in 1..65535.
    """
    first, dash, last = value.partition("-")
    digits = "0123456789"
    if not first or (dash and not last) or not all(char in digits for char in first + last):
        raise ValueError(f"invalid port {value!r}")
    if not 0 < int(first) < 65536:
        raise ValueError(f"invalid port {value!r}")
    return int(first)
