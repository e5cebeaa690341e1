"""The cluster key and the signatures made with it.

The controller signs step credentials with an HMAC-SHA256 over the exact
bytes it sends; a node agent checks the signature over the bytes it
receives before it launches anything, so no re-encoding can change what was
signed. The key lives in ``slurm.key`` beside slurm.conf (as Slurm's
``auth/slurm`` keeps it), mode 0600, made by ``minislurm keygen`` or
``minislurm cluster up``.

HMAC-SHA256 is computed here on CPython's own SHA-256 module alone: ``hmac``
and ``hashlib`` load OpenSSL, ~6 ms of the start-up of every command that
signs its request. That module is ``_sha256`` on Python 3.11 and ``_sha2`` from
3.12 on; it is chosen by version, with no fallback to ``hashlib``, so that a
slower start-up cannot go unnoticed (tests/unit/test_fast_imports.py).

Imports minislurm.errors and the standard library.
"""

from __future__ import annotations

import os
import sys

from minislurm.errors import ClusterKeyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
elif sys.version_info >= (3, 12):
    from _sha2 import sha256  # 3.12 merged _sha256 and _sha512 into _sha2
else:
    from _sha256 import sha256

KEY_FILE = "slurm.key"
KEY_BYTES = 32
_BLOCK = 64  # SHA-256's block size in bytes
_INNER = bytes(x ^ 0x36 for x in range(256))  # RFC 2104's ipad and opad, as translation tables
_OUTER = bytes(x ^ 0x5C for x in range(256))


def key_path(conf_path: str) -> str:
    """Where the cluster key of a slurm.conf lives.

    Args:
        conf_path: the slurm.conf path.

    Returns:
        ``slurm.key`` in the same directory.
    """
    return os.path.join(os.path.dirname(os.path.abspath(conf_path)), KEY_FILE)


def generate_key(path: str) -> None:
    """Write a new random key, readable by its owner only (an existing key is kept).

    Args:
        path: the key file.
    """
    if os.path.exists(path):
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(os.urandom(KEY_BYTES).hex() + "\n")  # secrets.token_hex, without its imports


def load_key(path: str) -> bytes:
    """Read the cluster key.

    Args:
        path: the key file.

    Returns:
        The key bytes.

    Raises:
        ClusterKeyError: missing, empty, or readable by others than its owner.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as err:
        raise ClusterKeyError(
            f"cannot read the cluster key {path}: {err.strerror} (run `minislurm keygen`)"
        ) from None
    with os.fdopen(fd) as f:
        if os.fstat(f.fileno()).st_mode & 0o077:
            raise ClusterKeyError(
                f"the cluster key {path} must not be readable by others (chmod 600)"
            )
        text = f.read().strip()
    if len(text) < 32:
        raise ClusterKeyError(f"the cluster key {path} is too short")
    return text.encode()


def sign(key: bytes, payload: bytes) -> bytes:
    """The signature of ``payload``.

    Args:
        key: the cluster key.
        payload: the bytes to sign.

    Returns:
        HMAC-SHA256 of the payload (RFC 2104).
    """
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(key.translate(_INNER) + payload).digest()
    return sha256(key.translate(_OUTER) + inner).digest()


def verify(key: bytes, payload: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the key's signature of ``payload`` (constant time).

    Args:
        key: the cluster key.
        payload: the bytes received.
        signature: the signature received.

    Returns:
        True when it matches.
    """
    import hmac  # its compare_digest; only receivers pay its import

    return hmac.compare_digest(sign(key, payload), signature)
