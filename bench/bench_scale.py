"""Scale of a live local cluster: 1,024 nodes of 8 GPUs in slurmd processes of 128 nodes each.

Run by hand: ``.venv/bin/python bench/bench_scale.py`` (N=1,024 nodes, 10,000 jobs,
three runs; each run starts a cluster of its own in a temporary home and takes
a few minutes). At small scale, to check that it works::

    .venv/bin/python bench/bench_scale.py --nodes 32 --nodes-per-slurmd 16 \\
        --jobs 200 --runs 1 --idle-seconds 5

Each run starts ``minislurm cluster up`` once, takes its figures in this order
and stops the cluster with ``minislurm cluster down`` (always, in a finally):

1. ``cluster up`` until every node is ``idle`` in ``sinfo`` (target 20 s), and
   how long ``cluster up`` itself took;
2. the controller's CPU time (user + system, psutil) over ``--idle-seconds``
   of idleness, as a percentage of one core (target 3 %);
3. ``srun -N{min(512, N)} -n{same} true`` and ``srun -N{N} --ntasks-per-node=8
   true`` outside any allocation, command start to exit (5 s and 20 s);
4. one job holds every node (``--exclusive``, an hour's limit) and ``--jobs``
   one-node jobs are submitted one by one through the API behind it; with
   them: the controller's RSS (500 MiB); ``squeue``, ``sinfo -N`` and
   ``scontrol show node`` (median of three each; 200, 100 and 100 ms); the
   controller's CPU time per ``GET /metrics/jobs`` (the cluster starts with
   ``MetricsType=metrics/openmetrics``; over 20 GETs; 50 ms); the
   last full (backfill) pass and event pass from the controller's
   ``GetStats`` (1 s and 50 ms). A full pass tests the first
   ``bf_max_job_test`` jobs only: Slurm's default, 500, unless
   ``--bf-max-job-test 10000`` writes that into slurm.conf before the start
   (the target of 1 s is for every job tested, as in bench_backfill.py);
5. SIGKILL to slurmctld, then ``minislurm cluster up`` on the same home until
   ``squeue`` lists every job again, nothing lost (10 s);
6. every job cancelled, then ``sbatch --array=0-{jobs-1} -N1 --wrap true``
   from submission until every task is COMPLETED, as jobs per second (200).

A step that fails costs its own figures, and the run when later steps need
it (the cluster, the jobs, the controller). It prints each figure beside its
target as it is taken, then min / median / max over the runs (a target is
judged on the median), and with ``--json PATH`` writes them all. It first
times a fixed pure-Python loop (``calibration``, as bench_backfill.py does)
so that figures from machines of different speeds can be compared. The
targets are those of the full size; smaller sizes print them too, for
reference only.

Imports benchcluster, cli.sbatch (to build the pending jobs' request as sbatch
does), minislurm's client and psutil; starts the cluster and the commands as
subprocesses. It signals only the controller whose pid file its home holds, and
after ``cluster down`` kills, by pid, any process still naming that home.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import psutil
from benchcluster import BIN, ROOT, calibration

from cli.sbatch import batch_spec, merged_options
from ctld.sched.knobs import DEFAULT_BF_MAX_JOB_TEST
from minislurm.conffile import read_client_config
from minislurm.local.cluster import ClusterSpec, LocalCluster
from minislurm.security import auth
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import RpcError

MIB = 1024 * 1024
QUERY_REPEAT = 3  # each query command, per run: the median counts
SCRAPES = 20  # GETs of a metrics endpoint, per run: their CPU over their number
HOLD_MINUTES = 60  # the job that holds every node while the others wait
PENDING_MINUTES = 10  # the waiting jobs' time limit
SUBMITTERS = 4  # clients submitting the pending jobs at once
MIN_JOB_AGE = 7200  # seconds the controller keeps an ended job's record
FAILURES_SHOWN = 5  # array tasks that did not complete, described before the run goes on
FULL_PASS_WAIT = 90.0  # seconds: a full pass comes at least every bf_interval (30 s)
NO_STATS = "n/a (controller lacks GetStats)"


class BenchError(Exception):
    """A step of the benchmark failed: a command's exit status, a timeout, a lost job."""


