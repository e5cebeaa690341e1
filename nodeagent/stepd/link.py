"""A step's stepd's connection to slurmd: frames queued out, frames parsed in, or kept.

Imports the standard library, nodeagent.stepd.common and nodeagent.stepd.frames.
"""

from __future__ import annotations

import itertools
import os
import select
import socket
import time
from collections import deque

from nodeagent.stepd.common import log
from nodeagent.stepd.frames import HEADER, MAX_PAYLOAD, Kind, encode_frame, unix_path

READ_SIZE = 64 << 10  # one read of a task's pipe (a pipe's default capacity)
OUT_LIMIT = 1 << 20  # frames queued for slurmd before task pipes are left unread
STDIN_LIMIT = 1 << 20  # stdin buffered for tasks before slurmd's frames are left unread
LOST_OUTPUT_LIMIT = 64 << 20  # output kept in lost-output once slurmd is gone
CONNECT_SECONDS = 10.0
FLUSH_SECONDS = 10.0  # for the last frames, once the step is done


class AgentLink:
    """stepd's end of the connection to slurmd: frames queued out, frames parsed in.

    Without a connection (lost, or closed by slurmd) frames are appended to
    ``lost-output`` instead, in the same format; output (STDOUT/STDERR)
    beyond LOST_OUTPUT_LIMIT bytes is dropped and counted. A batch script's
    stepd has neither (``sock`` None, ``lost_fd`` -1): its frames are dropped.
    """

    def __init__(self, sock: socket.socket | None, lost_fd: int) -> None:
        self.sock = sock
        self.lost_fd = lost_fd
        self.lost_bytes = 0
        self.dropped_bytes = 0
        self.queued = 0
        self._out: deque[bytes] = deque()
        self._sent = 0  # bytes of _out[0] already sent
        self._in = bytearray()

    def fileno(self) -> int:
        """The socket's descriptor, -1 once lost."""
        return self.sock.fileno() if self.sock is not None else -1

    def send(self, kind: int, task_id: int, payload: bytes = b"") -> None:
        """Queue a frame for slurmd (or keep it in lost-output).

        Args:
            kind: a Kind.
            task_id: the task, or ALL_TASKS.
            payload: the frame's payload.
        """
        frame = encode_frame(kind, task_id, payload)
        if self.sock is None:
            self._keep(frame)
            return
        self._out.append(frame)
        self.queued += len(frame)

    def flush(self) -> None:
        """Send what the socket takes now, without blocking."""
        while self._out and self.sock is not None:
            head = memoryview(self._out[0])[self._sent :]
            buffers: list[bytes | memoryview] = [head, *itertools.islice(self._out, 1, 256)]
            try:
                sent = self.sock.sendmsg(buffers, [], socket.MSG_NOSIGNAL)
            except BlockingIOError:
                return
            except OSError as error:
                self.lose(f"send failed: {error}")
                return
            finally:
                head.release()
            self.queued -= sent
            sent += self._sent
            while self._out and sent >= len(self._out[0]):
                sent -= len(self._out.popleft())
            self._sent = sent

    def receive(self) -> list[tuple[int, int, bytes]]:
        """Read what slurmd sent, without blocking.

        Returns:
            The complete frames received: (kind, task id, payload).
        """
        if self.sock is None:
            return []
        try:
            data = self.sock.recv(READ_SIZE)
        except BlockingIOError:
            return []
        except OSError as error:
            self.lose(f"receive failed: {error}")
            return []
        if not data:
            self.lose("slurmd closed the connection")
            return []
        self._in += data
        frames = []
        while len(self._in) >= HEADER.size:
            kind, task_id, size = HEADER.unpack_from(self._in)
            if size > MAX_PAYLOAD:
                self.lose(f"protocol error: frame of {size} bytes")
                break
            if len(self._in) < HEADER.size + size:
                break
            frames.append((kind, task_id, bytes(self._in[HEADER.size : HEADER.size + size])))
            del self._in[: HEADER.size + size]
        return frames

    def lose(self, reason: str) -> None:
        """Give up the connection; what was queued goes to lost-output.

        Args:
            reason: for stepd's log.
        """
        if self.sock is None:
            return
        log(f"connection to slurmd lost ({reason}); the step runs on")
        self.sock.close()
        self.sock = None
        # The first frame may be partly delivered; it is kept whole (at most a duplicate).
        for frame in self._out:
            self._keep(frame)
        self._out.clear()
        self._sent = self.queued = 0

    def finish(self, timeout: float) -> None:
        """Send the last frames, then close once slurmd has (waiting up to ``timeout``).

        slurmd may still write (stdin's end, a signal) until it has read the
        last frame. Closed before that, this end would make its write fail,
        and a failed write ends slurmd's reading too, before the last frames
        (a task's exit). So this end only stops writing, and reads and drops
        what comes until slurmd closes its end.

        Args:
            timeout: seconds slurmd has to take the frames and close.
        """
        deadline = time.monotonic() + timeout
        while self._out and self.sock is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.lose("slurmd does not read")
                break
            poller = select.poll()
            poller.register(self.sock.fileno(), select.POLLOUT)
            poller.poll(left * 1000)
            self.flush()
        if self.sock is None:
            return
        try:
            self.sock.shutdown(socket.SHUT_WR)
            while (left := deadline - time.monotonic()) > 0:
                poller = select.poll()
                poller.register(self.sock.fileno(), select.POLLIN)
                if poller.poll(left * 1000) and not self._drop_input():
                    break
        except OSError:
            pass
        self.sock.close()
        self.sock = None

    def _drop_input(self) -> bool:
        """Read and drop what slurmd sent; False once it has closed its end."""
        assert self.sock is not None
        try:
            return bool(self.sock.recv(READ_SIZE))
        except BlockingIOError:
            return True

    def _keep(self, frame: bytes) -> None:
        if self.lost_fd < 0:
            return  # nowhere to keep it: a batch script's stepd, which slurmd follows by its files
        if frame[0] in (Kind.STDOUT, Kind.STDERR):
            if self.lost_bytes + len(frame) > LOST_OUTPUT_LIMIT:
                self.dropped_bytes += len(frame) - HEADER.size
                return
        try:
            view = memoryview(frame)
            while view:
                view = view[os.write(self.lost_fd, view) :]
            self.lost_bytes += len(frame)
        except OSError as error:
            self.dropped_bytes += len(frame) - HEADER.size
            log(f"lost-output: {error}")


def connect_agent(stepdir: str, name: str) -> socket.socket:
    """Connect to slurmd's socket in the step's directory.

    Args:
        stepdir: the step's spool directory.
        name: the socket's file name there.

    Returns:
        The connected, non-blocking socket.

    Raises:
        OSError: nobody listens there.
    """
    address, dir_fd = unix_path(stepdir, name)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(address)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    finally:
        if dir_fd >= 0:
            os.close(dir_fd)
    return sock
