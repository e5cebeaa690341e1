"""The controller's OpenMetrics endpoints, read with Prometheus's own parser.

A cluster started with ``--conf MetricsType=metrics/openmetrics`` (its spec's
``conf_lines``) serves them and writes their base URL to ``metrics.url``.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from minislurm.local.cluster import ClusterSpec
from minislurm.security import cred, jwt

pytestmark = pytest.mark.timeout(120)

ENDPOINTS = ["jobs", "jobs-users-accts", "nodes", "partitions", "scheduler"]


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Three nodes, with the metrics endpoints on."""
    spec = ClusterSpec(
        nodes=3, kill_wait=2, min_job_age=600, conf_lines=("MetricsType=metrics/openmetrics",)
    )
    yield from run_cluster(tmp_path_factory.mktemp("metrics"), request, spec)


def base_url(cluster: TestCluster) -> str:
    return (cluster.home / "metrics.url").read_text().strip()


def scrape(cluster: TestCluster, endpoint: str) -> dict[str, float]:
    """An endpoint's samples as Prometheus reads them: ``name{labels}`` (sorted) -> value."""
    with urllib.request.urlopen(f"{base_url(cluster)}/{endpoint}", timeout=10) as reply:
        assert reply.headers["Content-Type"].startswith("application/openmetrics-text")
        text = reply.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge", family.name
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples


def count(cluster: TestCluster, *argv: str) -> int:
    result = cluster.run(*argv)
    assert result.rc == 0, result.err
    return len(result.out.split())


def test_the_base_url_lists_every_endpoint_and_each_one_parses(cluster: TestCluster) -> None:
    config = cluster.run("scontrol", "show", "config")
    port = base_url(cluster).rsplit(":", 1)[1].split("/")[0]
    assert f"MetricsPort             = {port}" in config.out
    assert "MetricsType             = metrics/openmetrics" in config.out
    with urllib.request.urlopen(base_url(cluster), timeout=10) as reply:
        assert reply.read().decode().split() == [f"/metrics/{e}" for e in ENDPOINTS]
    for endpoint in ENDPOINTS:  # no job yet: no user or account has samples
        assert scrape(cluster, endpoint) or endpoint == "jobs-users-accts", endpoint


def test_job_and_node_gauges_match_squeue_and_sinfo(cluster: TestCluster) -> None:
    running = cluster.sbatch("-N2", "--wrap", "sleep 300")
    held = cluster.sbatch("-H", "--wrap", "true")
    cluster.wait_state(running, "RUNNING")
    cluster.wait_state(held, "PENDING")
    jobs, nodes = scrape(cluster, "jobs"), scrape(cluster, "nodes")
    assert jobs["slurm_jobs_running"] == count(cluster, "squeue", "-h", "-t", "R", "-o", "%i")
    assert jobs["slurm_jobs_pending"] == count(cluster, "squeue", "-h", "-t", "PD", "-o", "%i")
    assert jobs["slurm_jobs_hold"] == 1
    assert jobs["slurm_jobs_nodes_alloc"] == 2 and jobs["slurm_jobs_cpus_alloc"] == 2
    for state in ("idle", "mixed", "alloc", "down", "drain"):
        shown = count(cluster, "sinfo", "-N", "-h", "-p", "gpu", "-t", state, "-o", "%N")
        assert nodes[f"slurm_nodes_{state}"] == shown, state
    assert nodes["slurm_nodes"] == 3
    busy = cluster.run("squeue", "-h", "-j", str(running), "-o", "%N").out.strip()
    assert busy == "n[1-2]"
    assert nodes['slurm_node_cpus_alloc{node="n1"}'] == 1
    assert nodes['slurm_node_cpus_idle{node="n3"}'] == 8
    assert nodes['slurm_node_gpus{node="n3"}'] == 8
    parts = scrape(cluster, "partitions")
    assert parts['slurm_partition_jobs_running{partition="gpu"}'] == 1
    assert parts['slurm_partition_nodes{partition="gpu"}'] == 3
    users = scrape(cluster, "jobs-users-accts")
    user = cluster.run("squeue", "-h", "-j", str(running), "-o", "%u").out.strip()
    assert users[f'slurm_user_jobs_running{{username="{user}"}}'] == 1
    cluster.run("scancel", str(running), str(held))