@dataclass(frozen=True)
class Figure:
    """What one figure is, and its target (None: shown for information)."""

    label: str
    unit: str
    target: float | None = None
    at_least: bool = False  # the target is a floor, not a ceiling

    def show(self, value: float) -> str:
        """The value to the precision its unit calls for."""
        digits = {"s": 3, "ms": 1, "%": 2, "MiB": 2}.get(self.unit, 1)
        return f"{value:.{digits}f}"


def figures_of(args: argparse.Namespace) -> dict[str, Figure]:
    """Every figure a run takes, in the order they are printed."""
    n, jobs, small = args.nodes, args.jobs, min(512, args.nodes)
    tested = f"bf_max_job_test={args.bf_max_job_test or DEFAULT_BF_MAX_JOB_TEST}"
    return {
        "up_to_idle_s": Figure(f"cluster up -> all {n} nodes idle in sinfo", "s", 20),
        "cluster_up_s": Figure("  of which `minislurm cluster up` itself", "s"),
        "idle_cpu_pct": Figure(f"controller CPU while idle, {args.idle_seconds:g} s", "%", 3),
        "node_rss_mib": Figure(
            f"memory per emulated node: slurmd RSS / {args.nodes_per_slurmd} (and its fork server)",
            "MiB",
        ),
        "srun_small_s": Figure(f"srun -N{small} -n{small} true", "s", 5),
        "srun_full_s": Figure(f"srun -N{n} --ntasks-per-node=8 true ({8 * n} tasks)", "s", 20),
        "submit_per_s": Figure(f"API submissions of {jobs} jobs, {SUBMITTERS} at once", "jobs/s"),
        "rss_mib": Figure(f"controller RSS, {n} nodes and {jobs} pending jobs", "MiB", 500),
        "squeue_ms": Figure(f"squeue with {jobs} pending jobs", "ms", 200),
        "sinfo_nodes_ms": Figure(f"sinfo -N with {n} nodes", "ms", 100),
        "scontrol_show_node_ms": Figure(f"scontrol show node with {n} nodes", "ms", 100),
        "metrics_jobs_ms": Figure(
            f"GET /metrics/jobs with {jobs} pending jobs: controller CPU", "ms", 50
        ),
        "bf_pass_s": Figure(f"last full pass, {jobs} pending x {n} nodes, {tested}", "s", 1),
        "bf_pass_max_s": Figure("  longest full pass so far", "s"),
        "event_pass_ms": Figure("last event pass", "ms", 50),
        "event_pass_max_ms": Figure("  longest event pass so far", "ms"),
        "restart_s": Figure(f"SIGKILL slurmctld -> restarted, all {jobs + 1} jobs listed", "s", 10),
        "restart_up_s": Figure("  of which `minislurm cluster up` itself", "s"),
        "array_jobs_per_s": Figure(f"array of {jobs} one-node true jobs", "jobs/s", 200, True),
    }


@dataclass
class Run:
    """One run: its cluster's home, the commands' environment and the figures taken."""

    args: argparse.Namespace
    home: str
    figures: dict[str, float] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # figure -> why it is not there
    hold_id: int = 0
    pending_ids: list[int] = field(default_factory=list)

    @property
    def work(self) -> str:
        """Where the commands run and the jobs start."""
        return os.path.join(self.home, "work")

    @property
    def conf(self) -> str:
        """The cluster's slurm.conf."""
        return os.path.join(self.home, "slurm.conf")

    @property
    def env(self) -> dict[str, str]:
        """The commands' environment: ours first on PATH, SLURM_CONF set, no inherited SLURM_*."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update(SLURM_CONF=self.conf, PATH=f"{BIN}:{env.get('PATH', '')}")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    def up_argv(self) -> list[str]:
        """``minislurm cluster up`` for this run's cluster."""
        return [
            str(BIN / "minislurm"),
            *("cluster", "up", "--home", self.home, "--nodes", str(self.args.nodes)),
            *("--gpus-per-node", "8", "--nodes-per-slurmd", str(self.args.nodes_per_slurmd)),
        ]

    def client(self) -> ControllerClient:
        """A new client of the controller, from slurm.conf as it is now."""
        config = read_client_config(self.conf)
        signer = auth.signer_for(self.conf, config.auth_type)
        return ControllerClient(config.host, config.port, timeout=60.0, signer=signer)

    def ctld_pid(self) -> int:
        """The pid of this cluster's slurmctld."""
        pid = LocalCluster(self.home).pid("slurmctld")
        if pid is None:
            raise BenchError("slurmctld is not running")
        return pid

    def record(self, key: str, value: float, extra: str = "") -> None:
        """Keep a figure and print it beside its target."""
        self.figures[key] = value
        fig = figures_of(self.args)[key]
        print(f"  {describe(fig, fig.show(value))}{extra}", flush=True)


