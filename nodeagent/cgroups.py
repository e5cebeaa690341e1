"""Steps confined in cgroups: Slurm's ``TaskPlugin=task/cgroup``, on cgroup v1 or v2.

slurmd, as root, prepares each node's part of the cgroup tree at its start
(:func:`prepare`), as cgroup.conf says (``CgroupPlugin``, ``Constrain*``):

- cgroup v1 (a tmpfs at ``CgroupMountpoint`` with a hierarchy per
  controller): ``<mount>/memory<slurmd's cgroup>/slurm_<node>`` and the same
  under ``devices``; a job's is ``uid_<uid>/job_<id>`` there, as Slurm's
  (``slurm_<node>``: Slurm's name where several slurmd share a host);
- cgroup v2 (cgroup2 at ``CgroupMountpoint``):
  ``<mount>/system.slice/<node>_slurmstepd.scope``, with the memory
  controller enabled down to it, Slurm's scope as it makes it without
  systemd (``IgnoreSystemd``); a job's is ``job_<id>`` there. Enabling the
  controller needs a tree slurmd may change: a cgroup that holds processes
  (a container's own root, say) cannot hand controllers to its children.

Where the tree cannot be prepared (not root, no memory controller, a
hybrid host asked for v2...), :func:`prepare` says why and the node
enforces memory by sampling instead (nodeagent.usage).

For each step, slurmd writes in its job.json a :class:`Confinement`: the
job's directories and the limits. stepd, still root, makes the job's and
the step's directories (``step_<0|batch|...>``), writes the limits and
moves itself in (:func:`enter`); its tasks are its children and start
there. The kernel does the rest: a step whose processes together pass
its limit has one of them killed by the OOM killer at once (no window
between samples), the step's other processes run on, and stepd reads at
the end how many were killed (:func:`oom_kills`): the step ends
``OUT_OF_MEMORY``. Limits are Slurm's: the allocated memory times
``AllowedRAMSpace`` percent, at least ``MinRAMSpace``; the job's on the job
directory, the step's on the step's; swap (``ConstrainSwapSpace``) the
allocated memory times ``AllowedSwapSpace`` percent on top.

``ConstrainDevices``: the node's GPUs that are not the job's (then not the
step's) are denied to it, so a task that clears CUDA_VISIBLE_DEVICES still
cannot open them: in the devices hierarchy on cgroup v1, by a BPF device
program attached to the job's and the step's cgroups on v2
(nodeagent.devicebpf), as Slurm's. On v2 the devices need no controller:
they are confined where memory cannot be (a container's root that holds
processes). slurmd attaches a program that allows all to the node's scope
at its start, to know the kernel lets it.

slurmd removes a step's directories once its stepd has exited
(:meth:`NodeCgroups.remove_step`) and a job's once nothing of it runs on
the node (:meth:`NodeCgroups.remove_job`).

stepd imports this module: it imports the standard library and
nodeagent.devicebpf alone at module level (minislurm.cgroupconf only to
type :func:`prepare`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from nodeagent import devicebpf

if TYPE_CHECKING:
    from minislurm.cgroupconf import CgroupConfig

SLICE = "system.slice"
MIB = 1 << 20
NO_SWAP_LIMIT = -1


class Confinement(NamedTuple):
    """Where a step's cgroups go and what they allow (in its job.json)."""

    version: int  # 1 or 2
    memory: str  # the job's directory for memory limits ("": none)
    devices: str  # the job's directory for device limits (v2: memory's; "": none)
    step: str  # the step's directory under the job's: step_0, step_batch...
    job_mem: int = 0  # bytes the job's processes on the node may hold; 0: no limit
    step_mem: int = 0  # bytes the step's may hold
    job_swap: int = NO_SWAP_LIMIT  # bytes of swap on top (ConstrainSwapSpace)
    step_swap: int = NO_SWAP_LIMIT
    job_deny: tuple[str, ...] = ()  # devices the job may not open: "c 195:3"
    step_deny: tuple[str, ...] = ()  # and the step neither


# --- stepd's side: make the step's cgroups, enter them, and count what the kernel killed ----


def enter(confinement: Confinement, pid: int) -> None:
    """Make the job's and the step's cgroups, set their limits and move ``pid`` in (as root).

    Args:
        confinement: the step's (job.json).
        pid: stepd's own pid: the tasks it forks start in its cgroups.

    Raises:
        OSError: a directory or a file could not be written.
    """
    if confinement.version == 2:
        _enter_v2(confinement, pid)
    else:
        _enter_v1(confinement, pid)


