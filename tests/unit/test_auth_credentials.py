"""minislurm.security.auth: credentials made and checked, and the replay cache's bounds."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from minislurm.security import auth, cred

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


def test_a_restarted_receiver_refuses_what_its_predecessor_may_have_seen() -> None:
    cache = auth.ReplayCache(since=NOW)
    with pytest.raises(auth.AuthError, match="issued before this daemon started"):
        _check(auth.make(KEY, 1, 1, "h", NOW - 0.001, "/s/M"), NOW + 1, cache)
    _check(auth.make(KEY, 1, 1, "h", NOW, "/s/M"), NOW + 1, cache)


def test_a_full_cache_refuses_rather_than_grows() -> None:
    cache = auth.ReplayCache(limit=2)
    for _ in range(2):
        _check(auth.make(KEY, 1, 1, "h", NOW, "/s/M"), NOW, cache)
    with pytest.raises(auth.AuthError, match="too many"):
        _check(auth.make(KEY, 1, 1, "h", NOW, "/s/M"), NOW, cache)
    assert len(cache) == 2


@pytest.mark.parametrize("key_bytes", [0, 1, 32, 63, 64, 65, 200])
@pytest.mark.parametrize(
    "payload", [b"", b"v1\n0\n0\nh\n1.000\nnonce\n/s/M", bytes(range(256)) * 5]
)
def test_signatures_are_rfc_2104_hmac_sha256(key_bytes: int, payload: bytes) -> None:
    key = bytes((7 * i + 3) % 256 for i in range(key_bytes))
    want = hmac.new(key, payload, hashlib.sha256).digest()
    assert cred.sign(key, payload) == want
    assert cred.verify(key, payload, want)
    assert not cred.verify(key, payload + b"x", want)
