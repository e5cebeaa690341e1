"""The credential kiosk: signs for local users who cannot read the key.

A daemon that holds the cluster key (slurmctld; a node agent where no
slurmctld serves one) listens on a Unix socket
(mode 0666, ``auth.socket`` beside the key). A client writes one method path
and a newline; the kiosk asks the kernel who is on the other end
(``SO_PEERCRED``) and answers with a credential for that uid and gid
(``minislurm.security.auth.make``) and a newline. The client's own claims play no part,
so a user can only ever get credentials for themselves (Slurm's ``sack``).

Imports minislurm.security.auth and the standard library.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
import time

from minislurm.security import auth

log = logging.getLogger(__name__)

_UCRED = struct.Struct("3i")  # pid, uid, gid
MAX_REQUEST = 512
READ_TIMEOUT = 5.0


async def serve(path: str, key: bytes) -> asyncio.AbstractServer:
    """Start the kiosk at ``path`` (a stale socket there is replaced).

    Args:
        path: the Unix socket.
        key: the cluster key.

    Returns:
        The listening server (close it to stop).
    """
    host = socket.gethostname()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            sock = writer.get_extra_info("socket")
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
            pid, uid, gid = _UCRED.unpack(raw)
            line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT)
            method = line.decode(errors="replace").strip()
            if not line:  # a daemon looking whether a kiosk answers (serve_unless_served)
                return
            if not line.endswith(b"\n") or not method.startswith("/") or len(line) > MAX_REQUEST:
                log.warning("auth kiosk: bad request from pid=%d uid=%d", pid, uid)
                writer.write(b"error: bad request\n")
            else:
                writer.write(auth.make(key, uid, gid, host, time.time(), method).encode() + b"\n")
            await writer.drain()
        except (OSError, TimeoutError, ValueError) as err:
            log.debug("auth kiosk: %s", err)
        finally:
            writer.close()

    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    server = await asyncio.start_unix_server(answer, path, limit=MAX_REQUEST)
    os.chmod(path, 0o666)
    return server


async def serve_unless_served(path: str, key: bytes) -> asyncio.AbstractServer | None:
    """Start the kiosk at ``path`` unless one already answers there.

    A node agent calls this: on a compute node it is the users' kiosk; on a
    host it shares with slurmctld (one configuration directory), the
    controller's serves.

    Returns:
        The server started, or None.
    """
    try:
        _, writer = await asyncio.open_unix_connection(path)
    except OSError:
        return await serve(path, key)
    writer.close()
    return None
