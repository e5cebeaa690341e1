"""Tests of -M/--clusters and SLURM_CLUSTERS (cli.clusters), in Slurm 22.05's words."""

from __future__ import annotations

import pytest

from cli import clusters, common

NOT_REACHED = (
    "squeue: error: '{}' can't be reached now, or it is an invalid entry for {}.  "
    "Use 'sacctmgr list clusters' to see available clusters.\n"
)


@pytest.fixture(autouse=True)
def anchor(monkeypatch: pytest.MonkeyPatch) -> None:
    config = type("Config", (), {"cluster_name": "anchor"})()
    monkeypatch.setattr(common, "client_config", lambda: config)
    monkeypatch.delenv("SLURM_CLUSTERS", raising=False)


@pytest.mark.parametrize("text", ["anchor", "ANCHOR", "all", "anchor,all"])
def test_this_cluster_by_any_name(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert clusters.requested("squeue", {"clusters": text}) == "anchor"
    assert capsys.readouterr().err == ""


def test_other_clusters_beside_this_one_are_reported_and_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert clusters.requested("squeue", {"clusters": "anchor,nosuch"}) == "anchor"
    assert capsys.readouterr().err == "squeue: error: No cluster 'nosuch' known by database.\n"


@pytest.mark.parametrize(
    ("values", "environ", "text", "source"),
    [
        ({"clusters": "nosuch"}, {}, "nosuch", "--cluster"),
        ({}, {"SLURM_CLUSTERS": "nosuch"}, "nosuch", "SLURM_CLUSTERS"),
    ],
)
def test_no_known_cluster_ends_the_command(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    values: dict[str, object],
    environ: dict[str, str],
    text: str,
    source: str,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit):
        clusters.requested("squeue", values)
    assert capsys.readouterr().err == (
        f"squeue: error: No cluster '{text}' known by database.\n"
        + NOT_REACHED.format(text, source)
    )


def test_no_cluster_named_is_none() -> None:
    assert clusters.requested("squeue", {}) is None
