"""Who is calling: the credential every RPC carries, made and checked.

A credential (Slurm's ``auth/slurm``; the metadata entry ``x-slurm-auth``)
is an HMAC-SHA256 with the cluster key over the caller's uid and gid, the
host it was made on, the time, a random nonce and the RPC's method path.
The receiver checks the signature, that the time is within ``TTL`` seconds
of its own clock, that the method is the one being called, and that the
nonce was not seen before (:class:`ReplayCache`).

Who may sign. The key (``slurm.key``, mode 0600) is readable by root and
the daemons' user only. Those callers sign with it directly
(:class:`KeySigner`). Every other user asks the local kiosk
(``minislurm.security.authd``, served by slurmctld beside the key as
``auth.socket``; Slurm 23.11's ``sack`` socket), which learns the caller's
uid and gid from the kernel (``SO_PEERCRED``), never from the caller, and
returns a credential for that identity (:class:`KioskSigner`). With
``AuthType=auth/munge`` the munge daemon plays both parts
(``minislurm.security.munge``).

What this stops: a user claiming another uid or gid (the uid in a request
is replaced by the authenticated one; see ``minislurm.security.authgrpc``); forged
credentials; credentials replayed after use or after ``TTL``, also to a
receiver restarted in between (its cache refuses credentials issued before
it started, which its predecessor may have seen); a credential for one
method used for another; anyone without the key impersonating the
controller to a node agent or a node agent to the controller.

What it does not stop: root, or anyone who can read ``slurm.key``, on any
host; an on-path attacker who can read or rewrite traffic (the request body
is not signed and nothing is encrypted: use TLS on untrusted networks). The
host is what the signer claims, recorded for the log, not verified. A
signer whose clock lags the receiver's by d seconds is refused for the first
d seconds after the receiver starts.

Imports minislurm.security.cred, minislurm.errors and the standard library.
"""

from __future__ import annotations

import _socket  # not socket: its enum machinery costs every command ~15 ms (as wire.h2grpc)
import os
import time

from minislurm.errors import ClusterKeyError, MinislurmError
from minislurm.security import cred

TYPE_CHECKING = False  # typing's own constant costs its import (collections.abc, ~3 ms)
if TYPE_CHECKING:
    from collections.abc import Callable

    Signer = Callable[[str], str]
    """Makes the credential for one call of a method path."""

HEADER = "x-slurm-auth"
TTL = 60.0  # seconds a credential is valid either side of the receiver's clock (auth/slurm's)
SOCKET_FILE = "auth.socket"
MAX_TOKEN = 1024
MAX_REPLAY_ENTRIES = 1_000_000


class AuthError(MinislurmError):
    """A credential that is missing, malformed, forged, expired or replayed (UNAUTHENTICATED)."""


class Identity:
    """The authenticated caller of one RPC (uid, gid, claimed host, time issued)."""

    __slots__ = ("gid", "host", "issued", "uid")

    def __init__(self, uid: int, gid: int, host: str, issued: float) -> None:
        self.uid = uid
        self.gid = gid
        self.host = host
        self.issued = issued


def socket_path(conf_path: str) -> str:
    """Where the kiosk of a slurm.conf listens: ``auth.socket`` beside the key."""
    return os.path.join(os.path.dirname(os.path.abspath(conf_path)), SOCKET_FILE)


def _message(uid: int, gid: int, host: str, issued: str, nonce: str, method: str) -> bytes:
    return "\n".join(("v1", str(uid), str(gid), host, issued, nonce, method)).encode()


def make(key: bytes, uid: int, gid: int, host: str, issued: float, method: str) -> str:
    """A credential for one call.

    Args:
        key: the cluster key.
        uid: the caller's uid.
        gid: the caller's gid.
        host: the host it is made on.
        issued: the time (seconds since the epoch).
        method: the method path, ``/minislurm.v1.SlurmController/CancelJobs``.

    Returns:
        The metadata value, ``v1:uid:gid:host:time:nonce:signature``.
    """
    host = host.replace(":", "_")
    stamp = f"{issued:.3f}"
    nonce = os.urandom(16).hex()
    signature = cred.sign(key, _message(uid, gid, host, stamp, nonce, method)).hex()
    return f"v1:{uid}:{gid}:{host}:{stamp}:{nonce}:{signature}"


