"""Node names that resolve inside every job: a hosts file of the cluster's nodes, per job.

Training scripts take their rendezvous host from the node list
(``scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1``, torchrun's
c10d endpoint, DeepSpeed hostfiles, Lightning), and our own ``MASTER_ADDR``
is the step's first node by name: node names must resolve inside the job. On
a site they do (DNS, or the hosts files of the machines). Where slurm.conf
gives a node an address (``NodeAddr=``) under a name this host cannot look up
in its ``/etc/hosts`` — a local cluster whose nodes are all ``127.0.0.1``, or
machines without DNS for their node names — slurmd writes a hosts file: this
host's ``/etc/hosts`` followed by a line per such node (:func:`write_for`).
Each job's stepd then enters a mount namespace of its own in which that file
is bind-mounted over ``/etc/hosts`` (:func:`enter_namespace`), before the
job's processes start: they, and only they, see the names. The machine's own
``/etc/hosts`` is never written, and the mount never propagates out of the
job's namespace.

As root (a real slurmd), the namespace is a mount namespace alone. An
unprivileged slurmd (a local cluster started by a user) first enters a user
namespace that maps its own uid and gid onto themselves, which is what lets
it mount; its jobs keep their uid, but set-user-id programs (sudo) do not
work inside them. Where the kernel refuses namespaces (a container without
CAP_SYS_ADMIN, user namespaces disabled), the job runs without the names and
stepd logs why.

Imports the standard library only (stepd imports it).
"""

from __future__ import annotations

import ctypes
import os
import socket
from collections.abc import Iterable

SYSTEM_HOSTS = "/etc/hosts"
FILE_NAME = "hosts"  # in slurmd's spool directory

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_SLAVE = 0x80000


def known_names(hosts_text: str) -> set[str]:
    """The host names (and aliases) a hosts file gives an address to.

    Args:
        hosts_text: the file's content.

    Returns:
        The names, lower case.
    """
    names: set[str] = set()
    for line in hosts_text.splitlines():
        fields = line.partition("#")[0].split()
        names.update(name.lower() for name in fields[1:])
    return names


def missing_entries(nodes: Iterable[tuple[str, str]], hosts_text: str) -> list[str]:
    """Hosts-file lines for the nodes whose names this host cannot look up.

    A node needs a line when slurm.conf gives it an IP address (``NodeAddr``)
    and the host's hosts file does not know its name. A node whose address
    is itself a name is left to the resolver.

    Args:
        nodes: ``(name, address)`` of every node of the cluster.
        hosts_text: the host's ``/etc/hosts``.

    Returns:
        ``"address name"`` lines, in the nodes' order.
    """
    known = known_names(hosts_text)
    lines = []
    for name, addr in nodes:
        if name.lower() in known:
            continue
        if _is_address(addr):
            lines.append(f"{addr} {name}")
    return lines


def _is_address(text: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, text)
        except OSError:
            continue
        return True
    return False


def write_for(nodes: Iterable[tuple[str, str]], spool_dir: str, cluster: str) -> str:
    """Write the hosts file jobs of this node see, if any node name needs one.

    Args:
        nodes: ``(name, address)`` of every node of the cluster.
        spool_dir: slurmd's spool directory (the file goes there).
        cluster: the cluster's name, for the file's comment.

    Returns:
        The file's path; "" when every name resolves already (no file, and
        jobs run without a namespace of their own).

    Raises:
        OSError: the file could not be written.
    """
    try:
        with open(SYSTEM_HOSTS, encoding="utf-8", errors="replace") as f:
            system = f.read()
    except FileNotFoundError:
        system = ""
    path = os.path.join(spool_dir, FILE_NAME)
    lines = missing_entries(nodes, system)
    if not lines:
        if os.path.exists(path):
            os.unlink(path)
        return ""
    if system and not system.endswith("\n"):
        system += "\n"
    text = f"{system}# The nodes of cluster {cluster}, as slurm.conf names them (slurmd)\n"
    temporary = f"{path}.new"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text + "\n".join(lines) + "\n")
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)
    return path


def enter_namespace(hosts_file: str) -> None:
    """Make ``hosts_file`` this process's ``/etc/hosts``, and its future children's.

    Must be called while the process has one thread, before it drops to the
    job's user (as root) or starts the job's processes.

    Args:
        hosts_file: the file slurmd wrote (:func:`write_for`).

    Raises:
        OSError: the kernel refused a namespace or the mount.
    """
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")

    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    else:
        check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare(CLONE_NEWUSER|CLONE_NEWNS)")
        maps = (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1"))
        for name, text in maps:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    # Mounts of the host still reach the job; the job's never reach the host.
    check(libc.mount(None, b"/", None, _MS_REC | _MS_SLAVE, None), "mount --make-rslave /")
    check(
        libc.mount(hosts_file.encode(), SYSTEM_HOSTS.encode(), None, _MS_BIND, None),
        f"mount --bind {hosts_file} {SYSTEM_HOSTS}",
    )