def _enter_v1(c: Confinement, pid: int) -> None:
    """A hierarchy per controller: ``pid`` moves into the step's directory in each."""
    if c.memory:
        step = os.path.join(c.memory, c.step)
        os.makedirs(step, exist_ok=True)
        _limit_v1(c.memory, c.job_mem, c.job_swap)
        _limit_v1(step, c.step_mem, c.step_swap)
        _write(step, "cgroup.procs", str(pid))
    if c.devices:  # the job's denials first: a new cgroup starts with its parent's
        os.makedirs(c.devices, exist_ok=True)
        for device in c.job_deny:
            _write(c.devices, "devices.deny", f"{device} rwm")
        step = os.path.join(c.devices, c.step)
        os.makedirs(step, exist_ok=True)
        for device in c.step_deny:
            _write(step, "devices.deny", f"{device} rwm")
        _write(step, "cgroup.procs", str(pid))


def _enter_v2(c: Confinement, pid: int) -> None:
    """One directory for both: limits and denials first, then ``pid`` moves in."""
    job = c.memory or c.devices
    step = os.path.join(job, c.step)
    os.makedirs(step, exist_ok=True)
    if c.memory:  # the step's own memory.max needs the controller in its job's
        _enable_memory(job)
        _limit_v2(job, c.job_mem, c.job_swap)
        _limit_v2(step, c.step_mem, c.step_swap)
    if c.devices:
        devicebpf.deny(job, c.job_deny)
        devicebpf.deny(step, c.step_deny)
    _write(step, "cgroup.procs", str(pid))


def oom_kills(confinement: Confinement) -> int:
    """How many of the step's processes the kernel's OOM killer has killed (0: unknown).

    Args:
        confinement: the step's.
    """
    if not confinement.memory:
        return 0
    name = "memory.events" if confinement.version == 2 else "memory.oom_control"
    try:
        with open(os.path.join(confinement.memory, confinement.step, name)) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    for line in lines:
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0


def _limit_v1(directory: str, limit: int, swap: int) -> None:
    if not limit:
        return
    # memory + swap may never be below memory: raise it first when both grow.
    memsw = os.path.join(directory, "memory.memsw.limit_in_bytes")
    if swap != NO_SWAP_LIMIT and os.path.exists(memsw):
        _write(directory, "memory.memsw.limit_in_bytes", "-1")
        _write(directory, "memory.limit_in_bytes", str(limit))
        _write(directory, "memory.memsw.limit_in_bytes", str(limit + swap))
    else:
        _write(directory, "memory.limit_in_bytes", str(limit))


def _limit_v2(directory: str, limit: int, swap: int) -> None:
    if not limit:
        return
    _write(directory, "memory.max", str(limit))
    if swap != NO_SWAP_LIMIT and os.path.exists(os.path.join(directory, "memory.swap.max")):
        _write(directory, "memory.swap.max", str(swap))


def _enable_memory(directory: str) -> None:
    """Hand the memory controller to a v2 cgroup's children (once; none may live in it)."""
    with open(os.path.join(directory, "cgroup.subtree_control")) as f:
        if "memory" in f.read().split():
            return
    try:
        _write(directory, "cgroup.subtree_control", "+memory")
    except OSError as error:
        if error.errno == errno.EBUSY:
            raise OSError(
                error.errno, f"processes live in {directory}: it cannot hand out controllers"
            ) from None
        raise


def _write(directory: str, name: str, value: str) -> None:
    path = os.path.join(directory, name)
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError as error:
        raise OSError(error.errno, f"cannot write {value!r} to {path}: {error.strerror}") from None


# --- slurmd's side: the node's tree, each step's confinement, a job's removal ---------------


