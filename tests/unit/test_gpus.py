"""GPU discovery: nvidia-smi parsing and which discovery a node's config selects."""

from __future__ import annotations

import pytest

from minislurm.gresconf import GresConfig
from nodeagent.gpus import (
    DeviceFileGpus,
    FakeGpus,
    Gpu,
    GpuDiscoveryError,
    NvidiaSmiGpus,
    gpu_discovery,
    parse_nvidia_smi,
)

SMI = """\
1, GPU-2f0c2f7e-54b1-64a1-9b7c-6c2fd0a9b111, NVIDIA H100 80GB HBM3, 81559
0, GPU-8f3a4b0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b, NVIDIA H100 80GB HBM3, 81559

"""


def test_nvidia_smi_csv_is_parsed_and_sorted_by_index() -> None:
    gpus = parse_nvidia_smi(SMI)
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[0] == Gpu(
        0, "NVIDIA H100 80GB HBM3", "GPU-8f3a4b0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", 81559
    )


@pytest.mark.parametrize("line", ["0, GPU-x, name", "x, GPU-x, name, 10", "garbage"])
def test_malformed_nvidia_smi_output_is_an_error(line: str) -> None:
    with pytest.raises(GpuDiscoveryError):
        parse_nvidia_smi(line)


def test_fake_gpus_are_numbered_from_zero() -> None:
    assert [g.index for g in FakeGpus(3).discover()] == [0, 1, 2]


def test_device_files_give_their_numbers() -> None:
    gpus = DeviceFileGpus(("/dev/nvidia3", "/dev/nvidia0")).discover()
    assert [g.index for g in gpus] == [0, 3]
    with pytest.raises(GpuDiscoveryError):
        DeviceFileGpus(("/dev/nvidiactl",)).discover()


def test_missing_nvidia_smi_is_an_error() -> None:
    with pytest.raises(GpuDiscoveryError, match="not found"):
        NvidiaSmiGpus(command="no-such-nvidia-smi").discover()


@pytest.mark.parametrize(
    ("gres", "flag", "expected"),
    [
        ([], None, FakeGpus(0)),
        ([GresConfig("gpu", count=8)], None, FakeGpus(8)),
        ([GresConfig("gpu", count=8)], 2, FakeGpus(2)),
        ([GresConfig("gpu", count=0, autodetect="nvml")], None, NvidiaSmiGpus()),
        (
            [GresConfig("gpu", count=2, files=("/dev/nvidia0", "/dev/nvidia1"))],
            None,
            DeviceFileGpus(("/dev/nvidia0", "/dev/nvidia1")),
        ),
        ([GresConfig("mps", count=100)], None, FakeGpus(0)),
    ],
)
def test_config_chooses_the_discovery(
    gres: list[GresConfig], flag: int | None, expected: object
) -> None:
    assert gpu_discovery(gres, flag) == expected


@pytest.mark.gpu
def test_real_gpus_are_found_by_nvidia_smi() -> None:
    import shutil

    if shutil.which("nvidia-smi") is None:
        pytest.skip("no nvidia-smi on this machine")
    gpus = NvidiaSmiGpus().discover()
    assert gpus and all(g.uuid.startswith(("GPU-", "MIG-")) for g in gpus)
