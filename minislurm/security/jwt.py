"""JSON Web Tokens (HS256) for HTTP callers: ``scontrol token`` and the metrics endpoints.

As Slurm's ``auth/jwt``: a token names a user (claim ``sun``), when it was
issued (``iat``) and when it expires (``exp``), signed with HMAC-SHA256 by
the controller's key (the cluster key). A client sends it in the
``X-SLURM-USER-TOKEN`` header.

Imports minislurm.errors, minislurm.security.cred and the standard library.
"""

from __future__ import annotations

import base64
import json

from minislurm.errors import CredentialError
from minislurm.security import cred

HEADER = {"alg": "HS256", "typ": "JWT"}
DEFAULT_LIFESPAN = 1800  # seconds, as Slurm's scontrol token


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(key: bytes, user: str, lifespan: int, now: float) -> str:
    """A signed token for a user.

    Args:
        key: the signing key.
        user: the user's name.
        lifespan: seconds it is good for.
        now: the time it is issued.

    Returns:
        ``header.claims.signature``, base64url each.
    """
    claims = {"exp": int(now) + lifespan, "iat": int(now), "sun": user}
    head = _b64(json.dumps(HEADER, separators=(",", ":")).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = cred.sign(key, f"{head}.{body}".encode())
    return f"{head}.{body}.{_b64(signature)}"


def decode(key: bytes, token: str, now: float) -> str:
    """The user a token names, once its signature and age are checked.

    Args:
        key: the signing key.
        token: the token as received.
        now: the time.

    Returns:
        The user's name.

    Raises:
        CredentialError: malformed, not signed with ``key``, not HS256, or expired.
    """
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise CredentialError("Invalid token")
    try:
        head = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
        signature = _unb64(parts[2])
    except (ValueError, UnicodeDecodeError):
        raise CredentialError("Invalid token") from None
    if not isinstance(head, dict) or head.get("alg") != "HS256":
        raise CredentialError("Invalid token")
    if not cred.verify(key, f"{parts[0]}.{parts[1]}".encode(), signature):
        raise CredentialError("Invalid token signature")
    if not isinstance(claims, dict) or not isinstance(claims.get("sun"), str):
        raise CredentialError("Invalid token")
    expires = claims.get("exp")
    if not isinstance(expires, int) or expires < now:
        raise CredentialError("Token expired")
    return str(claims["sun"])
