"""How long a cluster is without a controller when its primary dies, and how long commands wait.

Run by hand: ``python bench/bench_takeover.py [--rounds 5]``. A local cluster
with two controllers (``--controllers 2``: its own PostgreSQL server, the
default SlurmctldTimeout) and two nodes; a job runs throughout. Each round
SIGKILLs the controller in control (and, with ``--stop``, also stops one
cleanly: it hands the role over at once) while a client runs ``squeue`` in a
loop, and measures:

- takeover: from the kill to the first command the new primary answers;
- the longest a command waited (it keeps trying for MessageTimeout).

The dead controller is started again (it comes back a backup) before the
next round. Prints each round, then the medians beside the target.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchcluster import BIN

from minislurm.local.cluster import ClusterSpec, LocalCluster

TARGET_SECONDS = 10.0  # SlurmctldTimeout (5 s) and a reload


def primary(cluster: LocalCluster) -> str:
    """The controller daemon in control (waits for one)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for daemon, _, addr in cluster.controllers():
            if cluster.pid(daemon) and cluster.controller_role(addr) == "primary":
                return daemon
        time.sleep(0.05)
    raise TimeoutError("no controller in control")


Waits = list[tuple[float, float]]  # each command's start and duration


def squeue_loop(env: dict[str, str], stop: threading.Event, waits: Waits) -> None:
    """Run squeue until ``stop``, recording each one's start and duration."""
    while not stop.is_set():
        began = time.monotonic()
        subprocess.run([str(BIN / "squeue"), "-h"], env=env, capture_output=True, check=False)
        waits.append((began, time.monotonic() - began))


def one_round(cluster: LocalCluster, env: dict[str, str], clean: bool) -> tuple[float, float]:
    """Kill (or stop) the primary; return (takeover seconds, longest command wait)."""
    old = primary(cluster)
    pid = cluster.pid(old)
    assert pid is not None
    waits: Waits = []
    stop = threading.Event()
    client = threading.Thread(target=squeue_loop, args=(env, stop, waits))
    client.start()
    time.sleep(0.5)
    killed = time.monotonic()
    os.kill(pid, signal.SIGTERM if clean else signal.SIGKILL)
    while True:
        answered = subprocess.run(
            [str(BIN / "squeue"), "-h"], env=env, capture_output=True, check=False
        )
        if answered.returncode == 0 and any(
            cluster.controller_role(addr) == "primary"
            for daemon, _, addr in cluster.controllers()
            if daemon != old
        ):
            break
    takeover = time.monotonic() - killed
    time.sleep(0.5)
    stop.set()
    client.join()
    longest = max(duration for began, duration in waits if began + duration >= killed)
    while cluster.pid(old) is not None:
        time.sleep(0.05)
    cluster.up(ClusterSpec())  # the old primary comes back as a backup
    return takeover, longest


def main() -> int:
    """Run the rounds on a fresh two-controller cluster."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stop", action="store_true", help="also stop the primary cleanly")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="minislurm-bench-ha-") as home:
        cluster = LocalCluster(home)
        cluster.up(ClusterSpec(controllers=2))
        database = cluster.own_database()
        try:
            cluster.wait_ready()
            env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
            env.update(SLURM_CONF=cluster.conf_path, PATH=f"{BIN}:{env.get('PATH', '')}")
            work = Path(home, "work")
            work.mkdir()
            subprocess.run(
                [str(BIN / "sbatch"), "-o", "/dev/null", "--wrap=sleep 100000"],
                env=env,
                cwd=work,
                check=True,
                capture_output=True,
            )
            results: dict[str, list[tuple[float, float]]] = {"SIGKILL": []}
            if args.stop:
                results["SIGTERM"] = []
            for kind, rounds in results.items():
                for n in range(args.rounds):
                    took, longest = one_round(cluster, env, clean=kind == "SIGTERM")
                    rounds.append((took, longest))
                    print(f"{kind} round {n + 1}: takeover {took:.2f} s, longest {longest:.2f} s")
        finally:
            cluster.down()
            if database is not None:
                shutil.rmtree(database.directory, ignore_errors=True)
    for kind, rounds in results.items():
        takeover = statistics.median(t for t, _ in rounds)
        longest = max(w for _, w in rounds)
        met = "met" if takeover <= TARGET_SECONDS else "MISSED"
        print(
            f"{kind}: takeover median {takeover:.2f} s (target {TARGET_SECONDS:g}, {met}),"
            f" longest command {longest:.2f} s, {len(rounds)} rounds"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
