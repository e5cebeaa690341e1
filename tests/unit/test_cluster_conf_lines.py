"""A local cluster's own slurm.conf lines: ``minislurm cluster up --conf KEY=VALUE``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.manage import main
from minislurm.config import load_slurm_conf
from minislurm.local.cluster import ClusterSpec, LocalCluster, render_slurm_conf


def test_the_lines_come_last_and_win_over_the_clusters_own(tmp_path: Path) -> None:
    spec = ClusterSpec(conf_lines=("KillWait=9", "MinJobAge=42"))
    text = render_slurm_conf(spec, str(tmp_path), 6817)
    assert text.endswith("KillWait=9\nMinJobAge=42\n")
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    conf = load_slurm_conf(str(path))
    assert (conf.kill_wait, conf.min_job_age) == (9, 42)


def test_a_line_the_configuration_refuses_leaves_no_cluster(tmp_path: Path) -> None:
    local = LocalCluster(str(tmp_path / "home"))
    with pytest.raises(RuntimeError, match=r"--conf: .*SchedulerType"):
        local.write_config(ClusterSpec(conf_lines=("SchedulerType=sched/bogus",)))
    assert not Path(local.conf_path).exists()


@pytest.mark.parametrize("line", ["KillWait", "=5", "KillWait=5\nNodeName=x"])
def test_what_is_not_a_key_value_line_is_refused_before_anything_starts(
    tmp_path: Path, line: str
) -> None:
    home = tmp_path / "home"
    result = CliRunner().invoke(main, ["cluster", "up", "--home", str(home), "--conf", line])
    assert result.exit_code == 1
    assert "not a KEY=VALUE line of slurm.conf" in result.output
    assert not home.exists()


def test_cgroup_conf_lines_are_written_beside_slurm_conf(tmp_path: Path) -> None:
    local = LocalCluster(str(tmp_path / "home"))
    local.write_config(ClusterSpec(cgroup_lines=("ConstrainRAMSpace=yes", "MinRAMSpace=64")))
    written = Path(local.path("cgroup.conf")).read_text()
    assert written == "ConstrainRAMSpace=yes\nMinRAMSpace=64\n"


def test_a_cgroup_conf_line_that_does_not_read_leaves_no_cluster(tmp_path: Path) -> None:
    local = LocalCluster(str(tmp_path / "home"))
    with pytest.raises(RuntimeError, match=r"--cgroup-conf: .*ConstrainRAMSpace: 'maybe'"):
        local.write_config(ClusterSpec(cgroup_lines=("ConstrainRAMSpace=maybe",)))
    assert not Path(local.conf_path).exists()
    assert not Path(local.path("cgroup.conf")).exists()
    home = tmp_path / "other"
    result = CliRunner().invoke(main, ["cluster", "up", "--home", str(home), "--cgroup-conf", "x"])
    assert result.exit_code == 1
    assert "--cgroup-conf 'x': not a KEY=VALUE line of cgroup.conf" in result.output
    assert not home.exists()