@dataclass(frozen=True)
class NodeCgroups:
    """A node's part of the cgroup tree, and how its jobs are confined there."""

    version: int  # 1 or 2
    memory: str  # the node's directory for memory limits ("": memory is not confined here)
    devices: str  # the node's directory in the devices hierarchy ("": devices are not)
    allowed_ram: float = 100.0  # percent of the allocated memory (AllowedRAMSpace)
    min_ram: int = 30 * MIB  # bytes, the least limit (MinRAMSpace)
    allowed_swap: float | None = None  # percent on top, when swap is constrained
    gpu_devices: tuple[tuple[int, str], ...] = ()  # GPU index, its device ("c 195:0")

    def confinement(
        self,
        uid: int,
        job_id: int,
        step: str,
        memory: tuple[int, int],
        gpus: tuple[tuple[int, ...], tuple[int, ...]],
    ) -> Confinement:
        """A step's confinement.

        Args:
            uid: the job's user.
            job_id: the job.
            step: the step as Slurm writes it (0, batch, interactive...).
            memory: KiB the job and the step may hold on the node (0: no limit).
            gpus: the GPUs of the job and of the step on the node.

        Returns:
            What stepd is to set up.
        """
        job_dir = f"uid_{uid}/job_{job_id}" if self.version == 1 else f"job_{job_id}"
        job_mem, step_mem = memory
        job_gpus, step_gpus = gpus
        return Confinement(
            version=self.version,
            memory=os.path.join(self.memory, job_dir) if self.memory else "",
            devices=os.path.join(self.devices, job_dir) if self.devices else "",
            step=f"step_{step}",
            job_mem=self._ram(job_mem),
            step_mem=self._ram(step_mem),
            job_swap=self._swap(job_mem),
            step_swap=self._swap(step_mem),
            job_deny=tuple(d for i, d in self.gpu_devices if i not in job_gpus),
            step_deny=tuple(d for i, d in self.gpu_devices if i in job_gpus and i not in step_gpus),
        )

    def _ram(self, kib: int) -> int:
        return max(int(kib * 1024 * self.allowed_ram / 100), self.min_ram) if kib else 0

    def _swap(self, kib: int) -> int:
        if self.allowed_swap is None or not kib:
            return NO_SWAP_LIMIT
        return int(kib * 1024 * self.allowed_swap / 100)

    def remove_job(self, job_id: int) -> bool:
        """Remove a job's directories, deepest first (what still holds a process stays).

        Args:
            job_id: the job, of which nothing runs here any more.

        Returns:
            Whether none is left (a stepd that is still exiting keeps its own).
        """
        left = False
        for parent, job in self._job_dirs(job_id):
            _remove_tree(job)
            left = left or os.path.isdir(job)
            if self.version == 1:
                _try_rmdir(parent)  # the user's, when it was their last job here
        return not left

    def remove_step(self, job_id: int, step: str) -> None:
        """Remove a step's directories once its stepd has exited, as Slurm's stepd does.

        A job that runs thousands of steps would otherwise hold thousands of
        empty cgroups until it ends; one whose processes outlived the step
        stays until then (:meth:`remove_job`).

        Args:
            job_id: the job.
            step: the step as Slurm writes it (0, 1...).
        """
        for _, job in self._job_dirs(job_id):
            _remove_tree(os.path.join(job, f"step_{step}"))

    def _job_dirs(self, job_id: int) -> Iterator[tuple[str, str]]:
        """The job's directory in each tree (one on v2), with the one that holds it."""
        for root in {r for r in (self.memory, self.devices) if r}:
            if self.version == 2:
                yield root, os.path.join(root, f"job_{job_id}")
                continue
            for user in _listdir(root):
                if user.startswith("uid_"):
                    parent = os.path.join(root, user)
                    yield parent, os.path.join(parent, f"job_{job_id}")


