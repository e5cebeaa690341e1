"""Values of the job options minislurm accepts without effect, checked as Slurm checks them.

Binding, CPU frequency, hardware layout, burst buffers, networks and the
like have no meaning on this cluster, yet scripts pass them. The commands
take them, reject a value Slurm's client rejects (its words, its exit
status), and send those that belong to the job to the controller, which
checks them again here, keeps them and shows them (``scontrol show job``).

:data:`JOB_OPTIONS` maps each such option's long name to its check, which
returns the value to keep. Numbers, times and sizes are kept as Slurm
stores them (minutes, MiB); lists as given.

Imports only minislurm.units.
"""

from __future__ import annotations

from minislurm import units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CLIENT_ERROR = 255  # the status of what Slurm's option parser rejects (exit(-1))


class OptionError(ValueError):
    """A value Slurm's client rejects, or a ``help`` value it answers, and the exit status.

    ``lines`` go to stderr after ``prog: ``; ``output`` (a help text) goes to stdout.
    """

    def __init__(self, *lines: str, status: int = CLIENT_ERROR, output: str = "") -> None:
        super().__init__("\n".join(lines) or output)
        self.lines = lines
        self.status = status
        self.output = output


def invalid(option: str) -> OptionError:
    """Slurm's ``Invalid --option specification`` (status 255).

    Args:
        option: the long name.

    Returns:
        The error to raise.
    """
    return OptionError(f"error: Invalid --{option} specification")


def count(text: str, option: str, least: int = 1) -> int:
    """A whole number as Slurm's ``parse_int`` reads it.

    Args:
        text: the value.
        option: how the message names the option (``--ntasks``).
        least: the smallest value allowed.

    Returns:
        The number.

    Raises:
        OptionError: ``Invalid numeric value "X" for --opt.``, status 1.
    """
    word = text.strip()
    digits = word[1:] if word[:1] in "+-" else word
    if not digits.isdigit() or int(word) < least:
        raise OptionError(f'error: Invalid numeric value "{text}" for {option}.', status=1)
    return int(word)


def counter(option: str, least: int = 1) -> Callable[[str], str]:
    """A check of a whole number of at least ``least`` (Slurm's ``parse_int``).

    Args:
        option: the long name.
        least: the smallest value allowed.

    Returns:
        The check, which returns the number as text.
    """
    return lambda text: str(count(text, f"--{option}", least))


