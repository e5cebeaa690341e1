"""A local cluster's gres.conf: fake GPUs by Count=, or a file of its own (``--gres-conf``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from minislurm.local.cluster import ClusterSpec, check_gres_conf, render_gres_conf

PAIRS = """\
Name=gpu Links=-1,4,0,0
Name=gpu Links=4,-1,0,0
Name=gpu Links=0,0,-1,4
Name=gpu Links=0,0,4,-1
"""


def test_a_cluster_installs_its_own_gres_conf_or_fake_gpus_by_count() -> None:
    assert render_gres_conf(ClusterSpec(nodes=3)) == "NodeName=n[1-3] Name=gpu Count=8\n"
    assert render_gres_conf(ClusterSpec(gres_conf=PAIRS)) == PAIRS


def test_a_gres_conf_that_gives_every_node_its_gpus_passes(tmp_path: Path) -> None:
    path = tmp_path / "gres.conf"
    path.write_text(PAIRS + "NodeName=n3 AutoDetect=nvml\n")
    check_gres_conf(ClusterSpec(nodes=2, gpus_per_node=4), str(path))
    check_gres_conf(ClusterSpec(nodes=3, gpus_per_node=4), str(path))  # n3: slurmd finds them


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("Name=gpu Links=-1,4\n", "gres.conf:1: Links= has 2 entries for the node's 1 GPUs"),
        ("Name=gpu Count=2\n", "n1 has 2 GPUs there, not 4"),
        ("NodeName=n1 Name=gpu Count=4\n", "n2 has 0 GPUs there, not 4"),
    ],
)
def test_a_gres_conf_that_does_not_read_or_fit_is_refused(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "gres.conf"
    path.write_text(text)
    with pytest.raises(ValueError, match=fragment):
        check_gres_conf(ClusterSpec(nodes=2, gpus_per_node=4), str(path))