def test_scheduler_counts_grow_with_passes(cluster: TestCluster) -> None:
    def cycles(figures: dict[str, float]) -> float:
        return figures["slurm_schedule_cycle_cnt"] + figures["slurm_bf_cycle_cnt"]

    before = scrape(cluster, "scheduler")
    job = cluster.sbatch("--wrap", "true")
    cluster.wait_state(job, "COMPLETED")

    def grown() -> dict[str, float] | None:
        now = scrape(cluster, "scheduler")
        return now if cycles(now) > cycles(before) else None

    after = wait_until(grown, 20, "a scheduling pass counted")
    for kind in ("schedule_cycle", "bf_cycle"):
        assert after[f"slurm_{kind}_tot"] >= before[f"slurm_{kind}_tot"]
        if after[f"slurm_{kind}_cnt"]:
            assert after[f"slurm_{kind}_max"] >= after[f"slurm_{kind}_last"] > 0
    assert after["slurm_sdiag_jobs_running"] == count(
        cluster, "squeue", "-h", "-t", "R", "-o", "%i"
    )
    assert after["slurm_sdiag_jobs_completed"] == before["slurm_sdiag_jobs_completed"] + 1


def raw_request(cluster: TestCluster, data: bytes) -> bytes:
    host, port = base_url(cluster).removeprefix("http://").split("/")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply


def test_what_is_not_a_get_of_an_endpoint_gets_an_http_error(cluster: TestCluster) -> None:
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{base_url(cluster)}/bogus", timeout=10)
    assert missing.value.code == 404
    post = urllib.request.Request(f"{base_url(cluster)}/jobs", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as posted:
        urllib.request.urlopen(post, timeout=10)
    assert posted.value.code == 405
    assert raw_request(cluster, b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    # The controller is unharmed: it still answers.
    assert cluster.run("squeue").rc == 0


def test_no_metrics_type_no_endpoints(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    for plain in run_cluster(tmp_path, request, ClusterSpec(nodes=1, kill_wait=2)):
        assert not (plain.home / "metrics.url").exists()
        assert "MetricsPort" not in plain.run("scontrol", "show", "config").out


def get_status(url: str, token: str | None = None) -> int:
    """The HTTP status of a GET, with the token in Slurm's header when given."""
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("X-SLURM-USER-TOKEN", token)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


@pytest.fixture
def guarded(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """One node; only alice and bob (and root, SlurmUser) may read the metrics."""
    spec = ClusterSpec(
        nodes=1,
        conf_lines=("MetricsType=metrics/openmetrics", "MetricsAuthUsers=alice,bob"),
    )
    yield from run_cluster(tmp_path, request, spec)


def token(cluster: TestCluster, *args: str) -> str:
    """``scontrol token ...``'s token."""
    result = cluster.run("scontrol", "token", *args)
    assert result.rc == 0, result.err
    name, _, value = result.out.strip().partition("=")
    assert name == "SLURM_JWT"
    return value


def test_metrics_auth_users_need_a_token_of_theirs(guarded: TestCluster) -> None:
    url = f"{base_url(guarded)}/jobs"
    assert get_status(url) == 401  # no token
    assert get_status(url, token(guarded, "username=alice")) == 200
    assert get_status(url, token(guarded, "username=mallory", "lifespan=60")) == 403
    assert get_status(url, token(guarded, "username=alice")[:-2] + "xx") == 401  # forged
    key = cred.load_key(cred.key_path(guarded.local.conf_path))
    stale = jwt.encode(key, "alice", 60, time.time() - 3600)
    assert get_status(url, stale) == 401  # expired
    bad = guarded.run("scontrol", "token", "lifespan=soon")
    assert (bad.rc, bad.err) == (1, "Invalid parameter: lifespan=soon\n")


def test_node_gpu_gauges_follow_what_the_gpus_report(cluster: TestCluster) -> None:
    fake = cluster.home / "spool" / "n2" / "fake-gpus"
    (fake / "0").write_text("80 3000\n")
    (fake / "5").write_text("40 1000\n")
    samples = wait_until(
        lambda: (s := scrape(cluster, "nodes")).get('slurm_node_gpu_util{node="n2"}') == 15.0 and s,
        30,
        "n2's GPUs reported by a heartbeat",
    )
    assert samples['slurm_node_gpu_memory_used_bytes{node="n2"}'] == 4000 * 2**20
    assert samples['slurm_node_gpu_util{node="n1"}'] == 0.0  # measured, idle
    for gpu in ("0", "5"):
        (fake / gpu).unlink()