def describe(fig: Figure, value: str) -> str:
    """``label: value unit; target <= T unit``."""
    text = f"{fig.label}: {value} {fig.unit}"
    if fig.target is not None:
        text += f"; target {'>=' if fig.at_least else '<='} {fig.target:g} {fig.unit}"
    return text


def command(run: Run, argv: list[str], timeout: float = 600.0) -> tuple[float, str]:
    """Run one of our commands in the run's environment; its wall seconds and its output.

    Raises:
        BenchError: it exited non-zero or ran out of time.
    """
    if not argv[0].startswith("/"):
        argv = [str(BIN / argv[0]), *argv[1:]]
    began = time.perf_counter()
    try:
        done = subprocess.run(
            argv,
            env=run.env,
            cwd=run.work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{' '.join(argv)}: still running after {timeout:.0f} s") from None
    took = time.perf_counter() - began
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        more = f"\n    ({len(lines) - 3} more lines)" if len(lines) > 3 else ""
        said = "".join(f"\n    {line}" for line in lines[:3])
        raise BenchError(f"{' '.join(argv)}: exit status {done.returncode}:{said}{more}")
    return took, done.stdout


def poll(predicate: Callable[[], bool], timeout: float, what: str, every: float = 0.1) -> float:
    """Check ``predicate`` every ``every`` seconds until it holds; when it did (perf_counter).

    Raises:
        BenchError: it did not hold within ``timeout`` seconds.
    """
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise BenchError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)
    return time.perf_counter()


def all_idle(run: Run) -> bool:
    """Whether ``sinfo`` shows every node of the default partition idle."""
    try:
        _, out = command(run, ["sinfo", "-h", "-p", "gpu", "-o", "%T %D"], 60)
    except BenchError:
        return False
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return all(r[0] == "idle" for r in rows) and sum(int(r[1]) for r in rows) == run.args.nodes


def listed_jobs(run: Run) -> set[int]:
    """The jobs ``squeue`` lists (none when it cannot reach the controller)."""
    try:
        _, out = command(run, ["squeue", "-h", "-o", "%i"], 60)
    except BenchError:
        return set()
    return {int(word) for word in out.split() if word.isdigit()}


def start_cluster(run: Run) -> None:
    """``minislurm cluster up``, then until every node is idle in ``sinfo``.

    The configuration is written first, as ``cluster up`` would write it,
    but with a ``MinJobAge`` that keeps every array task's record until the
    array is counted (the default, 300 s, forgets the first tasks of a long
    array before the last end), ``MetricsType=metrics/openmetrics`` and, with
    ``--bf-max-job-test``, that ``SchedulerParameters`` line.
    """
    os.makedirs(run.work)
    lines = ["MetricsType=metrics/openmetrics"]
    if run.args.bf_max_job_test:
        lines.append(f"SchedulerParameters=bf_max_job_test={run.args.bf_max_job_test}")
    spec = ClusterSpec(
        nodes=run.args.nodes,
        gpus_per_node=8,
        nodes_per_slurmd=run.args.nodes_per_slurmd,
        min_job_age=MIN_JOB_AGE,
        conf_lines=tuple(lines),
    )
    LocalCluster(run.home).write_config(spec)
    began = time.perf_counter()
    took, _ = command(run, run.up_argv())
    idle = poll(lambda: all_idle(run), 300, "every node to be idle in sinfo")
    run.record("up_to_idle_s", idle - began)
    run.record("cluster_up_s", took)


