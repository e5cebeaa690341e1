"""GPU discovery: nvidia-smi parsing and which discovery a node's config selects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minislurm.gpulinks import GpuLinks
from minislurm.gresconf import GresConfig
from nodeagent.gpus import (
    DeviceFileGpus,
    FakeGpus,
    Gpu,
    GpuDiscoveryError,
    NvidiaSmiGpus,
    device_file,
    gpu_discovery,
    parse_nvidia_smi,
    parse_topology,
)
from nodeagent.resources import discover

TOPO = Path(__file__).resolve().parent.parent / "data" / "nvidia-smi"

SMI = """\
1, GPU-2f0c2f7e-54b1-64a1-9b7c-6c2fd0a9b111, NVIDIA H100 80GB HBM3, 81559, 00000000:0F:00.0
0, GPU-8f3a4b0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b, NVIDIA H100 80GB HBM3, 81559, 00000000:07:00.0

"""


def test_nvidia_smi_csv_is_parsed_and_sorted_by_index() -> None:
    gpus = parse_nvidia_smi(SMI)
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[0] == Gpu(
        0,
        "NVIDIA H100 80GB HBM3",
        "GPU-8f3a4b0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
        81559,
        pci_bus_id="00000000:07:00.0",
    )


@pytest.mark.parametrize(
    "line", ["0, GPU-x, name, 10", "x, GPU-x, name, 10, 00000000:07:00.0", "garbage"]
)
def test_malformed_nvidia_smi_output_is_an_error(line: str) -> None:
    with pytest.raises(GpuDiscoveryError):
        parse_nvidia_smi(line)


def _driver_gpus(root: Path, minors: dict[str, int]) -> None:
    """The driver's /proc/driver/nvidia/gpus: an information file per PCI address."""
    for address, minor in minors.items():
        (root / address).mkdir(parents=True)
        (root / address / "information").write_text(
            f"Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t {address}\n"
            f"Device Minor: \t {minor}\nGPU Excluded:\t No\n"
        )


def test_a_gpus_device_file_is_its_drivers_minor_number_not_its_index(tmp_path: Path) -> None:
    _driver_gpus(tmp_path, {"0000:07:00.0": 2, "0000:0f:00.0": 0})
    assert device_file("00000000:07:00.0", str(tmp_path)) == "/dev/nvidia2"
    assert device_file("00000000:0F:00.0", str(tmp_path)) == "/dev/nvidia0"
    assert device_file("00000000:10:00.0", str(tmp_path)) == ""  # the driver does not say
    assert device_file("", str(tmp_path)) == ""


def test_fake_gpus_are_numbered_from_zero() -> None:
    assert [g.index for g in FakeGpus(3).discover()] == [0, 1, 2]


def test_device_files_give_their_numbers() -> None:
    gpus = DeviceFileGpus(("/dev/nvidia3", "/dev/nvidia0")).discover()
    assert [(g.index, g.device) for g in gpus] == [(0, "/dev/nvidia0"), (3, "/dev/nvidia3")]
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
        (
            [GresConfig("gpu", links=(-1, 4)), GresConfig("gpu", links=(4, -1))],
            None,
            FakeGpus(2, ((-1, 4), (4, -1))),
        ),
        ([GresConfig("gpu", links=(-1, 4)), GresConfig("gpu", links=(4, -1))], 3, FakeGpus(3)),
        (
            [GresConfig("gpu", autodetect="nvml", links=(-1,))],
            None,
            NvidiaSmiGpus(link_rows=((-1,),)),
        ),
    ],
)
def test_config_chooses_the_discovery(
    gres: list[GresConfig], flag: int | None, expected: object
) -> None:
    assert gpu_discovery(gres, flag) == expected


def test_a_dgx_topology_links_every_two_gpus_by_18_nvlinks() -> None:
    links = parse_topology((TOPO / "topo-dgx-h100.txt").read_text())
    assert links.gpus == tuple(range(8))
    assert links.matrix == tuple(tuple(-1 if a == b else 18 for b in range(8)) for a in range(8))


