"""stepd's end of its connection to slurmd: the last frames, and what slurmd writes after them."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from nodeagent.stepd.frames import ALL_TASKS, HEADER, Kind
from nodeagent.stepd.link import AgentLink

pytestmark = pytest.mark.timeout(20)


def kinds_until_closed(sock: socket.socket) -> list[int]:
    """The kinds of the frames read until the other end stops writing."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    kinds = []
    while data:
        kind, _, size = HEADER.unpack_from(data)
        kinds.append(kind)
        data = data[HEADER.size + size :]
    return kinds


def test_slurmd_may_write_until_it_has_read_the_last_frame(tmp_path: Path) -> None:
    # A step whose task ended at once: stepd sends its last frames while slurmd,
    # not yet aware, forwards srun's end of stdin. That write must not fail (a
    # failed write ends slurmd's reading, and the task's exit with it).
    ours, slurmd = socket.socketpair()
    ours.setblocking(False)
    lost_fd = os.open(tmp_path / "lost-output", os.O_WRONLY | os.O_CREAT, 0o600)
    link = AgentLink(ours, lost_fd)
    link.send(Kind.EXITED, 0, b"\0\0\0\6\0\0\0\0")
    link.send(Kind.DONE, ALL_TASKS, b"{}")
    finishing = threading.Thread(target=link.finish, args=(10.0,))
    finishing.start()

    kinds = kinds_until_closed(slurmd)  # stepd has sent all it will
    slurmd.sendall(HEADER.pack(Kind.STDIN_EOF, 0, 0))  # and yet slurmd may write

    slurmd.close()
    finishing.join(timeout=10)
    assert not finishing.is_alive()  # stepd closes once slurmd has
    assert kinds == [Kind.EXITED, Kind.DONE]
    assert link.sock is None
    os.close(lost_fd)
