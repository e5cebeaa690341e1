"""Job options that both the commands and the controller read: --signal, --mail-type, --open-mode,
--switches.

The commands parse what users type, as Slurm's ``slurm_opt.c`` does; the
controller checks the parsed values again (clients can be bypassed).

Imports only minislurm.units.
"""

from __future__ import annotations

from minislurm import units

NICE_LIMIT = 2147483645  # --nice and Nice=: at most this far from 0 (Slurm's NICE_OFFSET - 3)
DEFAULT_WARN_TIME = 60  # seconds, when --signal has no @time
MAX_WARN_TIME = 0xFFFF  # Slurm keeps it in 16 bits

# In the order scontrol prints them (Slurm's print_mail_type).
MAIL_TYPES = (
    "ARRAY_TASKS",
    "INVALID_DEPEND",
    "BEGIN",
    "END",
    "FAIL",
    "REQUEUE",
    "STAGE_OUT",
    "TIME_LIMIT_50",
    "TIME_LIMIT_80",
    "TIME_LIMIT_90",
    "TIME_LIMIT",
)
_MAIL_ALL = frozenset({"INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT"})


class WarnSignal(tuple[int, int, bool]):
    """``--signal=[{R|B}:]<sig>[@sig_time]``: what to send, how long before the limit, to whom.

    ``signal``: the signal number; ``time``: seconds before the time limit;
    ``batch``: B: the batch shell only (otherwise the job's steps). A plain
    tuple with names: importing dataclasses costs every command ~20 ms, and
    collections (for namedtuple) ~3 ms.
    """

    __slots__ = ()

    def __new__(cls, signal: int, time: int, batch: bool) -> WarnSignal:
        return super().__new__(cls, (signal, time, batch))

    def __repr__(self) -> str:
        return f"WarnSignal(signal={self[0]}, time={self[1]}, batch={self[2]})"

    @property
    def signal(self) -> int:
        """The signal number."""
        return self[0]

    @property
    def time(self) -> int:
        """Seconds before the time limit."""
        return self[1]

    @property
    def batch(self) -> bool:
        """Whether only the batch shell gets it."""
        return self[2]


def parse_warn_signal(text: str) -> WarnSignal:
    """Read ``--signal``. ``R:`` (a reservation's end) is accepted and has no effect here.

    Args:
        text: the option's value: ``USR1``, ``SIGUSR2@90``, ``B:10@30``, ``RB:TERM``.

    Returns:
        The parsed option; the time defaults to 60 seconds.

    Raises:
        ValueError: an empty or unknown signal, unknown flags, or a time that is
            not a number from 0 to 65535.
    """
    flags, colon, rest = text.partition(":")
    if not colon:
        flags, rest = "", text
    if any(flag not in "RBrb" for flag in flags):
        raise ValueError(f"invalid --signal flags {flags!r}")
    name, at, when = rest.partition("@")
    signal = units.parse_signal(name)  # raises ValueError on nonsense
    seconds = DEFAULT_WARN_TIME
    if at:
        word = when.strip()
        if not word.isdigit() or int(word) > MAX_WARN_TIME:
            raise ValueError(f"invalid --signal time {when!r}")
        seconds = int(word)
    return WarnSignal(signal, seconds, "B" in flags.upper())


def parse_mail_type(text: str) -> str:
    """Read ``--mail-type`` into the form scontrol shows (``BEGIN,END``; "" for NONE).

    Args:
        text: a comma-separated list of types, in any case; ``ALL`` and ``NONE`` included.

    Returns:
        The types in Slurm's order, comma-separated.

    Raises:
        ValueError: an unknown type, or none.
    """
    words = [word for word in text.upper().split(",") if word]  # "END," is END, as in Slurm
    if not words:
        raise ValueError("empty --mail-type")
    chosen: set[str] = set()
    for word in words:
        if word == "ALL":
            chosen |= _MAIL_ALL
        elif word == "NONE":
            chosen.clear()
        elif word in MAIL_TYPES:
            chosen.add(word)
        else:
            raise ValueError(f"invalid --mail-type {word!r}")
    return ",".join(t for t in MAIL_TYPES if t in chosen)


def parse_open_mode(text: str) -> str:
    """Read ``--open-mode``: only the first letter counts, as in Slurm.

    Args:
        text: ``append`` or ``truncate`` (``a``, ``t``, any case).

    Returns:
        ``"append"`` or ``"truncate"``.

    Raises:
        ValueError: anything else.
    """
    first = text[:1].lower()
    if first == "a":
        return "append"
    if first == "t":
        return "truncate"
    raise ValueError(f"invalid --open-mode {text!r}")


def parse_switches(text: str, max_wait: int) -> tuple[int, int]:
    """``--switches=count[@max-time]``, already checked (``optcheck.check_switches``).

    The time reads as a time limit, to the second (``5`` is five minutes,
    ``0:45`` 45 seconds), at most ``max_wait``; as in Slurm it is not
    checked, and one that does not read (or none) is ``max_wait``.

    Args:
        text: the option's value; "" when not given.
        max_wait: ``SchedulerParameters=max_switch_wait``, seconds.

    Returns:
        (the most leaf switches, 0 for any; seconds to wait for them).
    """
    if not text:
        return 0, 0
    number, _, wait = text.partition("@")
    seconds = units.parse_duration_seconds(wait.strip()) if wait else None
    return int(number), max_wait if seconds is None else min(seconds, max_wait)
