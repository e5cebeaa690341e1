"""srun's terminal handling under --pty (cli/terminal.py), on a pty of the test's own."""

from __future__ import annotations

import os
import termios
from collections.abc import Iterator

import pytest

from cli import terminal
from nodeagent import ptyio


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, int]]:
    """A fresh pseudo-terminal: (master, slave)."""
    master, slave = os.openpty()
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


def test_raw_mode_is_cfmakeraw_and_restored(pty_pair: tuple[int, int]) -> None:
    _, slave = pty_pair
    before = termios.tcgetattr(slave)
    mode = terminal.RawMode(slave)
    mode.enter()
    now = termios.tcgetattr(slave)
    iflag, oflag, cflag, lflag, cc = now[0], now[1], now[2], now[3], now[6]
    for flag in (termios.ICRNL, termios.IXON, termios.BRKINT, termios.INLCR, termios.ISTRIP):
        assert not iflag & flag
    assert not oflag & termios.OPOST
    for flag in (termios.ECHO, termios.ICANON, termios.ISIG, termios.IEXTEN, termios.ECHONL):
        assert not lflag & flag
    assert cflag & termios.CSIZE == termios.CS8 and not cflag & termios.PARENB
    assert (cc[termios.VMIN], cc[termios.VTIME]) in ((1, 0), (b"\x01", b"\x00"))
    mode.enter()  # again, as after a SIGCONT: what is restored stays the first settings
    mode.restore()
    assert termios.tcgetattr(slave) == before
    mode.restore()  # a second restore changes nothing
    assert termios.tcgetattr(slave) == before


def test_raw_mode_leaves_what_is_not_a_terminal_alone() -> None:
    read_end, write_end = os.pipe()
    try:
        mode = terminal.RawMode(read_end)
        mode.enter()
        mode.restore()
        assert mode.saved is None
    finally:
        os.close(read_end)
        os.close(write_end)


def test_window_size_reads_what_the_node_side_sets(pty_pair: tuple[int, int]) -> None:
    master, slave = pty_pair
    ptyio.set_window(master, 41, 132)
    assert terminal.window_size(slave) == (41, 132)
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(OSError):
            terminal.window_size(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)
