"""Submission throughput and submit-to-start latency of a local cluster.

Run by hand (``make bench``); prints numbers and their ratio to the
targets and to real Slurm 22.05 measured on the same 2-core machine.

1. serial ``sbatch``: N held ``--wrap`` jobs, one process after the other,
   through the real command;
2. the gRPC API: 8 client processes submitting held jobs concurrently with
   grpcio (each submission is committed before its reply: durable), with
   the controller's CPU time per submission, and the same clients calling
   ``Ping`` (an authenticated RPC that does nothing): the most any RPC
   could reach here, with these clients and this machine;
3. submit-to-start on an idle cluster: from the client's SubmitJob call to
   (a) the controller reporting RUNNING and (b) the script's first line.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import psutil
from benchcluster import BIN, bench_cluster

from minislurm.conffile import read_controller_address
from minislurm.config import load_slurm_conf
from minislurm.security import auth
from minislurm.wire import tls
from minislurm.wire.rpc import minislurm_pb2 as pb
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

REAL_SLURM = {"sbatch_serial": 233.0, "api_parallel": 372.0, "submit_to_running_ms": 1800.0}
TARGETS = {"sbatch_serial": 25.0, "api_parallel": 1500.0, "submit_to_running_ms": 50.0}


def spec(work: str, hold: bool = True, script: str = "#!/bin/sh\ntrue\n") -> pb.JobSpec:
    """A small job, as sbatch would send it."""
    return pb.JobSpec(
        name="bench",
        script=script.encode(),
        work_dir=work,
        submit_dir=work,
        batch=True,
        hold=hold,
        uid=os.getuid(),
        gid=os.getgid(),
        user=str(os.getuid()),
        group="0",
        environment={"PATH": os.environ.get("PATH", "")},
    )


def bench_sbatch(env: dict[str, str], work: str, count: int) -> float:
    """Serial sbatch submissions per second, from a shell loop (as a user scripts it)."""
    sbatch = shlex.quote(str(BIN / "sbatch"))

    def loop(n: int) -> list[str]:
        return [
            "bash",
            "-c",
            f"for i in $(seq {n}); do {sbatch} --hold --wrap=true -Q || exit 1; done",
        ]

    subprocess.run(loop(3), env=env, cwd=work, check=True)  # warm the page cache
    start = time.perf_counter()
    subprocess.run(loop(count), env=env, cwd=work, check=True)
    return count / (time.perf_counter() - start)


class _Signed(grpc.UnaryUnaryClientInterceptor):
    """Adds a fresh credential to each call, as every client must."""

    def __init__(self, conf: str) -> None:
        self.signer = auth.signer_for(conf)

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        metadata = [*(details.metadata or ()), (auth.HEADER, self.signer(details.method))]
        return continuation(details._replace(metadata=metadata), request)


def _channel(address: str, conf: str) -> grpc.Channel:
    files = load_slurm_conf(conf).tls_files()
    if files is None:
        channel = grpc.insecure_channel(address)
    else:  # TLSType=tls/openssl (--tls)
        channel = grpc.secure_channel(address, tls.channel_credentials(files))
    return grpc.intercept_channel(channel, _Signed(conf))


def _api_client(
    address: str, conf: str, work: str, count: int, ready: object, go: object, ping: bool
) -> None:
    channel = _channel(address, conf)
    stub = pb_grpc.SlurmControllerStub(channel)
    request = pb.SubmitJobRequest(spec=spec(work))
    stub.Ping(pb.PingRequest())
    ready.release()  # type: ignore[attr-defined]
    go.wait()  # type: ignore[attr-defined]
    for _ in range(count):
        if ping:
            stub.Ping(pb.PingRequest())
        else:
            stub.SubmitJob(request)
    channel.close()


def bench_api(
    address: str, conf: str, work: str, clients: int, per_client: int, ping: bool = False
) -> float:
    """Concurrent durable submissions (or Pings) per second through the gRPC API."""
    ctx = multiprocessing.get_context("spawn")
    ready, go = ctx.Semaphore(0), ctx.Event()
    procs = [
        ctx.Process(target=_api_client, args=(address, conf, work, per_client, ready, go, ping))
        for _ in range(clients)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    start = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    return clients * per_client / (time.perf_counter() - start)


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far (user and system)."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def bench_latency(
    address: str, conf: str, work: str, rounds: int
) -> tuple[list[float], list[float]]:
    """Submit-to-RUNNING and submit-to-script-start, milliseconds, on an idle cluster."""
    stub = pb_grpc.SlurmControllerStub(_channel(address, conf))
    to_running, to_script = [], []
    for i in range(rounds):
        stamp = Path(work) / f"started-{i}"
        script = f"#!/bin/sh\ndate +%s.%N > {stamp}\n"
        t0 = time.time()
        job_id = stub.SubmitJob(pb.SubmitJobRequest(spec=spec(work, False, script))).job_id
        while True:
            job = stub.GetJobs(pb.GetJobsRequest(job_ids=[job_id], all_states=True)).jobs[0]
            if job.state != "PENDING":
                to_running.append((time.time() - t0) * 1000)
                break
        while not (stamp.exists() and stamp.read_text().strip()):
            time.sleep(0.001)
        to_script.append((float(stamp.read_text()) - t0) * 1000)
        while stub.GetJobs(pb.GetJobsRequest(job_ids=[job_id], all_states=True)).jobs[
            0
        ].state not in ("COMPLETED", "FAILED"):
            time.sleep(0.005)
    return to_running, to_script


def report(name: str, value: float, unit: str, key: str, lower_is_better: bool = False) -> None:
    """One result line with its ratios."""
    target, real = TARGETS[key], REAL_SLURM[key]
    meets = value <= target if lower_is_better else value >= target
    ratio = real / value if lower_is_better else value / real
    print(
        f"{name:<42} {value:10.1f} {unit:<6} target {target:g} ({'met' if meets else 'MISSED'})"
        f", {ratio:.2f}x real Slurm ({real:g})"
    )


def main() -> int:
    """Run the benchmarks on a fresh local cluster."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sbatch", type=int, default=100, help="serial sbatch submissions")
    parser.add_argument("--api", type=int, default=500, help="API submissions per client")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--latency", type=int, default=30, help="latency rounds")
    parser.add_argument("--tls", action="store_true", help="TLSType=tls/openssl on every channel")
    parser.add_argument(
        "--db", choices=("sqlite", "postgresql"), default="sqlite", help="where the state lives"
    )
    args = parser.parse_args()
    with bench_cluster(tls=args.tls, db=args.db) as bench:
        host, port = read_controller_address(bench.cluster.conf_path)
        address, work = f"{host}:{port}", bench.work
        conf = bench.cluster.conf_path
        running, script = bench_latency(address, conf, work, args.latency)
        serial = bench_sbatch(bench.env, work, args.sbatch)
        ctld = bench.cluster.pid("slurmctld")
        assert ctld is not None
        before = cpu_seconds(ctld)
        api = bench_api(address, conf, work, args.clients, args.api)
        ctld_ms = (cpu_seconds(ctld) - before) * 1000 / (args.clients * args.api)
        ping = bench_api(address, conf, work, args.clients, args.api, ping=True)
    print(f"minislurm on {os.cpu_count()} CPUs, state in {args.db}{', TLS' if args.tls else ''}")
    report("sbatch, serial", serial, "/s", "sbatch_serial")
    report(f"gRPC API, {args.clients} concurrent clients, durable", api, "/s", "api_parallel")
    print(f"{'  slurmctld CPU per submission':<42} {ctld_ms:10.2f} ms")
    print(f"{'  Ping, same clients (the ceiling)':<42} {ping:10.1f} /s")
    report(
        "submit -> RUNNING, idle cluster (median)",
        statistics.median(running),
        "ms",
        "submit_to_running_ms",
        lower_is_better=True,
    )
    print(
        f"{'submit -> script starts (median, p90)':<42} {statistics.median(script):10.1f} ms"
        f"     p90 {statistics.quantiles(script, n=10)[-1]:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
