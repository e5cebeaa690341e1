"""Times as Slurm's ``parse_time`` reads them: ``sbatch --begin/--deadline``, ``sacct -S/-E``.

Forms: ``YYYY-MM-DD[THH:MM[:SS]]``, ``MM/DD[/YY][-HH:MM[:SS]]``,
``MM.DD[.YY]``, ``MMDD[YY]``, ``HH:MM[:SS] [AM|PM]`` (today),
``now[{+|-}count[seconds|minutes|hours|days|weeks]]``, and the words
``today``, ``midnight``, ``noon``, ``elevenses``, ``fika``, ``teatime``,
``tomorrow``. All in local time.

Pure functions (the current time is an argument); imports the standard
library's ``time`` and minislurm.units only.
"""

from __future__ import annotations

import time

from minislurm import units

_WORDS = {"midnight": 0, "today": 0, "elevenses": 11, "noon": 12, "fika": 15, "teatime": 16}
_UNITS = (
    (("seconds", "second", "secs", "sec", "s"), 1),
    (("minutes", "minute", "mins", "min"), 60),
    (("hours", "hour", "hrs", "hr", "h"), 3600),
    (("days", "day", "d"), 86400),
    (("weeks", "week", "w"), 7 * 86400),
)


def parse_time(text: str, now: float) -> int:
    """A time as the user typed it, as epoch seconds.

    Args:
        text: the value as typed.
        now: the current time.

    Returns:
        Seconds since the epoch.

    Raises:
        ValueError: not a time Slurm accepts (Slurm's ``Invalid time
            specification`` wording).
    """
    word = text.strip().lower()
    parsers = (_relative, _word, _iso, _month_day, _clock)
    for parser in parsers:
        value = parser(word, now)
        if value is not None:
            return value
    raise ValueError(f"Invalid time specification (pos={error_position(word)}): {text}")


_ISO_FIELDS = ((5, 1, 12), (8, 1, 31), (11, 0, 23), (14, 0, 59), (17, 0, 59))


def error_position(word: str) -> int:
    """Where Slurm's parse_time says a time it refuses went wrong (its ``pos=``).

    Args:
        word: the time, stripped and lower case.

    Returns:
        The index of the part that could not be read (0: the start).
    """
    if word.startswith("now"):
        return 4 if word[3:4] in ("+", "-") and word[4:5].isdigit() else 3
    for name in ("tomorrow", *_WORDS):
        if word.startswith(name):
            return len(name)
    if len(word) >= 10 and word[4:5] == "-" and word[7:8] == "-":
        for start, low, high in _ISO_FIELDS:
            digits = word[start : start + 2]
            if digits and not (digits.isdigit() and low <= int(digits) <= high):
                return start
        return 0
    for separator, (low, high) in (("/", (12, 31)), (":", (23, 59))):
        first, found, second = word.partition(separator)
        if found and first.isdigit() and int(first) <= low:
            return 0 if second[:2].isdigit() and int(second[:2]) <= high else len(first) + 1
    return 0


def _day_start(now: float, days: int = 0) -> time.struct_time:
    today = time.localtime(now)
    return time.localtime(
        time.mktime((today.tm_year, today.tm_mon, today.tm_mday + days, 0, 0, 0, 0, 0, -1))
    )


def _at(day: time.struct_time, hour: int, minute: int = 0, second: int = 0) -> int:
    return int(time.mktime((day.tm_year, day.tm_mon, day.tm_mday, hour, minute, second, 0, 0, -1)))


def _relative(word: str, now: float) -> int | None:
    if not word.startswith("now"):
        return None
    rest = word[3:]
    if not rest:
        return int(now)
    sign = {"+": 1, "-": -1}.get(rest[0])
    digits = rest[1:]
    count = ""
    while digits[:1].isdigit():
        count, digits = count + digits[0], digits[1:]
    if sign is None or not count:
        return None
    for names, seconds in _UNITS:
        if digits in names or not digits:
            return int(now) + sign * int(count) * (seconds if digits else 1)
    return None


def _word(word: str, now: float) -> int | None:
    if word == "tomorrow":
        return _at(_day_start(now, 1), 0)
    if word in _WORDS:
        return _at(_day_start(now), _WORDS[word])
    return None


def _iso(word: str, now: float) -> int | None:
    if len(word) < 10 or word[4:5] != "-":
        return None
    if "t" not in word:
        word += "t00:00"
    try:
        return units.parse_timestamp(word.upper())
    except ValueError:
        return None


def _clock(word: str, now: float) -> int | None:
    """``HH:MM[:SS] [AM|PM]`` today."""
    meridian = ""
    for suffix in ("am", "pm"):
        if word.endswith(suffix):
            word, meridian = word[: -len(suffix)].rstrip(), suffix
    parts = word.split(":")
    if len(parts) not in (2, 3) or not all(p.isdigit() and len(p) <= 2 for p in parts):
        return None
    hour, minute, second = (int(p) for p in [*parts, "0"][:3])
    if meridian:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridian == "pm" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return _at(_day_start(now), hour, minute, second)


def _month_day(word: str, now: float) -> int | None:
    """``MM/DD[/YY][-HH:MM[:SS]]``, ``MM.DD[.YY]``, ``MMDD[YY]``."""
    date, _, clock = word.partition("-")
    for separator in "/.":
        if separator in date:
            fields = date.split(separator)
            break
    else:
        fields = [date[i : i + 2] for i in range(0, len(date), 2)] if len(date) in (4, 6) else []
    if len(fields) not in (2, 3) or not all(f.isdigit() and len(f) <= 2 for f in fields):
        return None
    month, day = int(fields[0]), int(fields[1])
    year = 2000 + int(fields[2]) if len(fields) == 3 else time.localtime(now).tm_year
    try:
        midnight = units.parse_timestamp(f"{year:04d}-{month:02d}-{day:02d}T00:00")
    except ValueError:
        return None
    if not clock:
        return midnight
    return _clock(clock, midnight)
