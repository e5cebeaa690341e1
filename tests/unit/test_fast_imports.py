"""The commands' start-up path uses CPython's private modules on every supported Python.

``hashlib``, ``socket``, ``signal`` and ``ssl`` cost a command milliseconds of
start-up each, so the commands import the C modules beneath them (``_sha256``
or ``_sha2``, ``_socket``, ``_signal``, ``_ssl``). A module that is renamed in
a new Python (``_sha256`` became ``_sha2`` in 3.12) must be chosen by version,
never silently replaced by the slow one: these tests fail on the running
interpreter if the slow module is taken, and check that the fast one computes
what the standard one does.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from minislurm.security import cred

ROOT = Path(__file__).parents[2]
# CPython's own SHA-256, without OpenSSL: merged with SHA-224/384/512 into _sha2 in 3.12.
SHA256_MODULE = "_sha2" if sys.version_info >= (3, 12) else "_sha256"
# What no command may load on its way to its RPC: each has a cheaper C module beneath it.
SLOW = {"hashlib", "_hashlib", "hmac", "socket", "ssl", "_ssl"}


def loaded_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after ``statement``.

    ``-S`` keeps site-packages' ``.pth`` files from loading modules of their
    own, which would hide what our imports load.
    """
    code = f"import sys\n{statement}\nprint(' '.join(sys.modules))"
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(result.stdout.split())


def test_signing_uses_the_sha256_module_of_this_python() -> None:
    assert cred.sha256 is importlib.import_module(SHA256_MODULE).sha256


def test_the_fast_sha256_signs_as_hmac_and_hashlib_do() -> None:
    key, payload = bytes(range(40)), b"v1\n0\n0\nh\n1.000\nnonce\n/s/M" * 9
    assert cred.sign(key, payload) == hmac.new(key, payload, hashlib.sha256).digest()
    assert cred.sha256(payload).digest() == hashlib.sha256(payload).digest()


@pytest.mark.parametrize("command", ["sbatch", "squeue", "scancel", "sinfo", "srun", "salloc"])
def test_a_command_loads_the_fast_modules_and_none_of_the_slow_ones(command: str) -> None:
    loaded = loaded_after(f"import cli.{command}")
    assert {SHA256_MODULE, "_socket"} <= loaded
    assert not loaded & SLOW


def test_srun_signals_through_the_signal_module_beneath_signal() -> None:
    loaded = loaded_after("import cli.srun")
    assert "_signal" in loaded
    assert "signal" not in loaded  # its enum machinery costs ~9 ms
