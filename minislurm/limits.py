"""Bounds on what one request may hold: string lengths and entry counts.

Every string in a request (a name, a path, an argument, an environment
value) is at most ``MAX_STRING`` bytes, the kernel's ``MAX_ARG_STRLEN``: no
longer argument or environment entry could be executed anyway. Every
repeated field or map (arguments, environment, job ids, node lists) holds at
most ``MAX_ITEMS`` entries. Bytes fields are bounded by the message size
(``minislurm.daemon.MAX_MESSAGE_BYTES``) and the script by its handler
(Slurm's ``max_script_size``). The daemons check each request on entry
(``minislurm.security.authgrpc``), before any handler sees it.

Imports nothing of ours; works on any protobuf message.
"""

from __future__ import annotations

from typing import Any

MAX_STRING = 128 * 1024  # MAX_ARG_STRLEN
MAX_ITEMS = 64 * 1024


def violation(message: Any, path: str = "") -> str:
    """What in ``message`` is over a limit ("" when nothing is).

    Args:
        message: a protobuf message.
        path: the dotted field path of ``message`` (for the error).

    Returns:
        e.g. ``"spec.environment: a value is longer than 131072 bytes"``.
    """
    # Each entry of a repeated field or map takes at least a byte on the wire,
    # so a message that small is within every limit: skip the walk (~100 us).
    if message.ByteSize() <= min(MAX_ITEMS, MAX_STRING):
        return ""
    for field, value in message.ListFields():
        name = f"{path}{field.name}"
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            if len(value) > MAX_ITEMS:
                return f"{name}: more than {MAX_ITEMS} entries"
            for key, item in value.items():
                problem = _scalar(name, key) or _item(name, item)
                if problem:
                    return problem
        elif field.is_repeated:
            if len(value) > MAX_ITEMS:
                return f"{name}: more than {MAX_ITEMS} entries"
            for item in value:
                problem = _item(name, item)
                if problem:
                    return problem
        else:
            problem = _item(name, value)
            if problem:
                return problem
    return ""


def _item(name: str, value: Any) -> str:
    if isinstance(value, str):
        return _scalar(name, value)
    if hasattr(value, "ListFields"):
        return violation(value, name + ".")
    return ""


def _scalar(name: str, value: Any) -> str:
    if isinstance(value, str) and len(value) > MAX_STRING // 4 and len(value.encode()) > MAX_STRING:
        return f"{name}: a value is longer than {MAX_STRING} bytes"
    return ""
