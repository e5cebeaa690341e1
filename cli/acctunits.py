"""The units sacct and sstat print: CPU time, and sizes in their largest exact unit.

Pure functions; imports nothing of ours.
"""

from __future__ import annotations


def cpu_time_text(seconds: float) -> str:
    """TotalCPU as sacct prints it: ``00:00.123``, ``00:01:02``, ``01:02:03``, ``1-00:00:00``.

    Args:
        seconds: CPU seconds.

    Returns:
        The text (milliseconds shown only under an hour).
    """
    micro = round(max(seconds, 0.0) * 1_000_000)
    secs, micro = divmod(micro, 1_000_000)
    days, rest = divmod(secs, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if micro // 1000:
        return f"{minutes:02d}:{secs:02d}.{micro // 1000:03d}"
    return f"00:{minutes:02d}:{secs:02d}"


KIB_UNITS = ("K", "M", "G", "T", "P")
BYTE_UNITS = ("", *KIB_UNITS)


def exact_size(value: int, unit_names: tuple[str, ...] = KIB_UNITS) -> str:
    """A size as Slurm's ``CONVERT_NUM_UNIT_EXACT`` prints it: ``1234K``, ``2M``, ``2.50M``, ``0``.

    Up a unit while no precision is lost, halves counting as precise.

    Args:
        value: the size in the first unit.
        unit_names: the suffixes, from the value's own unit up.

    Returns:
        The size in the largest such unit.
    """
    if not value:
        return "0"
    number, index = float(value), 0
    while number >= 1024 and int(number) % 512 == 0 and index < len(unit_names) - 1:
        number /= 1024
        index += 1
    text = str(int(number)) if number.is_integer() else f"{number:.2f}"
    return text + unit_names[index]
