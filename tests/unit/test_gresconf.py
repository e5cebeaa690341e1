"""Tests of minislurm.gresconf: one node's lines of gres.conf."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from minislurm.errors import ConfigError
from minislurm.gresconf import GresConfig, link_rows, load_gres_conf


def _gres(tmp_path: Path, text: str, node: str = "n1") -> list[GresConfig]:
    path = tmp_path / "gres.conf"
    path.write_text(text)
    return load_gres_conf(str(path), node)


def test_missing_gres_conf_means_no_entries(tmp_path: Path) -> None:
    assert load_gres_conf(str(tmp_path / "gres.conf"), "n1") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Name=gpu Count=8\n", [GresConfig("gpu", "", 8)]),
        ("Name=gpu\n", [GresConfig("gpu", "", 1)]),
        ("Name=mps Count=1K\n", [GresConfig("mps", "", 1024)]),
        ("Name=gpu File=/dev/nvidia0,/dev/nvidia1\n",
         [GresConfig("gpu", "", 2, ("/dev/nvidia0", "/dev/nvidia1"))]),
        ("Name=gpu File=/dev/nvidia[0-1] Count=2\n",
         [GresConfig("gpu", "", 2, ("/dev/nvidia0", "/dev/nvidia1"))]),
        ("AutoDetect=nvml\nName=gpu Type=h100 Count=2\n",
         [GresConfig("gpu", "h100", 2, (), "nvml")]),
        ("Name=gpu Count=2\nAutoDetect=NVML\n", [GresConfig("gpu", "", 2, (), "nvml")]),
        ("AutoDetect=nvml\n", [GresConfig("gpu", "", 0, (), "nvml")]),
        ("NodeName=n1 AutoDetect=nvidia\n", [GresConfig("gpu", "", 0, (), "nvidia")]),
        ("NodeName=n2 AutoDetect=nvml\n", []),
        ("AutoDetect=off\n", []),
        ("NodeName=n[2-3] Name=gpu Count=8\n", []),
        ("NodeName=n[1-3] Name=gpu Count=8 Cores=0-3,8\n",
         [GresConfig("gpu", "", 8, cores=(0, 1, 2, 3, 8))]),
        ("Name=gpu File=/dev/nvidia0 Links=-1,2\nName=gpu File=/dev/nvidia1 Links=2,-1\n",
         [GresConfig("gpu", "", 1, ("/dev/nvidia0",), links=(-1, 2)),
          GresConfig("gpu", "", 1, ("/dev/nvidia1",), links=(2, -1))]),
        ("Name=gpu Links=-1,0 Cores=0-1\nName=mps Count=100\nName=gpu Links=0,-1 Cores=2-3\n",
         [GresConfig("gpu", "", 1, links=(-1, 0), cores=(0, 1)), GresConfig("mps", "", 100),
          GresConfig("gpu", "", 1, links=(0, -1), cores=(2, 3))]),
    ],
)  # fmt: skip
def test_gres_conf_lines_for_one_node(
    tmp_path: Path, text: str, expected: list[GresConfig]
) -> None:
    assert _gres(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("Name=gpu File=/dev/nvidia[0-1] Count=3\n", "Count=3 does not match the 2 files"),
        ("Name=gpu Count=many\n", "invalid value for Count: 'many'"),
        ("AutoDetect=cuda\n", "invalid value for AutoDetect: 'cuda'"),
        ("NodeName=n[3-1] Name=gpu\n", "invalid value for NodeName"),
        ("Name=gpu File=/dev/nvidia[1-0]\n", "invalid value for File"),
        ("Name=gpu Count\n", "missing '='"),
        ("Name=gpu Links=-1,x\n", "gres.conf:1: invalid value for Links: '-1,x'"),
        ("Name=gpu Links=0,4\n", "gres.conf:1: invalid value for Links: '0,4' (expected one -1"),
        ("Name=gpu Links=-1,-1\n", "invalid value for Links"),
        ("Name=gpu Links=-2,-1\n", "invalid value for Links"),
        ("Name=gpu Links=--1\n", "invalid value for Links"),
        ("Name=gpu Cores=3-1\n", "gres.conf:1: invalid value for Cores: '3-1' (range '3-1' goes"),
        ("Name=gpu Cores=a\n", "invalid value for Cores"),
        ("Name=gpu Count=2 Links=-1,0\n", "gres.conf:1: Links= describes one device; this line"),
        ("Name=gpu File=/dev/nvidia[0-1] Links=-1,0\n", "Links= describes one device"),
        ("Name=gpu Links=-1,0\n", "gres.conf:1: Links= has 2 entries for the node's 1 GPUs"),
        ("Name=gpu Links=-1,4\nName=gpu Links=-1,4\n",
         "gres.conf:2: Links= must have its -1 at this GPU's place, 1"),
        ("Name=gpu Links=-1,4\nName=gpu Links=2,-1\n",
         "gres.conf:2: Links= says 2 links to GPU 0, whose line says 4"),
        ("Name=gpu Links=-1,0\nName=gpu\n",
         "gres.conf:2: Links= is given for other GPUs of this node but not here"),
        ("Name=gpu\nName=gpu Links=0,-1\n", "gres.conf:1: Links= is given for other GPUs"),
    ],
)  # fmt: skip
def test_bad_gres_conf_lines_are_config_errors(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        _gres(tmp_path, text)


def test_unknown_gres_conf_key_is_logged_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="minislurm.gresconf"):
        assert _gres(tmp_path, "Name=gpu Colour=red\n") == [GresConfig("gpu", "", 1)]
    assert "gres.conf:1: unknown key Colour" in caplog.text


def _quads_line(gpu: int) -> str:
    """One GPU of a node with two NVLink quads (0-3 and 4-7), four links within each."""
    links = ["-1" if i == gpu else "4" if i // 4 == gpu // 4 else "0" for i in range(8)]
    return f"NodeName=n1 Name=gpu File=/dev/nvidia{gpu} Links={','.join(links)}\n"


def test_a_node_of_two_nvlink_quads_gives_its_link_rows_in_device_order(tmp_path: Path) -> None:
    text = "".join(_quads_line(g) for g in range(8)) + "NodeName=n2 Name=gpu Count=8\n"
    entries = _gres(tmp_path, text)
    rows = link_rows(entries)
    assert len(rows) == 8
    assert rows[0] == (-1, 4, 4, 4, 0, 0, 0, 0)
    assert rows[6] == (0, 0, 0, 0, 4, 4, -1, 4)
    assert link_rows(_gres(tmp_path, text, "n2")) == ()


def test_links_lines_of_other_nodes_do_not_count(tmp_path: Path) -> None:
    text = "NodeName=n2 Name=gpu Links=-1,0\nNodeName=n1 Name=gpu Links=-1\n"
    assert link_rows(_gres(tmp_path, text)) == ((-1,),)
