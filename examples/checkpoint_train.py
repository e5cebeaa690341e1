"""A small training run that survives requeues: checkpoint every few steps, resume from the latest.

It fits a linear model by minibatch gradient descent (numpy, CPU). Each
step's minibatch is drawn from a generator seeded by the step number, so a
run that resumes from a checkpoint computes exactly what an undisturbed run
computes, and ends with the same weights. Run it under Slurm with
``examples/checkpoint_job.sh`` (``--requeue``): when its node fails, the job
comes back with ``SLURM_RESTART_COUNT`` one higher and carries on.

    python examples/checkpoint_train.py --dir ckpt --steps 60 --every 5
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

FEATURES = 8
BATCH = 64
LEARNING_RATE = 0.05
TRUE_WEIGHTS = np.linspace(-1.0, 1.0, FEATURES)


def latest_checkpoint(directory: str) -> tuple[int, np.ndarray] | None:
    """The last saved step and weights, or None when there is no checkpoint."""
    path = os.path.join(directory, "latest.npz")
    if not os.path.exists(path):
        return None
    with np.load(path) as saved:
        return int(saved["step"]), saved["weights"]


def save_checkpoint(directory: str, step: int, weights: np.ndarray) -> None:
    """Write the checkpoint atomically: a crash mid-write leaves the previous one."""
    tmp = os.path.join(directory, f"latest.tmp.{os.getpid()}.npz")
    np.savez(tmp, step=step, weights=weights)
    os.replace(tmp, os.path.join(directory, "latest.npz"))


def train_step(step: int, weights: np.ndarray) -> tuple[np.ndarray, float]:
    """One gradient step on minibatch ``step`` (the same batch whoever computes it)."""
    rng = np.random.default_rng(1000 + step)
    x = rng.normal(size=(BATCH, FEATURES))
    y = x @ TRUE_WEIGHTS + 0.01 * rng.normal(size=BATCH)
    error = x @ weights - y
    loss = float(np.mean(error**2))
    return weights - LEARNING_RATE * (2.0 / BATCH) * (x.T @ error), loss


def main() -> None:
    """Resume (or start), train to the last step, print the result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="checkpoint directory")
    parser.add_argument("--steps", type=int, default=60, help="steps in all")
    parser.add_argument("--every", type=int, default=5, help="checkpoint every N steps")
    parser.add_argument("--step-seconds", type=float, default=0.0, help="pace: seconds per step")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    restarts = os.environ.get("SLURM_RESTART_COUNT", "0")
    found = latest_checkpoint(args.dir)
    first, weights = (found[0], found[1]) if found else (0, np.zeros(FEATURES))
    print(f"restart_count={restarts} resume_step={first}", flush=True)
    loss = float("nan")
    for step in range(first, args.steps):
        weights, loss = train_step(step, weights)
        if (step + 1) % args.every == 0 or step + 1 == args.steps:
            save_checkpoint(args.dir, step + 1, weights)
            print(f"checkpoint step={step + 1} loss={loss:.6f}", flush=True)
        time.sleep(args.step_seconds)
    print("final weights=" + ",".join(f"{w:.10f}" for w in weights), flush=True)


if __name__ == "__main__":
    main()
