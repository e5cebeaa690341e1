"""Devices a cgroup v2 denies: a BPF device program, as Slurm's task/cgroup loads there.

cgroup v2 has no ``devices.deny``: the kernel asks the BPF programs
(``BPF_PROG_TYPE_CGROUP_DEVICE``) attached to a process's cgroup and to its
ancestors whether it may open, read, write or mknod a device, and each must
allow it (they are attached with ``BPF_F_ALLOW_MULTI``). :func:`deny` builds a
program that refuses the given devices and allows all else, loads it with
bpf(2) and attaches it to a cgroup directory in place of the one attached
there before (``BPF_F_REPLACE``, at once): a job's steps do not pile programs
up on the job's cgroup (the kernel takes 64 a cgroup). A program lives as
long as its cgroup: removing the directory detaches it.

bpf(2) needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN to query); a container may
refuse it whatever its user. stepd imports this module: the standard
library alone.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections.abc import Sequence

# bpf(2)'s number on little-endian machines (struct bpf_insn is packed so here).
_SYSCALL = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "ppc64le": 361}
_PROG_LOAD, _PROG_ATTACH, _PROG_GET_FD_BY_ID, _PROG_QUERY = 5, 8, 13, 16
_PROG_TYPE_CGROUP_DEVICE = 15
_ATTACH_CGROUP_DEVICE = 6
_ALLOW_MULTI, _REPLACE = 2, 4
_MAX_PROGRAMS = 64  # a cgroup's, per attach type
_RACES = 64  # steps replacing a job's program together that one step may lose to
_ATTR_SIZE = 128  # bytes of union bpf_attr passed; those this module does not set are zero
_DEVICE_TYPE = {"b": 1, "c": 2}  # BPF_DEVCG_DEV_BLOCK, BPF_DEVCG_DEV_CHAR


def deny(directory: str, devices: Sequence[str]) -> None:
    """Make a cgroup v2 deny these devices to its processes, and no others (as root).

    Args:
        directory: the cgroup.
        devices: as the v1 devices controller writes them: ``c 195:1``.

    Raises:
        OSError: the kernel refused the program (not root, no bpf(2), not a cgroup v2...).
    """
    try:
        program = _load(_program(devices))
        try:
            target = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                _attach(target, program)
            finally:
                os.close(target)
        finally:
            os.close(program)
    except OSError as error:
        raise OSError(
            error.errno,
            f"cannot attach a BPF device program to {directory}: {error.strerror}",
        ) from None


def _program(devices: Sequence[str]) -> bytes:
    """The instructions: deny each device (all access), then allow.

    The context (struct bpf_cgroup_dev_ctx) holds access_type (the access
    in its upper 16 bits, the device's type in its lower), major and minor.
    """
    code = [
        _insn(0x61, dst=2, src=1, off=0),  # r2 = ctx->access_type
        _insn(0xBC, dst=3, src=2),  # w3 = w2
        _insn(0x54, dst=3, imm=0xFFFF),  # w3 &= 0xffff: the type
        _insn(0x61, dst=4, src=1, off=4),  # r4 = ctx->major
        _insn(0x61, dst=5, src=1, off=8),  # r5 = ctx->minor
    ]
    for device in devices:
        kind, numbers = device.split()
        major, minor = (int(n) for n in numbers.split(":"))
        code += [  # a device that differs skips to the next one's test
            _insn(0x55, dst=3, off=4, imm=_DEVICE_TYPE[kind]),  # if r3 != type goto +4
            _insn(0x55, dst=4, off=3, imm=major),  # if r4 != major goto +3
            _insn(0x55, dst=5, off=2, imm=minor),  # if r5 != minor goto +2
            _insn(0xB7, dst=0, imm=0),  # r0 = 0: denied
            _insn(0x95),  # exit
        ]
    code += [_insn(0xB7, dst=0, imm=1), _insn(0x95)]  # r0 = 1: allowed
    return b"".join(code)


def _insn(opcode: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", opcode, src << 4 | dst, off, imm)


def _load(code: bytes) -> int:
    """Load a program; its file descriptor (the verifier's complaint in the error)."""
    insns = ctypes.create_string_buffer(code, len(code))
    license_ = ctypes.create_string_buffer(b"GPL")
    log = ctypes.create_string_buffer(4096)
    attr = _attr(
        "=IIQQIIQII16s",
        _PROG_TYPE_CGROUP_DEVICE,
        len(code) // 8,
        ctypes.addressof(insns),
        ctypes.addressof(license_),
        1,  # log_level: the verifier says why it refuses
        len(log),
        ctypes.addressof(log),
        0,
        0,
        b"slurm_devices",
    )
    try:
        return _bpf(_PROG_LOAD, attr)
    except OSError as error:
        said = log.value.decode(errors="replace").strip().splitlines()
        if said:
            raise OSError(error.errno, f"{error.strerror} ({said[-1]})") from None
        raise


def _attach(target: int, program: int) -> None:
    """Attach in place of the program attached to the cgroup before, if any.

    The steps of a job that start together replace the job's program at
    once: the one a step found may be gone when it replaces it (ENOENT), as
    another step's replaced it first; it then tries again with the new one.
    """
    for _ in range(_RACES):
        try:
            _replace(target, program)
            return
        except FileNotFoundError:
            continue
    _replace(target, program)


def _replace(target: int, program: int) -> None:
    ids = (ctypes.c_uint32 * _MAX_PROGRAMS)()
    query = _attr(
        "=IIIIQI", target, _ATTACH_CGROUP_DEVICE, 0, 0, ctypes.addressof(ids), _MAX_PROGRAMS
    )
    _bpf(_PROG_QUERY, query)
    (count,) = struct.unpack_from("=I", query, 24)  # prog_cnt: those attached to it alone
    layout = "=IIIII"  # target_fd, attach_bpf_fd, attach_type, attach_flags, replace_bpf_fd
    if not count:
        _bpf(_PROG_ATTACH, _attr(layout, target, program, _ATTACH_CGROUP_DEVICE, _ALLOW_MULTI, 0))
        return
    old = _bpf(_PROG_GET_FD_BY_ID, _attr("=I", ids[0]))
    try:
        flags = _ALLOW_MULTI | _REPLACE
        _bpf(_PROG_ATTACH, _attr(layout, target, program, _ATTACH_CGROUP_DEVICE, flags, old))
    finally:
        os.close(old)


def _attr(layout: str, *values: int | bytes) -> ctypes.Array[ctypes.c_char]:
    """A union bpf_attr: the fields a command reads, zeros after them."""
    return ctypes.create_string_buffer(struct.pack(layout, *values), _ATTR_SIZE)


def _bpf(command: int, attr: ctypes.Array[ctypes.c_char]) -> int:
    machine = os.uname().machine
    number = _SYSCALL.get(machine)
    if number is None:
        raise OSError(errno.ENOSYS, f"bpf(2) is not known on {machine}")
    libc = ctypes.CDLL(None, use_errno=True)
    result: int = libc.syscall(ctypes.c_long(number), ctypes.c_int(command), attr, _ATTR_SIZE)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result
