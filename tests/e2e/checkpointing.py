"""The checkpointing training example as the e2e tests run it (node failure, preemption).

Imports the test helpers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import wait_until

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "examples" / "checkpoint_train.py"
JOB = REPO / "examples" / "checkpoint_job.sh"
STEPS = 60
ENV = {"TRAIN_SCRIPT": str(TRAIN), "STEP_SECONDS": "0.1"}  # 0.1 s a step: a checkpoint each 0.5 s


def undisturbed_result(tmp: Path) -> str:
    """The final line of the training run when nothing interrupts it."""
    out = subprocess.run(
        [sys.executable, str(TRAIN), "--dir", str(tmp), "--steps", str(STEPS)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.strip().splitlines()[-1]


def wait_for_checkpoints(out: Path) -> None:
    """Wait until the run writing ``out`` has saved three checkpoints (step 15).

    RUNNING comes before the script has opened its output: the file may not exist yet.
    """
    wait_until(
        lambda: out.exists() and "checkpoint step=15" in out.read_text(), 30, "three checkpoints"
    )
