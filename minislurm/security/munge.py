"""``AuthType=auth/munge``: credentials made and checked by the munge daemon.

``munge -s METHOD`` makes a credential whose payload is the method path;
``unmunge`` checks it and reports the uid and gid munged saw on the local
socket, the encoding host and time. munged does the rest: its own key
(``/etc/munge/munge.key``), TTL and replay cache. Each call runs one short
process (a few milliseconds).

Imports minislurm.security.auth and the standard library.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess

from minislurm.security.auth import AuthError, Identity

PREFIX = "MUNGE:"
TIMEOUT = 10.0
_FIELD = re.compile(r"^([A-Z_]+):\s*(.*?)\s*$")
_ID = re.compile(r"\((\d+)\)")


def running() -> bool:
    """Whether the munge commands are installed and munged answers."""
    if shutil.which("munge") is None or shutil.which("unmunge") is None:
        return False
    try:
        done = subprocess.run(["munge", "-n"], capture_output=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def sign(method: str) -> str:
    """A munge credential for one call of ``method``.

    Raises:
        AuthError: munge is missing or munged did not answer.
    """
    try:
        done = subprocess.run(
            ["munge", "-s", method], capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise AuthError(f"munge: {err}") from None
    if done.returncode != 0:
        raise AuthError(f"munge: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()


def parse(output: str, method: str) -> Identity:
    """The caller named by ``unmunge``'s output for a call of ``method``.

    Raises:
        AuthError: a status other than success, or a payload for another method.
    """
    head, _, payload = output.partition("\n\n")
    fields = {}
    for line in head.splitlines():
        match = _FIELD.match(line)
        if match:
            fields[match.group(1)] = match.group(2)
    status = fields.get("STATUS", "")
    if not status.startswith("Success"):
        raise AuthError(f"munge: {status or 'no status'}")
    if payload.rstrip("\n") != method:
        raise AuthError("munge credential for another method")
    uid, gid = _ID.search(fields.get("UID", "")), _ID.search(fields.get("GID", ""))
    if uid is None or gid is None:
        raise AuthError("munge: no UID/GID")
    return Identity(int(uid.group(1)), int(gid.group(1)), fields.get("ENCODE_HOST", ""), 0.0)


async def verify(token: str, method: str) -> Identity:
    """Check a munge credential for a call of ``method`` (a verifier for security.authgrpc).

    Raises:
        AuthError: not a munge credential, or munged refused it (forged,
            expired, replayed), or for another method.
    """
    if not token.startswith(PREFIX) or len(token) > 4096:
        raise AuthError("not a munge credential")
    try:
        proc = await asyncio.create_subprocess_exec(
            "unmunge",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(token.encode()), TIMEOUT)
    except (OSError, TimeoutError) as err:
        raise AuthError(f"unmunge: {err}") from None
    return parse(out.decode(errors="replace"), method)
