"""Tokens for HTTP callers (``scontrol token``), and who may read the metrics with one.

A user gets a token for themselves; root and SlurmUser may get one for
anyone (Slurm's ``scontrol token username=``). The metrics endpoints are
open to whoever reaches them unless ``MetricsAuthUsers`` is set (then
only those users, root and SlurmUser) or ``PrivateData`` is (then root and
SlurmUser alone, unless ``MetricsParameters=ignore_private_data``): as
Slurm 25.11's metrics.

Imports minislurm only; no gRPC server, no clock (times are arguments).
"""

from __future__ import annotations

import pwd
from collections.abc import Container

from minislurm.config import SlurmConfig
from minislurm.errors import CredentialError, InvalidRequest, PermissionDenied
from minislurm.security import jwt

MAX_LIFESPAN = 365 * 24 * 3600  # seconds


def user_name(uid: int) -> str:
    """A uid's name (the uid as text when it has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def issue(
    key: bytes,
    operators: Container[int],
    requester_uid: int,
    username: str,
    lifespan: int,
    now: float,
) -> str:
    """``scontrol token [lifespan=N] [username=NAME]``.

    Args:
        key: the signing key.
        operators: uids that may ask for another user's token (root, SlurmUser).
        requester_uid: who asks.
        username: for whom ("": the requester).
        lifespan: seconds (0: Slurm's default, 1800).
        now: the time.

    Returns:
        The token.

    Raises:
        PermissionDenied: a token for someone else, asked by an ordinary user.
        InvalidRequest: a lifespan beyond a year.
    """
    own = user_name(requester_uid)
    if username and username != own and requester_uid not in operators:
        raise PermissionDenied("Access/permission denied")
    if lifespan > MAX_LIFESPAN:
        raise InvalidRequest(f"Invalid lifespan {lifespan}")
    return jwt.encode(key, username or own, lifespan or jwt.DEFAULT_LIFESPAN, now)


class MetricsAccess:
    """Who may read the metrics endpoints.

    Args:
        conf: MetricsAuthUsers, MetricsParameters, PrivateData and SlurmUser.
        key: what tokens are signed with.
    """

    def __init__(self, conf: SlurmConfig, key: bytes) -> None:
        self._key = key
        self.users = frozenset({"root", conf.slurm_user, *conf.metrics_auth_users})
        ignore = "ignore_private_data" in conf.metrics_parameters
        self.restricted = bool(conf.metrics_auth_users) or (bool(conf.private_data) and not ignore)

    def check(self, token: str | None, now: float) -> str:
        """Whether a caller with this token may read.

        Args:
            token: its ``X-SLURM-USER-TOKEN`` header (None: none sent).
            now: the time.

        Returns:
            "" when it may; else the HTTP status to answer.
        """
        if not self.restricted:
            return ""
        if not token:
            return "401 Unauthorized"
        try:
            user = jwt.decode(self._key, token, now)
        except CredentialError:
            return "401 Unauthorized"
        return "" if user in self.users else "403 Forbidden"