def _listdir(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _remove_tree(directory: str) -> None:
    """rmdir a cgroup and its children (a cgroup's files go with it; rmtree would fail)."""
    for entry in _listdir(directory):
        child = os.path.join(directory, entry)
        if os.path.isdir(child) and not os.path.islink(child):
            _remove_tree(child)
    _try_rmdir(directory)


def _try_rmdir(directory: str) -> None:
    try:
        os.rmdir(directory)
    except OSError:
        pass  # gone already, or something of it still runs (EBUSY), or another job's


def prepare(
    conf: CgroupConfig, node: str, gpu_files: tuple[tuple[int, str], ...]
) -> tuple[NodeCgroups | None, str]:
    """Prepare a node's cgroups, as cgroup.conf asks (slurmd, at its start, as root).

    Args:
        conf: cgroup.conf.
        node: the node's name.
        gpu_files: its GPUs' indices and device files (ConstrainDevices).

    Returns:
        The node's tree (None: nothing is confined here) and what to log about it.
    """
    wanted = conf.constrains_memory or conf.constrain_devices
    if conf.plugin == "disabled" or not wanted:
        return None, "no cgroup constraints (cgroup.conf)"
    version = _version(conf)
    if version == 0:
        return None, f"{conf.mountpoint} holds no cgroup v1 or v2 tree"
    label = f"cgroup/v{version}"
    if conf.plugin not in ("autodetect", label):
        return None, f"CgroupPlugin={conf.plugin}, but {conf.mountpoint} is {label}"
    memory = devices = ""
    said = [f"{label}: memory not constrained"]
    if conf.constrains_memory:
        try:
            memory = _prepare_memory(version, conf.mountpoint, node)
            said = [f"{label}: memory in {memory}"]
        except OSError as error:
            said = [f"{label}: {error.strerror or error}"]
    if conf.constrain_devices:
        try:
            devices = _prepare_devices(version, conf.mountpoint, node)
            said.append(f"GPUs not allocated denied in {devices}")
        except OSError as error:
            said.append(
                f"GPUs not denied ({error.strerror or error}): "
                "they are bound by CUDA_VISIBLE_DEVICES alone"
            )
    if not memory and not devices:
        return None, "; ".join(said)  # nothing this node can confine
    tree = NodeCgroups(
        version=version,
        memory=memory,
        devices=devices,
        allowed_ram=conf.allowed_ram if conf.constrain_ram else 100.0,
        min_ram=conf.min_ram * MIB,
        allowed_swap=conf.allowed_swap if conf.constrain_swap else None,
        gpu_devices=_devices(gpu_files) if devices else (),
    )
    return tree, "; ".join(said)


def _version(conf: CgroupConfig) -> int:
    """1 or 2 as the mount point holds (autodetect) or cgroup.conf says; 0: neither there."""
    if os.path.exists(os.path.join(conf.mountpoint, "cgroup.controllers")):
        return 2
    if os.path.isdir(os.path.join(conf.mountpoint, "memory")) or os.path.isdir(
        os.path.join(conf.mountpoint, "devices")
    ):
        return 1
    return 0


def _prepare_memory(version: int, mount: str, node: str) -> str:
    if version == 1:
        return _prepare_v1(mount, "memory", node)
    with open(os.path.join(mount, "cgroup.controllers")) as f:
        available = f.read().split()
    if "memory" not in available:
        raise OSError(
            errno.ENOENT,
            f"the memory controller is not available in {mount} "
            f"(cgroup.controllers: {' '.join(available) or 'none'})",
        )
    scope = _make(_scope(mount, node))
    for directory in (mount, os.path.dirname(scope), scope):
        _enable_memory(directory)
    return scope


def _prepare_devices(version: int, mount: str, node: str) -> str:
    if version == 1:
        return _prepare_v1(mount, "devices", node)
    scope = _make(_scope(mount, node))
    devicebpf.deny(scope, ())  # allows all: says whether the kernel lets slurmd attach
    return scope


def _scope(mount: str, node: str) -> str:
    """A node's cgroup v2: Slurm's scope for slurmstepd, as it makes it without systemd."""
    return os.path.join(mount, SLICE, f"{node}_slurmstepd.scope")


def _prepare_v1(mount: str, controller: str, node: str) -> str:
    """The node's directory in a v1 hierarchy, under slurmd's own cgroup there."""
    hierarchy = os.path.join(mount, controller)
    probe = "memory.limit_in_bytes" if controller == "memory" else "devices.deny"
    if not os.path.exists(os.path.join(hierarchy, probe)):
        raise OSError(errno.ENOENT, f"{hierarchy} is not a cgroup v1 {controller} hierarchy")
    return _make(os.path.join(hierarchy + _own_cgroup(controller), f"slurm_{node}"))


def _make(directory: str) -> str:
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise OSError(error.errno, f"cannot make {directory}: {error.strerror}") from None
    return directory


def _own_cgroup(controller: str) -> str:
    """This process's cgroup in a v1 hierarchy ("" for its root)."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controller in controllers.split(","):
                return path.rstrip("/")
    return ""


def _devices(gpu_files: tuple[tuple[int, str], ...]) -> tuple[tuple[int, str], ...]:
    """Each GPU's character device as the devices controller names it (missing files: left out)."""
    found = []
    for index, path in gpu_files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode):
            found.append((index, f"c {os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"))
    return tuple(found)
