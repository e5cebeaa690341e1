"""The jobs' hosts file: which node names need a line, and the namespace that shows it.

The namespace tests fork a child that enters the namespace (as root: a mount
namespace; unprivileged: a user namespace first) and execs ``getent``; the
host's own ``/etc/hosts`` must read the same before and after.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodeagent import hostsfile

PR_SET_DUMPABLE = 4


def test_only_nodes_with_an_address_and_a_name_the_host_does_not_know_get_a_line() -> None:
    system = "127.0.0.1 localhost vm  # the host\n10.0.0.2 n2 n2.cluster\n# 10.0.0.3 n3\n"
    nodes = [("n1", "127.0.0.1"), ("N2", "10.0.0.2"), ("n3", "10.0.0.3"), ("n4", "fe80::4")]
    nodes += [("n5", "n5.cluster"), ("vm", "127.0.0.1")]
    assert hostsfile.missing_entries(nodes, system) == [
        "127.0.0.1 n1",
        "10.0.0.3 n3",
        "fe80::4 n4",
    ]


def test_the_file_is_the_hosts_own_followed_by_the_missing_nodes(tmp_path: Path) -> None:
    path = hostsfile.write_for([("zz-node-1", "127.0.0.1")], str(tmp_path), "local")
    text = Path(path).read_text()
    assert text.startswith(Path("/etc/hosts").read_text())
    assert text.endswith("\n127.0.0.1 zz-node-1\n")
    assert Path(path).stat().st_mode & 0o777 == 0o644


def test_no_file_when_every_name_resolves(tmp_path: Path) -> None:
    (tmp_path / hostsfile.FILE_NAME).write_text("left by an earlier slurmd\n")
    assert hostsfile.write_for([("n1", "n1.example")], str(tmp_path), "local") == ""
    assert not (tmp_path / hostsfile.FILE_NAME).exists()


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A directory an unprivileged child can reach (pytest's tmp dirs are root-only)."""
    path = Path(tempfile.mkdtemp(prefix="minislurm-hosts-", dir="/tmp"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _getent_in_namespace(hosts: Path, name: str, uid: int | None) -> tuple[int, str]:
    """Fork; the child (as ``uid`` if given) enters the namespace and execs getent."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.dup2(write_end, 1)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                # As a process exec'd as that user is: the uid change made
                # /proc/self root's, which would bar writing its uid_map.
                ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            hostsfile.enter_namespace(str(hosts))
            os.execvp("getent", ["getent", "hosts", name])
        except BaseException as error:
            os.write(2, f"{error}\n".encode())
        os._exit(99)
    os.close(write_end)
    with os.fdopen(read_end) as out:
        text = out.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), text


@pytest.mark.parametrize("who", ["this user", "an unprivileged user"])
def test_the_job_sees_the_names_and_the_host_does_not(public_dir: Path, who: str) -> None:
    uid = None
    if who == "an unprivileged user":
        if os.getuid() != 0:
            pytest.skip("this user is the unprivileged case")
        uid = 65534
    name = f"zz-node-{os.getpid()}"
    before = Path("/etc/hosts").read_bytes()
    hosts = public_dir / "hosts"
    hosts.write_text(f"{before.decode()}\n127.0.0.7 {name}\n")
    hosts.chmod(0o644)
    code, out = _getent_in_namespace(hosts, name, uid)
    assert code == 0 and out.split() == ["127.0.0.7", name]
    assert Path("/etc/hosts").read_bytes() == before
    code, out = _getent_in_namespace(Path("/etc/hosts"), name, uid)
    assert code == 2 and out == ""
