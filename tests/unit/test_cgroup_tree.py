"""Tests of nodeagent.cgroups on trees of plain files laid out as the kernel's.

What the kernel does with the files (limits, OOM kills, denied devices) is the e2e tests'
(tests/e2e/test_cgroup_limits.py); here: which directories are made, which files are
written with what, how limits are computed, how the OOM count is read, and job.json.
"""

from __future__ import annotations

import os
from pathlib import Path

from minislurm.cgroupconf import CgroupConfig
from nodeagent import cgroups, spool
from nodeagent.cgroups import MIB, NO_SWAP_LIMIT, Confinement, NodeCgroups

GIB_KIB = 1 << 20  # a GiB, in KiB


def _files(directory: Path, **contents: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in contents.items():
        (directory / name.replace("__", ".")).write_text(text)


def _v2_tree(root: Path, controllers: str) -> None:
    _files(root, cgroup__controllers=controllers, cgroup__subtree_control="")
    _files(root / "system.slice", cgroup__subtree_control="memory pids")
    _files(root / "system.slice" / "n1_slurmstepd.scope", cgroup__subtree_control="")


def test_limits_are_the_allocated_memory_times_allowed_ram_and_at_least_min_ram() -> None:
    tree = NodeCgroups(
        version=1,
        memory="/m/slurm_n1",
        devices="/d/slurm_n1",
        allowed_ram=150.0,
        min_ram=30 * MIB,
        allowed_swap=10.0,
        gpu_devices=((0, "c 195:0"), (1, "c 195:1"), (2, "c 195:2")),
    )
    got = tree.confinement(1000, 7, "0", (GIB_KIB, 10 << 10), ((0, 1), (1,)))
    assert got == Confinement(
        version=1,
        memory="/m/slurm_n1/uid_1000/job_7",
        devices="/d/slurm_n1/uid_1000/job_7",
        step="step_0",
        job_mem=3 << 29,  # 1.5 GiB
        step_mem=30 * MIB,  # 15 MiB asked, MinRAMSpace given
        job_swap=(1 << 30) // 10,
        step_swap=MIB,
        job_deny=("c 195:2",),  # not the job's
        step_deny=("c 195:0",),  # the job's, not the step's
    )


def test_without_memory_there_is_no_limit_and_v2_jobs_have_no_uid_level() -> None:
    tree = NodeCgroups(version=2, memory="/cg/system.slice/n1_slurmstepd.scope", devices="")
    got = tree.confinement(1000, 7, "batch", (0, 0), ((), ()))
    assert got == Confinement(2, "/cg/system.slice/n1_slurmstepd.scope/job_7", "", "step_batch")
    assert (got.job_mem, got.step_mem, got.job_swap) == (0, 0, NO_SWAP_LIMIT)


def test_v2_prepare_hands_the_memory_controller_down_to_the_scope(tmp_path: Path) -> None:
    _v2_tree(tmp_path, "cpu memory pids")
    conf = CgroupConfig(mountpoint=str(tmp_path), constrain_ram=True)
    tree, said = cgroups.prepare(conf, "n1", ())
    scope = tmp_path / "system.slice" / "n1_slurmstepd.scope"
    assert tree == NodeCgroups(version=2, memory=str(scope), devices="", min_ram=30 * MIB)
    assert said == f"cgroup/v2: memory in {scope}"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory"
    assert (tmp_path / "system.slice" / "cgroup.subtree_control").read_text() == "memory pids"
    assert (scope / "cgroup.subtree_control").read_text() == "+memory"


def test_v2_without_the_memory_controller_confines_nothing_and_says_why(tmp_path: Path) -> None:
    _v2_tree(tmp_path, "hugetlb")
    conf = CgroupConfig(mountpoint=str(tmp_path), constrain_ram=True, constrain_devices=True)
    tree, said = cgroups.prepare(conf, "n1", ())
    assert tree is None
    memory, devices = said.split("; ")
    assert memory == (
        f"cgroup/v2: the memory controller is not available in {tmp_path} "
        "(cgroup.controllers: hugetlb)"
    )
    scope = tmp_path / "system.slice" / "n1_slurmstepd.scope"  # a plain directory: no program
    assert devices.startswith(f"GPUs not denied (cannot attach a BPF device program to {scope}: ")
    assert devices.endswith("): they are bound by CUDA_VISIBLE_DEVICES alone")


def test_prepare_says_what_it_will_not_do(tmp_path: Path) -> None:
    empty = CgroupConfig(mountpoint=str(tmp_path), constrain_ram=True)
    assert cgroups.prepare(empty, "n1", ()) == (None, f"{tmp_path} holds no cgroup v1 or v2 tree")
    assert cgroups.prepare(CgroupConfig(), "n1", ())[0] is None  # nothing constrained
    _v2_tree(tmp_path, "memory")
    v1 = CgroupConfig(plugin="cgroup/v1", mountpoint=str(tmp_path), constrain_ram=True)
    assert cgroups.prepare(v1, "n1", ()) == (
        None,
        f"CgroupPlugin=cgroup/v1, but {tmp_path} is cgroup/v2",
    )
    off = CgroupConfig(plugin="disabled", mountpoint=str(tmp_path), constrain_ram=True)
    assert cgroups.prepare(off, "n1", ())[0] is None


def test_a_v2_step_enters_its_cgroup_under_its_job_with_both_limits(tmp_path: Path) -> None:
    job = tmp_path / "job_7"
    _files(job, cgroup__subtree_control="")
    confinement = Confinement(2, str(job), "", "step_0", 3 * MIB, 2 * MIB, MIB, 0)
    cgroups.enter(confinement, 4242)
    step = job / "step_0"
    assert (job / "cgroup.subtree_control").read_text() == "+memory"
    assert (job / "memory.max").read_text() == str(3 * MIB)
    assert not (job / "memory.swap.max").exists()  # the kernel's file is not there: no swap
    assert (step / "memory.max").read_text() == str(2 * MIB)
    assert (step / "cgroup.procs").read_text() == "4242"


def test_a_v1_step_gets_memory_swap_and_device_limits(tmp_path: Path) -> None:
    memory, devices = tmp_path / "memory" / "job_7", tmp_path / "devices" / "job_7"
    _files(memory, memory__memsw__limit_in_bytes="")
    _files(memory / "step_0", memory__memsw__limit_in_bytes="")
    confinement = Confinement(
        1, str(memory), str(devices), "step_0", 3 * MIB, 2 * MIB, MIB, MIB, ("c 195:1",), ()
    )
    cgroups.enter(confinement, 4242)
    assert (memory / "memory.limit_in_bytes").read_text() == str(3 * MIB)
    assert (memory / "memory.memsw.limit_in_bytes").read_text() == str(4 * MIB)
    assert (memory / "step_0" / "memory.memsw.limit_in_bytes").read_text() == str(3 * MIB)
    assert (devices / "devices.deny").read_text() == "c 195:1 rwm"
    assert not (devices / "step_0" / "devices.deny").exists()
    assert (memory / "step_0" / "cgroup.procs").read_text() == "4242"
    assert (devices / "step_0" / "cgroup.procs").read_text() == "4242"


def test_oom_kills_are_read_from_the_steps_own_counter(tmp_path: Path) -> None:
    v2 = Confinement(2, str(tmp_path / "v2"), "", "step_0")
    v1 = Confinement(1, str(tmp_path / "v1"), "", "step_batch")
    assert cgroups.oom_kills(v2) == cgroups.oom_kills(v1) == 0  # nothing there: unknown
    _files(tmp_path / "v2" / "step_0", memory__events="low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\n")
    _files(tmp_path / "v1" / "step_batch", memory__oom_control="under_oom 0\noom_kill 3\n")
    assert (cgroups.oom_kills(v2), cgroups.oom_kills(v1)) == (1, 3)


def test_a_jobs_cgroups_go_deepest_first_and_only_its_own(tmp_path: Path) -> None:
    node = tmp_path / "slurm_n1"
    for step in ("job_5/step_batch", "job_5/step_0", "job_6/step_batch"):
        (node / "uid_0" / step).mkdir(parents=True)
    (node / "uid_1000" / "job_5" / "step_0").mkdir(parents=True)
    tree = NodeCgroups(version=1, memory=str(node), devices="")
    assert tree.remove_job(5)
    assert sorted(p.name for p in node.iterdir()) == ["uid_0"]  # uid_1000 held job 5 alone
    assert os.listdir(node / "uid_0") == ["job_6"]
    (node / "uid_0" / "job_6" / "step_batch" / "left").mkdir()  # a cgroup that cannot go yet
    (node / "uid_0" / "job_6" / "step_batch" / "left" / "x").write_text("")
    assert not tree.remove_job(6)


def test_a_steps_cgroups_go_when_it_ends_and_the_jobs_stay(tmp_path: Path) -> None:
    v1, v2 = tmp_path / "v1" / "slurm_n1", tmp_path / "v2" / "n1_slurmstepd.scope"
    for step in ("step_batch", "step_0", "step_1"):
        (v1 / "uid_1000" / "job_5" / step).mkdir(parents=True)
        (v2 / "job_5" / step).mkdir(parents=True)
    (v1 / "uid_0" / "job_6" / "step_0").mkdir(parents=True)
    NodeCgroups(version=1, memory=str(v1), devices="").remove_step(5, "0")
    NodeCgroups(version=2, memory=str(v2), devices=str(v2)).remove_step(5, "0")
    assert sorted(os.listdir(v1 / "uid_1000" / "job_5")) == ["step_1", "step_batch"]
    assert sorted(os.listdir(v2 / "job_5")) == ["step_1", "step_batch"]
    assert os.listdir(v1 / "uid_0" / "job_6") == ["step_0"]  # another job's step 0


def test_a_confinement_survives_job_json(tmp_path: Path) -> None:
    confinement = Confinement(1, "/m/job_7", "/d/job_7", "step_batch", 1, 2, 3, 4, ("c 1:2",), ())
    job = spool.BatchJob(
        job_id=7, uid=0, gid=0, user="root", umask=0o022, argv=(), env={}, work_dir="/",
        stdout="", stderr="", stdin="", node="n1", kill_wait=2, cgroup=confinement,
    )  # fmt: skip
    spool.create(str(tmp_path / "job"), job, b"#!/bin/sh\n")
    read = spool.read_job(str(tmp_path / "job"))
    assert read == job
    assert isinstance(read, spool.BatchJob) and read.as_step("/x").cgroup == confinement
