"""srun's own terminal under ``--pty``: raw mode for the step's life, and its size.

As Slurm's srun, it checks that its stdout is a terminal (TIOCGWINSZ; when
not, it says so and runs without a pty), sends that size with the launch
and again on each SIGWINCH, and puts its stdin in raw mode (``cfmakeraw``)
so that every keystroke, Ctrl-C and Ctrl-Z included, goes to the task's
terminal on the node, whose line discipline echoes and interprets it. The
terminal's settings are restored when the step ends, whichever way.

Imports the standard library only.
"""

from __future__ import annotations

import fcntl
import struct
import sys
import termios

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WINSIZE = struct.Struct("HHHH")  # struct winsize: rows, columns, x and y pixels
IFLAG, OFLAG, CFLAG, LFLAG, CC = 0, 1, 2, 3, 6  # indexes in tcgetattr's list


def window_size(fd: int) -> tuple[int, int]:
    """A terminal's window size.

    Args:
        fd: a descriptor of the terminal.

    Returns:
        (rows, columns).

    Raises:
        OSError: ``fd`` is not a terminal.
    """
    rows, cols, _, _ = WINSIZE.unpack(fcntl.ioctl(fd, termios.TIOCGWINSZ, bytes(WINSIZE.size)))
    return rows, cols


def pty_window(prog: str) -> tuple[int, int] | None:
    """The size of the terminal srun writes to, as ``--pty`` needs one.

    Args:
        prog: the command, for its messages.

    Returns:
        (rows, columns); None, after Slurm's two errors, when stdout is not a terminal.
    """
    try:
        return window_size(sys.stdout.fileno())
    except (OSError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) else str(err)
        sys.stderr.write(
            f"{prog}: error: ioctl(TIOCGWINSZ): {why}\n"
            f"{prog}: error: Not using a pseudo-terminal, disregarding --pty option\n"
        )
        return None


def raw(mode: list[Any]) -> list[Any]:
    """The settings of ``cfmakeraw`` applied to a terminal's settings.

    Args:
        mode: what ``termios.tcgetattr`` returned.

    Returns:
        A new list: no input or output processing, no echo, no signals from keys,
        8-bit characters, reads of one byte.
    """
    new = list(mode)
    new[IFLAG] = mode[IFLAG] & ~(
        termios.IGNBRK
        | termios.BRKINT
        | termios.PARMRK
        | termios.ISTRIP
        | termios.INLCR
        | termios.IGNCR
        | termios.ICRNL
        | termios.IXON
    )
    new[OFLAG] = mode[OFLAG] & ~termios.OPOST
    new[LFLAG] = mode[LFLAG] & ~(
        termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN
    )
    new[CFLAG] = (mode[CFLAG] & ~(termios.CSIZE | termios.PARENB)) | termios.CS8
    cc = list(mode[CC])
    cc[termios.VMIN], cc[termios.VTIME] = 1, 0
    new[CC] = cc
    return new


class RawMode:
    """A terminal put in raw mode, and its settings to restore.

    Args:
        fd: the terminal (srun's stdin); nothing is done when it is not one.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.saved: list[Any] | None = None

    def enter(self) -> None:
        """Save the terminal's settings and make it raw (again, after a stop)."""
        try:
            mode = termios.tcgetattr(self.fd)
        except termios.error:
            return  # not a terminal: bytes flow as they are
        if self.saved is None:
            self.saved = mode
        termios.tcsetattr(self.fd, termios.TCSANOW, raw(mode))

    def restore(self) -> None:
        """Give the terminal its settings back (once; later calls do nothing)."""
        if self.saved is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)
            except termios.error:
                pass  # the terminal went away
            self.saved = None
