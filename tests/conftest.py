"""Test-wide fixtures: the tests' own directory is importable; the caller's
settings of the commands (``SQUEUE_FORMAT``, ``SLURM_TIME_FORMAT``...) do
not reach the tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# The input variables of the commands, and Slurm's (a test sets what it needs).
COMMAND_VARIABLES = ("SQUEUE_", "SINFO_", "SACCT_", "SCANCEL_", "SPRIO_", "SCONTROL_")
SLURM_VARIABLES = ("SLURM_TIME_FORMAT", "SLURM_CLUSTERS")


@pytest.fixture(autouse=True)
def _no_command_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith(COMMAND_VARIABLES) or name in SLURM_VARIABLES:
            monkeypatch.delenv(name)
    yield