def measure_idle_cpu(run: Run) -> None:
    """The controller's CPU time over a window in which nobody asks it anything."""
    proc = psutil.Process(run.ctld_pid())
    before, began = proc.cpu_times(), time.perf_counter()
    time.sleep(run.args.idle_seconds)  # the window measured: nothing to wait for
    after, wall = proc.cpu_times(), time.perf_counter() - began
    used = (after.user + after.system) - (before.user + before.system)
    run.record("idle_cpu_pct", 100.0 * used / wall)


def measure_node_memory(run: Run) -> None:
    """The RSS of each slurmd, with its stepd fork server, per node it serves (the median)."""
    local = LocalCluster(run.home)
    per_node = []
    for daemon in local.daemons()[1:]:
        pid = local.pid(daemon)
        if pid is None:
            raise BenchError(f"{daemon} is not running")
        slurmd = psutil.Process(pid)
        rss = slurmd.memory_info().rss + sum(c.memory_info().rss for c in slurmd.children())
        per_node.append(rss / MIB / run.args.nodes_per_slurmd)
    run.record("node_rss_mib", statistics.median(per_node))


def measure_srun_some(run: Run) -> None:
    """``srun -N{min(512, N)}`` outside any allocation: allocate, launch, wait, release."""
    small = min(512, run.args.nodes)
    took, _ = command(run, ["srun", f"-N{small}", f"-n{small}", "true"])
    run.record("srun_small_s", took)


def measure_srun_all(run: Run) -> None:
    """``srun`` of eight tasks on every node, outside any allocation."""
    took, _ = command(run, ["srun", f"-N{run.args.nodes}", "--ntasks-per-node=8", "true"])
    run.record("srun_full_s", took)


def hold_every_node(run: Run) -> None:
    """Start a job on every node, whole, for an hour, so that what comes next must wait.

    Held jobs would not do for the pending jobs: the planner skips them, as
    it skips jobs whose ``--begin`` has not come. Jobs that wait for
    ``Resources`` behind a running job are tested by every full pass, each
    placed at its earliest start in the resource-time map, which is the work
    the backfill figure is about.
    """
    argv = ["sbatch", "--parsable", f"-N{run.args.nodes}", "--exclusive"]
    argv += ["-t", str(HOLD_MINUTES), "-J", "hold", "-o", "/dev/null", "--wrap", "sleep 7200"]
    _, out = command(run, argv, 120)
    run.hold_id = int(out.strip().split(";")[0])
    with run.client() as ctl:

        def running() -> bool:
            jobs = ctl.call("GetJobs", job_ids=[run.hold_id]).jobs
            return bool(jobs) and jobs[0].state == "RUNNING"

        poll(running, 120, f"job {run.hold_id} to hold every node", 0.2)


def pending_spec(run: Run) -> dict[str, Any]:
    """The request ``sbatch -N1 -t 10 -o /dev/null --wrap true`` makes, built by sbatch's code."""
    argv = ["-N1", "-t", str(PENDING_MINUTES), "-J", "pending", "-o", "/dev/null"]
    values, script, name, script_args = merged_options([*argv, "--wrap", "true"])
    spec = batch_spec(values, script, name, script_args)
    spec.update(work_dir=run.work, submit_dir=run.work, environment=run.env)
    return spec


def submit_pending(run: Run) -> None:
    """Submit ``--jobs`` one-node jobs one by one through the API, as many sbatch would.

    A few submitters at once, each on a connection of its own, as users
    submit: the controller serves them together, and their kicks of the
    scheduler coalesce.
    """
    spec = pending_spec(run)

    def submit(count: int) -> list[int]:
        with run.client() as ctl:
            return [int(ctl.call("SubmitJob", spec=spec).job_id) for _ in range(count)]

    shares = [len(range(i, run.args.jobs, SUBMITTERS)) for i in range(SUBMITTERS)]
    began = time.perf_counter()
    with ThreadPoolExecutor(SUBMITTERS) as pool:
        run.pending_ids = [job_id for ids in pool.map(submit, shares) for job_id in ids]
    run.record("submit_per_s", run.args.jobs / (time.perf_counter() - began))