def test_a_pcie_box_topology_links_only_its_nvlink_pairs() -> None:
    links = parse_topology((TOPO / "topo-pcie-nvlink-pairs.txt").read_text())
    assert links.gpus == tuple(range(8))
    assert links.matrix[0] == (-1, 4, 0, 0, 0, 0, 0, 0)  # PHB and SYS are no links
    assert links.matrix[5] == (0, 0, 0, 0, 4, -1, 0, 0)
    assert [links.between(g, g ^ 1) for g in range(8)] == [4] * 8


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "no matrix"),
        ("GPU0\t X \n", "no matrix"),
        ("\tGPU0\tGPU1\nGPU0\t X \tNV4\n", "no matrix"),  # no row of GPU1
        ("\tGPU0\tGPU1\nGPU0\t X \nGPU1\tNV4\t X \n", "short nvidia-smi topo row"),
        ("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tSYS\t X \n", "GPU 0 has 4 links to GPU 1"),
    ],
)
def test_a_topology_without_a_sound_matrix_is_an_error(text: str, fragment: str) -> None:
    with pytest.raises(GpuDiscoveryError, match=fragment):
        parse_topology(text)


def test_configured_links_follow_the_gpus_they_describe() -> None:
    rows = ((-1, 4, 0), (4, -1, 0), (0, 0, -1))
    assert FakeGpus(3, rows).links() == GpuLinks((0, 1, 2), rows)
    assert FakeGpus(3).links() is None
    files = DeviceFileGpus(("/dev/nvidia2", "/dev/nvidia0", "/dev/nvidia1"), rows)
    assert [g.index for g in files.discover()] == [0, 1, 2]
    links = files.links()
    assert links == GpuLinks((2, 0, 1), rows)  # rows by line: nvidia2 first
    assert (links.between(2, 0), links.between(0, 1)) == (4, 0)
    with pytest.raises(GpuDiscoveryError, match=r"gres\.conf Links="):
        FakeGpus(2, rows).links()


def test_the_node_registers_its_links_row_by_row_in_the_order_of_its_gpus() -> None:
    rows = ((-1, 4, 0), (4, -1, 0), (0, 0, -1))  # nvidia2 and nvidia0 linked
    files = DeviceFileGpus(("/dev/nvidia2", "/dev/nvidia0", "/dev/nvidia1"), rows)
    found = discover(None, files, config_overrides=False)
    assert found.gpus == (0, 1, 2)
    assert found.gpu_links == (-1, 0, 4, 0, -1, 0, 4, 0, -1)
    assert discover(None, FakeGpus(2), config_overrides=False).gpu_links == ()


def _fake_nvidia_smi(tmp_path: Path, topology: str) -> str:
    """An nvidia-smi that answers the GPU query and ``topo -m`` as an 8-GPU node would."""
    (tmp_path / "topo.txt").write_text(topology)
    query = "".join(
        f"{i}, GPU-{i:08d}, NVIDIA H100 80GB HBM3, 81559, 00000000:{i + 1:02X}:00.0\n"
        for i in range(8)
    )
    (tmp_path / "query.txt").write_text(query)
    script = tmp_path / "nvidia-smi"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = topo ]; then cat {tmp_path}/topo.txt; '
        f"else cat {tmp_path}/query.txt; fi\n"
    )
    script.chmod(0o755)
    return str(script)


def test_nvidia_smi_gives_the_gpus_and_their_links(tmp_path: Path) -> None:
    driver = tmp_path / "gpus"
    _driver_gpus(driver, {f"0000:{i + 1:02x}:00.0": 7 - i for i in range(8)})
    smi = NvidiaSmiGpus(
        _fake_nvidia_smi(tmp_path, (TOPO / "topo-pcie-nvlink-pairs.txt").read_text()),
        driver=str(driver),
    )
    gpus = smi.discover()
    assert [g.index for g in gpus] == list(range(8))
    assert [g.device for g in gpus] == [f"/dev/nvidia{7 - i}" for i in range(8)]
    links = smi.links()
    assert links is not None and links.between(6, 7) == 4 and links.between(1, 2) == 0


def test_gres_conf_links_win_over_nvidia_smi_and_a_failed_topology_gives_none(
    tmp_path: Path,
) -> None:
    command = _fake_nvidia_smi(tmp_path, "no matrix here\n")
    assert NvidiaSmiGpus(command).links() is None
    rows = tuple(tuple(-1 if a == b else 2 for b in range(8)) for a in range(8))
    assert NvidiaSmiGpus(command, rows).links() == GpuLinks(tuple(range(8)), rows)


@pytest.mark.gpu
def test_real_gpus_are_found_by_nvidia_smi() -> None:
    import shutil

    if shutil.which("nvidia-smi") is None:
        pytest.skip("no nvidia-smi on this machine")
    gpus = NvidiaSmiGpus().discover()
    assert gpus and all(g.uuid.startswith(("GPU-", "MIG-")) for g in gpus)
    assert all(os.path.exists(g.device) for g in gpus)  # the driver's minor numbers
    links = NvidiaSmiGpus().links()
    assert links is None or sorted(links.gpus) == [g.index for g in gpus]