class ReplayCache:
    """Nonces of credentials still valid, each forgotten once its credential expires.

    Args:
        limit: the most nonces held; when full, new credentials are refused
            until old ones expire, so memory stays bounded under a flood
            (about 200 bytes each).
        since: when the receiver started: credentials issued before are
            refused, as an earlier run of the receiver may have seen them
            (the cache lives in memory).
    """

    def __init__(self, limit: int = MAX_REPLAY_ENTRIES, since: float = 0.0) -> None:
        self.limit = limit
        self.since = since
        self._seen: set[str] = set()
        self._expiry: list[tuple[float, str]] = []  # a heap

    def __len__(self) -> int:
        return len(self._seen)

    def remember(self, nonce: str, expires: float, now: float) -> None:
        """Record the nonce of a credential valid until ``expires``.

        Raises:
            AuthError: it was seen before, or the cache is full.
        """
        import heapq  # only receivers keep a cache: the commands skip its import

        while self._expiry and self._expiry[0][0] < now:
            self._seen.discard(heapq.heappop(self._expiry)[1])
        if nonce in self._seen:
            raise AuthError("credential replayed")
        if len(self._seen) >= self.limit:
            raise AuthError("too many credentials in flight; try again")
        self._seen.add(nonce)
        heapq.heappush(self._expiry, (expires, nonce))


def check(key: bytes, token: str, method: str, now: float, replay: ReplayCache) -> Identity:
    """Verify a credential for a call of ``method`` received at ``now``.

    Args:
        key: the cluster key.
        token: the metadata value.
        method: the method path being called.
        now: the receiver's clock.
        replay: nonces already used (the nonce is added on success).

    Returns:
        The caller.

    Raises:
        AuthError: malformed, forged, for another method, expired, from the
            future, or replayed.
    """
    if len(token) > MAX_TOKEN:
        raise AuthError("credential too long")
    parts = token.split(":")
    if len(parts) != 7 or parts[0] != "v1":
        raise AuthError("malformed credential")
    _, uid_s, gid_s, host, stamp, nonce, signature = parts
    try:
        uid, gid, issued = int(uid_s), int(gid_s), float(stamp)
        got = bytes.fromhex(signature)
    except (ValueError, TypeError):
        raise AuthError("malformed credential") from None
    if not (0 <= uid < 2**32 and 0 <= gid < 2**32) or len(nonce) != 32:
        raise AuthError("malformed credential")
    if not cred.verify(key, _message(uid, gid, host, stamp, nonce, method), got):
        raise AuthError("invalid credential signature (forged, other key or other method)")
    if issued < now - TTL:
        raise AuthError(f"credential expired ({now - issued:.0f} s old)")
    if issued > now + TTL:
        raise AuthError("credential issued in the future (clock skew)")
    if issued < replay.since:
        raise AuthError("credential issued before this daemon started (it may have been used)")
    replay.remember(nonce, issued + TTL, now)
    return Identity(uid, gid, host, issued)


class KeySigner:
    """Signs with the cluster key itself: for root and the daemons' user.

    Args:
        key: the cluster key.
        uid: the identity to sign for (default: this process's).
        gid: likewise.
    """

    def __init__(self, key: bytes, uid: int | None = None, gid: int | None = None) -> None:
        self.key = key
        self.uid = os.getuid() if uid is None else uid
        self.gid = os.getgid() if gid is None else gid
        self.host = _socket.gethostname()

    def __call__(self, method: str) -> str:
        return make(self.key, self.uid, self.gid, self.host, time.time(), method)


class KioskSigner:
    """Asks the local kiosk (``minislurm.security.authd``) for each credential.

    Args:
        path: the kiosk's Unix socket.
        timeout: seconds to wait for it.
    """

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout

    def __call__(self, method: str) -> str:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.path)
            sock.sendall(method.encode() + b"\n")
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = sock.recv(MAX_TOKEN)
                if not chunk:
                    break
                reply += chunk
        except OSError as err:
            raise AuthError(f"cannot get a credential from {self.path}: {err}") from None
        finally:
            sock.close()
        text = reply.decode(errors="replace").strip()
        if not text.startswith("v1:"):
            raise AuthError(f"the credential kiosk {self.path} refused: {text or 'no reply'}")
        return text


def signer_for(conf_path: str, auth_type: str | None = None) -> Signer:
    """How this process signs its calls to the cluster of ``conf_path``.

    Args:
        conf_path: the slurm.conf.
        auth_type: its ``AuthType`` (None: read it from the file).

    Returns:
        A munge signer under ``auth/munge``; else a :class:`KeySigner` when
        the key is readable, and a :class:`KioskSigner` otherwise.
    """
    if auth_type is None:
        from minislurm.conffile import read_client_config

        auth_type = read_client_config(conf_path).auth_type
    if auth_type == "auth/munge":
        from minislurm.security import munge

        return munge.sign
    try:
        return KeySigner(cred.load_key(cred.key_path(conf_path)))
    except ClusterKeyError:
        return KioskSigner(socket_path(conf_path))