def controller_stats(ctl: ControllerClient) -> Any | None:
    """The controller's ``GetStats`` reply; None when it has no such method."""
    try:
        return ctl.call("GetStats")
    except ValueError:  # our own schema does not know the method
        return None
    except RpcError as err:
        if err.code == "UNIMPLEMENTED":
            return None
        raise


def measure_passes(run: Run) -> None:
    """The last full pass, which began after every job was in, and the last event pass.

    The event passes ran during the burst of submissions (each one kicks the
    scheduler); the last of them saw about every pending job.
    """
    with run.client() as ctl:
        first = controller_stats(ctl)
        if first is None:
            for key in ("bf_pass_s", "bf_pass_max_s", "event_pass_ms", "event_pass_max_ms"):
                run.missing[key] = NO_STATS
            print(f"  full (backfill) pass and event pass: {NO_STATS}")
            return
        stats = first

        def full_pass_done() -> bool:
            nonlocal stats
            stats = ctl.call("GetStats")
            return bool(stats.bf_cycle_count > first.bf_cycle_count)

        poll(full_pass_done, FULL_PASS_WAIT, "a full pass over every pending job", 0.5)
    run.record("bf_pass_s", stats.bf_cycle_last_us / 1e6, f" ({stats.bf_cycle_count} passes)")
    run.record("bf_pass_max_s", stats.bf_cycle_max_us / 1e6)
    if stats.sched_cycle_count:
        run.record("event_pass_ms", stats.sched_cycle_last_us / 1e3)
        run.record("event_pass_max_ms", stats.sched_cycle_max_us / 1e3)
    else:
        run.missing["event_pass_ms"] = "n/a (no event pass ran)"
        print("  event pass: n/a (no event pass ran)")


def measure_loaded(run: Run) -> None:
    """RSS and the query commands with every node busy and ``--jobs`` jobs waiting."""
    rss = psutil.Process(run.ctld_pid()).memory_info().rss
    run.record("rss_mib", rss / MIB)
    queries = {
        "squeue_ms": ["squeue"],
        "sinfo_nodes_ms": ["sinfo", "-N"],
        "scontrol_show_node_ms": ["scontrol", "show", "node"],
    }
    for key, argv in queries.items():
        times, out = [], ""
        for _ in range(QUERY_REPEAT):
            took, out = command(run, argv, 120)
            times.append(took)
        if key == "squeue_ms" and len(out.splitlines()) < run.args.jobs + 2:
            raise BenchError(f"squeue listed {len(out.splitlines()) - 1} jobs only")
        run.record(key, statistics.median(times) * 1000)
    run.record("metrics_jobs_ms", scrape_cpu(run, "jobs") * 1000)


def scrape_cpu(run: Run, endpoint: str) -> float:
    """The controller's CPU seconds per GET of a metrics endpoint, over SCRAPES of them.

    psutil counts CPU time in clock ticks (10 ms): one scrape is below that,
    so the figure is the CPU of SCRAPES in a row over their number (the
    controller's other work meanwhile, heartbeats and passes, is counted in).

    Raises:
        BenchError: the endpoint did not answer, or not with the jobs.
    """
    with open(os.path.join(run.home, "metrics.url")) as f:
        url = f"{f.read().strip()}/{endpoint}"
    ctld = psutil.Process(run.ctld_pid())
    before = ctld.cpu_times()
    for _ in range(SCRAPES):
        try:
            with urllib.request.urlopen(url, timeout=60) as reply:
                text = reply.read().decode()
        except OSError as err:
            raise BenchError(f"GET {url}: {err}") from None
        if f"slurm_jobs_pending {float(run.args.jobs)}" not in text:
            raise BenchError(f"GET {url}: no slurm_jobs_pending {run.args.jobs}")
    after = ctld.cpu_times()
    return (after.user + after.system - before.user - before.system) / SCRAPES