def _minutes(option: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        word = text.strip()
        if word.startswith("-") and word[1:].isdigit():
            return word  # Slurm takes a negative count of minutes as given
        try:
            return str(units.parse_time_limit(word, zero_is_infinite=False))
        except ValueError:
            raise invalid(option) from None

    return check


def _size(option: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        try:
            return str(units.parse_memory_mb(text))
        except ValueError:
            raise invalid(option) from None

    return check


def _one_of(option: str, allowed: frozenset[str]) -> Callable[[str], str]:
    def check(text: str) -> str:
        if text.lower() not in allowed:
            raise invalid(option)
        return text

    return check


def _free(text: str) -> str:
    return text


def check_hint(text: str) -> str:
    """``--hint``: compute_bound, memory_bound, [no]multithread; ``help`` lists them."""
    allowed = {"compute_bound", "memory_bound", "multithread", "nomultithread"}
    if text.lower() == "help":
        raise OptionError(status=1, output=HINT_HELP)
    for word in text.split(","):
        if word.lower() not in allowed:
            raise OptionError(
                f'error: unrecognized --hint argument "{word}", see --hint=help', status=1
            )
    return text


HINT_HELP = """\
Application hint options:
    --hint=             Bind tasks according to application hints
        compute_bound   use all cores in each socket
        memory_bound    use only one core in each socket
        [no]multithread [don't] use extra threads with in-core multi-threading
        help            show this help message
"""

MEM_BIND_HELP = """\
Memory bind options:
    --mem-bind=         Bind memory to locality domains (ldom)
        nosort          avoid sorting pages at startup
        sort            sort pages at startup
        q[uiet]         quietly bind before task runs (default)
        v[erbose]       verbosely report binding before task runs
        no[ne]          don't bind tasks to memory (default)
        rank            bind by task rank
        local           bind to memory local to processor
        map_mem:<list>  specify a memory binding for each task
                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>
        mask_mem:<list> specify a memory binding mask for each tasks
                        where <list> is <mask1>,<mask2>,...<maskN>
        help            show this help message
"""

_MEM_BIND_WORDS = frozenset("none no local l rank r sort nosort prefer p quiet q verbose v".split())


def check_mem_bind(text: str) -> str:
    """``--mem-bind=[{quiet|verbose},]type``: none, local, rank, map_mem:, mask_mem:, ..."""
    if text.lower() == "help":
        raise OptionError(output=MEM_BIND_HELP)
    for word in text.split(","):
        kind, colon, rest = word.partition(":")
        if kind.lower() in ("map_mem", "mask_mem", "map_ldom", "mask_ldom"):
            if not rest:
                raise OptionError(f'error: missing list for "--mem-bind={kind}:<list>"')
            continue
        if colon or word.lower() not in _MEM_BIND_WORDS:
            raise OptionError(f'error: unrecognized --mem-bind argument "{word}"')
    return text


_GOVERNORS = frozenset(("performance", "ondemand", "userspace"))  # CpuFreqGovernors default
_OTHER_GOVERNORS = frozenset(("conservative", "powersave", "schedutil"))
_FREQ_WORDS = frozenset(("low", "medium", "high", "highm1"))


def check_cpu_freq(text: str) -> str:
    """``--cpu-freq=p1[-p2[:p3]]``: frequencies (kHz or low/medium/high/highm1) and a governor."""
    low_high, colon, governor = text.partition(":")
    words = [governor] if colon else []
    if not colon and low_high.lower() in _GOVERNORS | _OTHER_GOVERNORS:
        words, low_high = [low_high], ""
    for word in words:
        if word.lower() in _OTHER_GOVERNORS:
            raise OptionError(
                f"error: governor of {word} is not allowed in slurm.conf",
                "error: Invalid --cpu-freq argument",
            )
        if word.lower() not in _GOVERNORS:
            raise _bad_cpu_freq(word)
    for word in low_high.split("-") if low_high else []:
        if not word.isdigit() and word.lower() not in _FREQ_WORDS:
            raise _bad_cpu_freq(word)
    return text


def _bad_cpu_freq(word: str) -> OptionError:
    return OptionError(
        f'error: unrecognized --cpu-freq argument "{word}"', "error: Invalid --cpu-freq argument"
    )


def check_gpu_bind(text: str) -> str:
    """``--gpu-bind=[verbose,]type``: closest, none, single:N, per_task:N, map_gpu:, mask_gpu:."""
    rest = text[len("verbose,") :] if text.lower().startswith("verbose,") else text
    kind, _, arg = rest.partition(":")
    kind = kind.lower()
    if kind == "mask_gpu":
        for mask in arg.split(","):
            digits = mask[2:] if mask.lower().startswith("0x") else mask
            bad = next((c for c in digits if c not in "0123456789abcdefABCDEF"), None)
            if bad is not None:
                raise OptionError(
                    f"error: Failed to validate {mask}, offending character is {bad}",
                    f"error: Invalid --gpu-bind argument: gpu:{text}",
                )
    elif kind not in ("verbose", "closest", "none", "single", "per_task", "map_gpu"):
        raise OptionError(f"error: Invalid --gpu-bind argument: gpu:{text}")
    return text


def check_gpu_freq(text: str) -> str:
    """``--gpu-freq=[type=]value[,type=value][,verbose]``."""
    for word in text.split(","):
        kind, eq, value = word.partition("=")
        if not eq:
            kind, value = "", word
        if word.lower() == "verbose":
            continue
        if kind.lower() not in ("", "memory") or not (
            value.isdigit() or value.lower() in _FREQ_WORDS
        ):
            raise OptionError(f"error: Invalid --gpu-freq argument: gpu:{text}")
    return text


def check_acctg_freq(text: str) -> str:
    """``--acctg-freq=N`` or ``type=N,...`` (task, energy, network, filesystem)."""
    for word in text.split(","):
        kind, eq, value = word.partition("=")
        if not eq:
            kind, value = "task", word
        if kind.lower() not in ("task", "energy", "network", "filesystem") or not value.isdigit():
            raise OptionError(f"error: Invalid --acctg-freq specification: {text}")
    return text


_RLIMITS = frozenset("ALL NONE AS CORE CPU DATA FSIZE MEMLOCK NOFILE NPROC RSS STACK".split())


def check_propagate(text: str) -> str:
    """``--propagate[=rlimit,...]``: Slurm's resource-limit names, in capitals."""
    for word in text.split(",") if text else []:
        if word not in _RLIMITS:
            raise OptionError(
                f"error: Bad rlimit name: {word}",
                f"error: --propagate={text} is not valid.",
                status=1,
            )
    return text or "ALL"


def check_distribution(text: str) -> str:
    """``--distribution``: ``{block|cyclic|arbitrary|plane=N}[:{block|cyclic|fcyclic}...]``."""
    levels, comma, pack = text.partition(",")
    if comma and pack.lower() not in ("pack", "nopack"):
        raise invalid("distribution")
    first, *rest = levels.split(":")
    kind, eq, size = first.partition("=")
    if kind.lower() == "plane":
        if not size.isdigit() or int(size) <= 0:
            raise OptionError(
                "error: Invalid plane size or size not specified",
                "error: Invalid --distribution specification",
            )
    elif eq or kind.lower() not in ("*", "block", "cyclic", "arbitrary"):
        raise invalid("distribution")
    if len(rest) > 2 or any(r.lower() not in ("*", "block", "cyclic", "fcyclic") for r in rest):
        raise invalid("distribution")
    return text


def check_extra_node_info(text: str) -> str:
    """``-B sockets[:cores[:threads]]``: numbers or ``*``."""
    names = ("first", "second", "third")
    for i, word in enumerate(text.split(":")[:3]):
        if word != "*":
            count(word, f"{names[i]} arg of -B", least=0)
    return text


def check_switches(text: str) -> str:
    """``--switches=count[@max-time]`` (the time is not checked, as in Slurm)."""
    number, _, _ = text.partition("@")
    count(number, "--switches")
    return text


def check_priority(text: str) -> str:
    """``--priority=value|TOP``."""
    if text.strip().startswith("-"):
        raise OptionError("error: Priority must be >= 0")
    return text


def check_wait_all_nodes(text: str) -> str:
    """``--wait-all-nodes=0|1``."""
    if count(text, "--wait-all-nodes", least=0) > 1:
        raise invalid("wait-all-nodes")
    return text


def check_no_kill(text: str) -> str:
    """``--no-kill[=off]``."""
    if text and text.lower() != "off":
        raise invalid("no-kill")
    return text


def check_get_user_env(text: str) -> str:
    """``--get-user-env[=timeout][mode]``: a number, then L or S."""
    digits = text.rstrip("LSls")
    if len(text) - len(digits) > 1 or (digits and not digits.isdigit()):
        raise invalid("get-user-env")
    return text


def power_warnings(text: str) -> list[str]:
    """``--power=flags``: Slurm knows ``level``, and warns about (and ignores) the others.

    Args:
        text: the value.

    Returns:
        One line per unknown flag.
    """
    unknown = [word for word in text.split(",") if word and word.lower() != "level"]
    return [f"error: Ignoring unrecognized power option ({word})" for word in unknown]


def check_profile(text: str) -> str:
    """``--profile={all|none|type[,type...]}``: Slurm rejects a list with no type it knows."""
    known = {"all", "none", "energy", "task", "lustre", "network"}
    if not any(word.lower() in known for word in text.split(",")):
        raise OptionError(f"error: invalid --profile={text} option")
    return text


def _flag(_text: str) -> str:
    return "1"


# The options kept with the job (scontrol show job shows most of them).
JOB_OPTIONS: dict[str, Callable[[str], str]] = {
    "acctg-freq": check_acctg_freq,
    "batch": _free,
    "bb": _free,
    "cluster-constraint": _free,
    "constraint": _free,
    "container": _free,
    "contiguous": _flag,
    "core-spec": counter("core-spec", least=0),
    "cores-per-socket": counter("cores-per-socket"),
    "cpu-freq": check_cpu_freq,
    "cpus-per-gpu": counter("cpus-per-gpu"),
    "delay-boot": _minutes("delay-boot"),
    "distribution": check_distribution,
    "extra-node-info": check_extra_node_info,
    "get-user-env": check_get_user_env,
    "gpu-bind": check_gpu_bind,
    "gpu-freq": check_gpu_freq,
    "gpus-per-socket": _free,
    "gres-flags": _one_of("gres-flags", frozenset(("enforce-binding", "disable-binding"))),
    "hint": check_hint,
    "licenses": _free,
    "mcs-label": _free,
    "mem-bind": check_mem_bind,
    "mem-per-gpu": _size("mem-per-gpu"),
    "mincpus": counter("mincpus"),
    "network": _free,
    "no-kill": check_no_kill,
    "ntasks-per-core": counter("ntasks-per-core"),
    "ntasks-per-socket": counter("ntasks-per-socket"),
    "overcommit": _flag,
    "oversubscribe": _flag,
    "power": _free,
    "prefer": _free,
    "priority": check_priority,
    "profile": check_profile,
    "propagate": check_propagate,
    "reboot": _flag,
    "segment": counter("segment"),
    "sockets-per-node": counter("sockets-per-node"),
    "spread-job": _flag,
    "switches": check_switches,
    "thread-spec": counter("thread-spec"),
    "threads-per-core": counter("threads-per-core"),
    "time-min": _minutes("time-min"),
    "tmp": _size("tmp"),
    "use-min-nodes": _flag,
    "wait-all-nodes": check_wait_all_nodes,
    "wckey": _free,
}


def check(option: str, value: str) -> str:
    """Check one option's value as Slurm's client does.

    Args:
        option: the long name (a key of :data:`JOB_OPTIONS`).
        value: the value as given ("" for a flag).

    Returns:
        The value to keep.

    Raises:
        OptionError: Slurm's message and exit status.
        KeyError: not an option kept with a job.
    """
    return JOB_OPTIONS[option](value)
