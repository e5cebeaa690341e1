"""Tests of minislurm.cgroupconf: cgroup.conf's keys, values and errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from minislurm.cgroupconf import CgroupConfig, load_cgroup_conf
from minislurm.errors import ConfigError


def _conf(tmp_path: Path, text: str) -> CgroupConfig:
    path = tmp_path / "cgroup.conf"
    path.write_text(text)
    return load_cgroup_conf(str(path))


def test_a_missing_cgroup_conf_constrains_nothing(tmp_path: Path) -> None:
    conf = load_cgroup_conf(str(tmp_path / "cgroup.conf"))
    assert conf == CgroupConfig()
    assert not conf.constrains_memory and not conf.constrain_devices


def test_the_keys_minislurm_acts_on_are_read_in_any_case(tmp_path: Path) -> None:
    conf = _conf(
        tmp_path,
        "CgroupPlugin=cgroup/V2\ncgroupmountpoint=/cg/\nConstrainRAMSpace=yes\n"
        "AllowedRAMSpace=101.5\nConstrainSwapSpace=YES AllowedSwapSpace=10\n"
        "MinRAMSpace=64\nConstrainDevices=yes\n",
    )
    assert conf == CgroupConfig("cgroup/v2", "/cg", True, 101.5, True, 10.0, 64, True)


def test_swap_alone_constrains_memory_too(tmp_path: Path) -> None:
    assert _conf(tmp_path, "ConstrainSwapSpace=yes\n").constrains_memory


def test_documented_keys_not_acted_on_are_accepted_and_others_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        conf = _conf(tmp_path, "ConstrainCores=yes IgnoreSystemd=yes\nConstrainGPUs=yes\n")
    assert conf == CgroupConfig()
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path}/cgroup.conf:2: unknown key ConstrainGPUs"
    ]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("CgroupPlugin=cgroup/v3", "expected one of autodetect, cgroup/v1, cgroup/v2, disabled"),
        ("ConstrainRAMSpace=maybe", "expected YES or NO"),
        ("AllowedRAMSpace=lots", "expected a percentage"),
        ("AllowedSwapSpace=-5", "expected a percentage from 0 to 1000"),
        ("MinRAMSpace=30M", "expected a number of MiB"),
    ],
)
def test_a_malformed_value_names_file_line_and_key(tmp_path: Path, line: str, why: str) -> None:
    key, _, value = line.partition("=")
    with pytest.raises(ConfigError) as caught:
        _conf(tmp_path, f"# cgroups\n{line}\n")
    message = str(caught.value)
    assert "cgroup.conf" in message and ":2" in message
    assert f"invalid value for {key}: {value!r} ({why})" in message
