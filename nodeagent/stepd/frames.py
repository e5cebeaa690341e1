"""The frames stepd and slurmd exchange over a step's socket (and in ``lost-output``).

Documented in :mod:`nodeagent.stepio`, which is slurmd's end.

Imports the standard library only (stepd and slurmd import it).
"""

from __future__ import annotations

import enum
import os
import struct

PROTOCOL_VERSION = 1
HEADER = struct.Struct("!BII")  # kind, task id, payload length
PID = struct.Struct("!i")  # STARTED payload
EXIT = struct.Struct("!ii")  # EXITED payload head: exit code, signal (then the error text)
SIGNUM = struct.Struct("!i")  # SIGNAL payload
WINDOW = struct.Struct("!HH")  # WINSIZE payload: rows, columns
ALL_TASKS = 0xFFFFFFFF  # the task id of frames about the whole step
MAX_PAYLOAD = 16 << 20
UNIX_PATH_MAX = 108


class Kind(enum.IntEnum):
    """Frame kinds: 1-15 from stepd to slurmd, 16 and up from slurmd to stepd."""

    HELLO = 1
    STARTED = 2
    STDOUT = 3
    STDERR = 4
    EXITED = 5
    DONE = 6
    STDIN = 16
    STDIN_EOF = 17
    SIGNAL = 18
    TERMINATE = 19
    WINSIZE = 20


def encode_frame(kind: int, task_id: int, payload: bytes = b"") -> bytes:
    """One frame, header and payload.

    Args:
        kind: a :class:`Kind`.
        task_id: the task, or ALL_TASKS.
        payload: at most MAX_PAYLOAD bytes.

    Returns:
        The bytes to send.

    Raises:
        ValueError: the payload is too large.
    """
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"frame payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return HEADER.pack(kind, task_id, len(payload)) + payload


def unix_path(directory: str, name: str) -> tuple[str, int]:
    """An AF_UNIX address for ``directory/name``, short enough for sun_path.

    Spool paths can pass the 108-byte limit; then the address goes through
    ``/proc/self/fd/N`` of an O_PATH descriptor of the directory.

    Args:
        directory: the socket's directory.
        name: the socket's file name.

    Returns:
        The address and the descriptor to close once bound/connected (-1: none).
    """
    path = os.path.join(directory, name)
    if len(os.fsencode(path)) < UNIX_PATH_MAX:
        return path, -1
    fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{name}", fd


def parse_frames(data: bytes) -> list[tuple[int, int, bytes]]:
    """Split a byte string of whole frames (``lost-output``); a torn tail is left out.

    Args:
        data: the frames.

    Returns:
        (kind, task id, payload) of each.
    """
    frames, at = [], 0
    while at + HEADER.size <= len(data):
        kind, task_id, size = HEADER.unpack_from(data, at)
        if at + HEADER.size + size > len(data):
            break
        frames.append((kind, task_id, data[at + HEADER.size : at + HEADER.size + size]))
        at += HEADER.size + size
    return frames