def measure_restart(run: Run) -> None:
    """SIGKILL slurmctld, restart it with ``cluster up``; until squeue lists every job again.

    Raises:
        BenchError: a job is missing, or not in the state it was.
    """
    expected = {run.hold_id, *run.pending_ids}
    pid = run.ctld_pid()
    os.kill(pid, signal.SIGKILL)
    poll(lambda: gone(pid), 10, "slurmctld to die", 0.02)
    began = time.perf_counter()
    took, _ = command(run, run.up_argv())
    listed: set[int] = set()

    def every_job_listed() -> bool:
        nonlocal listed
        listed = listed_jobs(run)
        return expected <= listed

    try:
        back = poll(every_job_listed, 120, "squeue to list every job again", 0.05)
    except BenchError as err:
        raise BenchError(f"{err}: {len(expected - listed)} of {len(expected)} missing") from None
    run.record("restart_s", back - began)
    run.record("restart_up_s", took)
    with run.client() as ctl:
        states = Counter(j.state for j in ctl.call("GetJobs", job_ids=sorted(expected)).jobs)
    if states != Counter(RUNNING=1, PENDING=len(run.pending_ids)):
        raise BenchError(f"jobs changed state across the restart: {dict(states)}")
    print(f"  nothing lost: 1 job running and {len(run.pending_ids)} pending, as before")


def gone(pid: int) -> bool:
    """Whether a process has exited (a zombie counts: its parent has yet to reap it)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def cancel_everything(run: Run) -> None:
    """``scancel --me``, then until no job is active and every node is idle."""
    command(run, ["scancel", "--me"], 120)
    with run.client() as ctl:
        poll(lambda: not ctl.call("GetJobs").jobs, 180, "every job to end", 0.5)
    poll(lambda: all_idle(run), 120, "every node to be idle again")


def measure_array(run: Run) -> None:
    """Submit an array of one-node ``true`` jobs; until every task is COMPLETED.

    Raises:
        BenchError: a task ended otherwise.
    """
    jobs = run.args.jobs
    argv = ["sbatch", "--parsable", f"--array=0-{jobs - 1}", "-N1", "-J", "array"]
    began = time.perf_counter()
    _, out = command(run, [*argv, "-o", "/dev/null", "--wrap", "true"], 120)
    array_id = int(out.strip().split(";")[0])
    with run.client() as ctl:
        # Every half second only: each call lists the running tasks, and costs the controller.
        try:
            done = poll(
                lambda: not ctl.call("GetJobs", job_ids=[array_id]).jobs,
                max(300.0, jobs / 20),
                "every array task to end",
                0.5,
            )
        except BenchError:
            ended = ctl.call("GetJobs", job_ids=[array_id], all_states=True).jobs
            print(f"    array tasks by state: {dict(Counter(j.state for j in ended))}", flush=True)
            active = [j for j in ended if j.state not in ("COMPLETED", "PENDING")]
            for job in active[:FAILURES_SHOWN]:
                print(f"    {describe_end(run, job)}", flush=True)
            raise
        ended = ctl.call("GetJobs", job_ids=[array_id], all_states=True).jobs
    states = Counter(j.state for j in ended)
    if states["COMPLETED"] != jobs:
        for job in [j for j in ended if j.state != "COMPLETED"][:FAILURES_SHOWN]:
            print(f"    {describe_end(run, job)}", flush=True)
        raise BenchError(f"{states['COMPLETED']} of {jobs} array tasks COMPLETED: {dict(states)}")
    run.record("array_jobs_per_s", jobs / (done - began))


def describe_end(run: Run, job: Any) -> str:
    """How a task that did not complete ended: its record, and the controller's lines on it."""
    ending = f"exit {job.exit_code}:{job.exit_signal} on {job.batch_host}"
    said = f"job {job.job_id}: {job.state} {ending}"
    mark = f"job={job.job_id} "
    try:
        with open(os.path.join(run.home, "log", "slurmctld.log"), errors="replace") as log:
            lines = [line.rstrip() for line in log if mark in line]
    except OSError:
        lines = []
    return "\n      ".join([said, *lines[-4:]])


def leftovers(home: str) -> list[psutil.Process]:
    """Processes of this run's cluster still alive.

    Those that name its home in their command line or working directory, or
    whose SLURM_CONF is its slurm.conf (a slurmd's spare stepd runs in ``/``).
    """
    inside, conf = f"{home}/", os.path.join(home, "slurm.conf")
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd", "environ"]):
        if proc.pid == os.getpid():
            continue
        cmdline, cwd = proc.info["cmdline"] or [], proc.info["cwd"] or ""
        named = any(w == home or inside in w for w in cmdline)
        if named or cwd == home or cwd.startswith(inside):
            found.append(proc)
        elif (proc.info["environ"] or {}).get("SLURM_CONF") == conf:
            found.append(proc)
    return found


