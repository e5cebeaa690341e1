"""The pseudo-terminal of an ``srun --pty`` task, as stepd makes and drives it.

stepd opens a pty pair as the job's user (so the slave is the user's),
sets its window size, and starts the task through posix_spawn in a session
of its own (``setsid``) that opens the slave by name as its stdin: a
session leader without a terminal that opens one gets it as its
controlling terminal, as ``login_tty`` would do after a fork. stdout and
stderr are the same slave. stepd keeps the master: what the task writes is
read there, srun's keystrokes are written there (the line discipline on the
node echoes them and turns Ctrl-C into SIGINT for the foreground process
group), and a window-size change set there (TIOCSWINSZ) sends SIGWINCH to
that group. Closing the master hangs the terminal up: its session gets
SIGHUP, as when an ssh connection drops.

Imports the standard library only: stepd runs this as the job's user.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios

WINSIZE = struct.Struct("HHHH")  # struct winsize: rows, columns, x and y pixels


class Terminal:
    """A pty pair: the master stepd keeps, the slave the task opens by name.

    stepd holds ``slave`` (not a controlling terminal of its own: openpty
    opens it with O_NOCTTY) until the task is started, writing there what
    goes wrong before the task runs, then closes it: once the task and its
    children have closed it too, reading the master fails (EIO).

    Args:
        rows: the window's rows (0: leave the kernel's default).
        cols: its columns.

    Raises:
        OSError: no pty could be made.
    """

    def __init__(self, rows: int, cols: int) -> None:
        self.master, self.slave = os.openpty()
        try:
            self.slave_name = os.ttyname(self.slave)
            if rows and cols:
                set_window(self.master, rows, cols)
        except OSError:
            os.close(self.master)
            os.close(self.slave)
            raise
        os.set_blocking(self.master, False)

    def file_actions(self) -> list[tuple[int, ...] | tuple[int, int, str, int, int]]:
        """posix_spawn's file actions giving the task the slave as stdin, stdout and stderr.

        With ``setsid=True`` they run after the new session is made, so the
        open makes the slave the task's controlling terminal.

        Returns:
            The actions.
        """
        return [
            (os.POSIX_SPAWN_OPEN, 0, self.slave_name, os.O_RDWR, 0),
            (os.POSIX_SPAWN_DUP2, 0, 1),
            (os.POSIX_SPAWN_DUP2, 0, 2),
        ]


def set_window(fd: int, rows: int, cols: int) -> None:
    """Set a terminal's window size (its foreground process group gets SIGWINCH).

    Args:
        fd: the pty's master (or any descriptor of the terminal).
        rows: rows.
        cols: columns.

    Raises:
        OSError: ``fd`` is not a terminal.
    """
    fcntl.ioctl(fd, termios.TIOCSWINSZ, WINSIZE.pack(rows, cols, 0, 0))
