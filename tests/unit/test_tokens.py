"""JWTs (scontrol token) and who may read the metrics endpoints with one."""

from __future__ import annotations

import os
import pwd

import pytest

from ctld.tokens import MetricsAccess, issue
from minislurm.config import SlurmConfig
from minislurm.errors import CredentialError, InvalidRequest, PermissionDenied
from minislurm.security import jwt

KEY = b"k" * 32
NOW = 1_800_000_000.0
IGNORE = ("ignore_private_data",)


def test_a_token_names_its_user_until_it_expires() -> None:
    token = jwt.encode(KEY, "alice", 60, NOW)
    assert token.count(".") == 2
    assert jwt.decode(KEY, token, NOW + 60) == "alice"
    with pytest.raises(CredentialError, match="expired"):
        jwt.decode(KEY, token, NOW + 61)
    with pytest.raises(CredentialError, match="signature"):
        jwt.decode(b"x" * 32, token, NOW)
    for bad in ("", "a.b", "a.b.c", token.replace(".", "!", 1)):
        with pytest.raises(CredentialError):
            jwt.decode(KEY, bad, NOW)


def test_users_get_their_own_tokens_and_operators_anyones() -> None:
    me = pwd.getpwuid(os.getuid()).pw_name
    assert jwt.decode(KEY, issue(KEY, {0}, os.getuid(), "", 0, NOW), NOW + 1799) == me
    with pytest.raises(CredentialError):  # Slurm's default lifespan: 1800 s
        jwt.decode(KEY, issue(KEY, {0}, os.getuid(), "", 0, NOW), NOW + 1801)
    assert jwt.decode(KEY, issue(KEY, {7}, 7, "bob", 10, NOW), NOW) == "bob"
    with pytest.raises(PermissionDenied):
        issue(KEY, {0}, 4242, "bob", 10, NOW)
    with pytest.raises(InvalidRequest):
        issue(KEY, {0}, 0, "", 10**9, NOW)


@pytest.mark.parametrize(
    ("conf", "user", "outcome"),
    [
        (SlurmConfig(), None, ""),  # open by default
        (SlurmConfig(private_data=("jobs",)), None, "401 Unauthorized"),
        (SlurmConfig(private_data=("jobs",)), "alice", "403 Forbidden"),
        (SlurmConfig(private_data=("jobs",)), "root", ""),
        (SlurmConfig(private_data=("jobs",), slurm_user="slurm"), "slurm", ""),
        (
            SlurmConfig(private_data=("jobs",), metrics_parameters=IGNORE),
            None,
            "",
        ),
        (SlurmConfig(metrics_auth_users=("alice",)), "alice", ""),
        (SlurmConfig(metrics_auth_users=("alice",)), "bob", "403 Forbidden"),
        (  # MetricsAuthUsers wins over ignore_private_data
            SlurmConfig(metrics_auth_users=("alice",), metrics_parameters=IGNORE),
            None,
            "401 Unauthorized",
        ),
    ],
)
def test_who_may_read_the_metrics(conf: SlurmConfig, user: str | None, outcome: str) -> None:
    access = MetricsAccess(conf, KEY)
    token = jwt.encode(KEY, user, 60, NOW) if user else None
    assert access.check(token, NOW) == outcome