def stop_cluster(run: Run) -> None:
    """``minislurm cluster down``; then SIGKILL, by pid, whatever it left of this run."""
    argv = [str(BIN / "minislurm"), "cluster", "down", "--home", run.home]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode:
        print(f"  cluster down: exit status {done.returncode}: {done.stderr.strip()[-300:]}")
    for proc in leftovers(run.home):
        print(f"  left behind, killed: pid {proc.pid} {' '.join(proc.info['cmdline'] or [])}")
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


def one_run(args: argparse.Namespace, index: int) -> Run:
    """Start a cluster, take every figure, stop it.

    A step that fails loses its own figures; one the later steps need (the
    cluster, the jobs, the controller) stops the run.
    """
    with tempfile.TemporaryDirectory(prefix="minislurm-scale-") as home:
        run = Run(args, home)
        print(f"run {index + 1} of {args.runs} in {home}:", flush=True)
        try:
            for step, needed in STEPS:
                try:
                    step(run)
                except (BenchError, RpcError, OSError, psutil.Error) as err:
                    print(f"  {step.__name__} failed: {err}", flush=True)
                    if needed:
                        print("  run stopped", flush=True)
                        break
        finally:
            stop_cluster(run)
    return run


# Each step, and whether the steps after it need it to have succeeded.
STEPS: list[tuple[Callable[[Run], None], bool]] = [
    (start_cluster, True),
    (measure_idle_cpu, False),
    (measure_node_memory, False),
    (measure_srun_some, False),
    (measure_srun_all, False),
    (hold_every_node, True),
    (submit_pending, True),
    (measure_loaded, False),
    (measure_passes, False),
    (measure_restart, True),
    (cancel_everything, True),
    (measure_array, False),
]


def summarize(args: argparse.Namespace, runs: list[Run]) -> dict[str, dict[str, Any]]:
    """Print min / median / max of each figure over the runs; return them."""
    print(f"\nover {len(runs)} run(s), min / median / max (a target is judged on the median):")
    summary: dict[str, dict[str, Any]] = {}
    for key, fig in figures_of(args).items():
        values = [r.figures[key] for r in runs if key in r.figures]
        if not values:
            why = next((r.missing[key] for r in runs if key in r.missing), "not taken")
            print(f"  {fig.label}: {why}")
            summary[key] = {"target": fig.target, "missing": why}
            continue
        low, mid, high = min(values), statistics.median(values), max(values)
        verdict = ""
        if fig.target is not None:
            met = mid >= fig.target if fig.at_least else mid <= fig.target
            verdict = "  ok" if met else "  MISSED"
        shown = " / ".join(fig.show(v) for v in (low, mid, high))
        print(f"  {describe(fig, shown)}{verdict}")
        summary[key] = {"min": low, "median": mid, "max": high, "target": fig.target}
    return summary


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--nodes-per-slurmd", type=int, default=128)
    parser.add_argument(
        "--jobs", type=int, default=10_000, help="pending jobs; array tasks (at most 10001)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument(
        "--bf-max-job-test",
        type=int,
        default=0,
        help="SchedulerParameters=bf_max_job_test=N in slurm.conf (0: Slurm's default, 500)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args()
    # Start-up as users get it: compiled bytecode, as benchcluster does.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "minislurm", "cli", "nodeagent", "ctld"],
        cwd=ROOT,
        check=True,
    )
    calibrated = calibration()
    print(f"calibration: a 5,000,000-step Python loop takes {calibrated:.3f} s on this machine")
    print(
        f"cluster: {args.nodes} nodes x 8 GPUs, {args.nodes_per_slurmd} nodes per slurmd;"
        f" {args.jobs} jobs; {os.cpu_count()} CPUs here",
        flush=True,
    )
    runs = [one_run(args, i) for i in range(args.runs)]
    summary = summarize(args, runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "calibration_s": calibrated,
                    "config": vars(args),
                    "runs": [r.figures for r in runs],
                    "summary": summary,
                },
                f,
                indent=2,
            )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
