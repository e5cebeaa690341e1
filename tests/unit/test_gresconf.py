"""Tests of minislurm.gresconf: one node's lines of gres.conf."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from minislurm.errors import ConfigError
from minislurm.gresconf import GresConfig, load_gres_conf


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
        ("NodeName=n[1-3] Name=gpu Count=8 Cores=0-3 Links=-1,0\n", [GresConfig("gpu", "", 8)]),
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
    ],
)
def test_bad_gres_conf_lines_are_config_errors(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace("[", r"\[")):
        _gres(tmp_path, text)


def test_unknown_gres_conf_key_is_logged_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="minislurm.gresconf"):
        assert _gres(tmp_path, "Name=gpu Colour=red\n") == [GresConfig("gpu", "", 1)]
    assert "gres.conf:1: unknown key Colour" in caplog.text
