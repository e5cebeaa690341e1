"""minislurm.auth: credentials made and checked, and the replay cache's bounds."""

from __future__ import annotations

import pytest

from minislurm import auth

KEY = b"k" * 64
NOW = 1_800_000_000.0


def _check(token: str, now: float = NOW, cache: auth.ReplayCache | None = None) -> auth.Identity:
    return auth.check(KEY, token, "/s/M", now, auth.ReplayCache() if cache is None else cache)


def test_a_credential_names_its_signer() -> None:
    who = _check(auth.make(KEY, 1000, 100, "host1", NOW - 5, "/s/M"))
    assert (who.uid, who.gid, who.host, who.issued) == (1000, 100, "host1", NOW - 5)


@pytest.mark.parametrize(
    ("token", "error"),
    [
        (auth.make(KEY, 1, 1, "h", NOW, "/s/Other"), "invalid credential signature"),
        (auth.make(b"x" * 64, 1, 1, "h", NOW, "/s/M"), "invalid credential signature"),
        (auth.make(KEY, 1, 1, "h", NOW, "/s/M").replace("v1:1:", "v1:0:"), "signature"),
        (auth.make(KEY, 1, 1, "h", NOW - auth.TTL - 1, "/s/M"), "expired"),
        (auth.make(KEY, 1, 1, "h", NOW + auth.TTL + 1, "/s/M"), "future"),
        ("v1:1:1:h:1:2", "malformed"),
        ("v1:-1:1:h:1.0:" + "0" * 32 + ":00", "malformed"),
        ("v1:1:1:h:1.0:" + "0" * 32 + ":zz", "malformed"),
        ("x" * (auth.MAX_TOKEN + 1), "too long"),
    ],
)
def test_bad_credentials_are_refused(token: str, error: str) -> None:
    with pytest.raises(auth.AuthError, match=error):
        _check(token)


def test_a_nonce_is_refused_until_its_credential_expires() -> None:
    cache = auth.ReplayCache()
    token = auth.make(KEY, 1, 1, "h", NOW, "/s/M")
    _check(token, NOW, cache)
    with pytest.raises(auth.AuthError, match="replayed"):
        _check(token, NOW + auth.TTL, cache)
    _check(auth.make(KEY, 1, 1, "h", NOW + auth.TTL + 1, "/s/M"), NOW + auth.TTL + 1, cache)
    assert len(cache) == 1  # the first nonce was forgotten once it could not be used


def test_a_full_cache_refuses_rather_than_grows() -> None:
    cache = auth.ReplayCache(limit=2)
    for _ in range(2):
        _check(auth.make(KEY, 1, 1, "h", NOW, "/s/M"), NOW, cache)
    with pytest.raises(auth.AuthError, match="too many"):
        _check(auth.make(KEY, 1, 1, "h", NOW, "/s/M"), NOW, cache)
    assert len(cache) == 2
