"""Tests of nodeagent.devicebpf against the kernel: a cgroup v2 of this machine, as root.

A process moved into the cgroup opens /dev/null (c 1:3) and /dev/zero (c 1:5): what the
program attached there denies fails with EPERM. Skipped where there is no cgroup v2 mount
or the kernel refuses bpf(2) (not root, a container's seccomp).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cgroup2_mount

from nodeagent import devicebpf

# Moves itself into the cgroup given, then says which of the two devices it could open.
OPEN = (
    "import os, sys\n"
    "with open(os.path.join(sys.argv[1], 'cgroup.procs'), 'w') as f:\n"
    "    f.write(str(os.getpid()))\n"
    "for name in ('null', 'zero'):\n"
    "    try:\n"
    "        os.close(os.open('/dev/' + name, os.O_RDWR))\n"
    "        print(name, 'opened')\n"
    "    except OSError as error:\n"
    "        print(name, error.strerror)\n"
)


@pytest.fixture
def cgroup(tmp_path: Path) -> Iterator[Path]:
    """A cgroup v2 of this test's own, removed after it."""
    mount = cgroup2_mount()
    if mount is None or os.geteuid() != 0:
        pytest.skip("needs root and a cgroup v2 mount")
    directory = mount / f"minislurm-test-{os.getpid()}-{tmp_path.name}"
    try:
        directory.mkdir()
    except OSError as error:
        pytest.skip(f"cannot make a cgroup in {mount}: {error.strerror}")
    try:
        devicebpf.deny(str(directory), ())
    except OSError as error:
        directory.rmdir()
        pytest.skip(str(error))
    yield directory
    for child in sorted(directory.glob("**/"), key=lambda p: len(p.parts), reverse=True):
        child.rmdir()  # the processes moved in have exited: rmdir detaches their programs


def _opens(cgroup: Path) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", OPEN, str(cgroup)], capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


@pytest.mark.timeout(60)
def test_the_devices_denied_cannot_be_opened_and_the_others_can(cgroup: Path) -> None:
    assert _opens(cgroup) == ["null opened", "zero opened"]
    devicebpf.deny(str(cgroup), ["c 1:3"])
    assert _opens(cgroup) == ["null Operation not permitted", "zero opened"]


@pytest.mark.timeout(60)
def test_a_new_program_replaces_the_cgroups_last_and_adds_to_its_parents(cgroup: Path) -> None:
    devicebpf.deny(str(cgroup), ["c 1:3", "b 1:5"])  # a block device of that number: not zero
    devicebpf.deny(str(cgroup), ["c 1:5"])  # in place of the first: null is allowed again
    assert _opens(cgroup) == ["null opened", "zero Operation not permitted"]
    child = cgroup / "step_0"
    child.mkdir()
    devicebpf.deny(str(child), ["c 1:3"])  # the parent's still holds for the child
    assert _opens(child) == ["null Operation not permitted", "zero Operation not permitted"]
    devicebpf.deny(str(child), ())
    assert _opens(child) == ["null opened", "zero Operation not permitted"]


@pytest.mark.timeout(60)
def test_steps_that_start_together_all_replace_their_jobs_program(cgroup: Path) -> None:
    failed: list[OSError] = []

    def step() -> None:
        for _ in range(25):
            try:
                devicebpf.deny(str(cgroup), ["c 1:3"])
            except OSError as error:
                failed.append(error)

    steps = [threading.Thread(target=step) for _ in range(4)]
    for thread in steps:
        thread.start()
    for thread in steps:
        thread.join()
    assert failed == []
    assert _opens(cgroup) == ["null Operation not permitted", "zero opened"]


def test_a_directory_that_is_no_cgroup_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=f"cannot attach a BPF device program to {tmp_path}: "):
        devicebpf.deny(str(tmp_path), ["c 195:0"])
