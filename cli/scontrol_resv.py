"""scontrol create|update|delete|show reservation.

``create reservation`` takes ReservationName, StartTime (``now``,
``now+1hour``, ``2026-12-01T08:00`` ...), Duration (minutes or
``[days-]hh:mm:ss``, ``UNLIMITED``) or EndTime, Nodes (a hostlist or ALL)
or NodeCnt (and PartitionName), Users, Accounts and Flags (MAINT,
IGNORE_JOBS, OVERLAP). Messages and the ``show`` layout are Slurm 22.05's.

Imports cli and minislurm's lean modules only.
"""

from __future__ import annotations

import os
import sys
import time

from cli import common, fmt
from cli.timespec import parse_time
from minislurm import hostlist, units
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

_KEYS = {
    "reservationname": "name", "reservation": "name", "starttime": "start_time",
    "endtime": "end_time", "duration": "duration", "nodes": "nodes", "nodecnt": "node_count",
    "users": "users", "accounts": "accounts", "flags": "flags", "partitionname": "partition",
    "partition": "partition",
}  # fmt: skip
_NOT_CREATED = "  No reservation created."


def _fail(text: str) -> int:
    sys.stderr.write(text + "\n")
    return 1


def _fields(pairs: list[tuple[str, str]], verb: str) -> dict[str, object] | int:
    """The request's fields from ``Key=Value`` pairs, or an exit status after an error."""
    fields: dict[str, object] = {}
    now = time.time()
    tail = _NOT_CREATED if verb == "create" else ""
    for key, value in pairs:
        name = _KEYS.get(key.lower())
        if name is None:
            return _fail(f"scontrol: error: Invalid option: {key}={value}" if value else
                         f"scontrol: error: Invalid option: {key}")  # fmt: skip
        if name in ("start_time", "end_time"):
            try:
                fields[name] = parse_time(value, now)
            except ValueError as err:
                label = "start" if name == "start_time" else "end"
                sys.stderr.write(f"{err}\n")
                return _fail(f"scontrol: error: Invalid {label} time {key}={value}.{tail}")
        elif name == "duration":
            if value.upper() in ("UNLIMITED", "INFINITE"):
                fields[name] = -1
            else:
                try:
                    fields[name] = units.parse_time_limit(value, zero_is_infinite=False)
                except ValueError:
                    return _fail(f"scontrol: error: Invalid duration {key}={value}.{tail}")
        elif name == "node_count":
            if not value.isdigit() or int(value) < 1:
                return _fail(f"scontrol: error: Invalid node count {key}={value}.{tail}")
            fields[name] = int(value)
        else:
            fields[name] = value
    return fields


def _names_reservation(word: str) -> bool:
    tag = word.partition("=")[0]
    return len(tag) >= 3 and "reservationname".startswith(tag.lower())


def create_command(word: str, args: list[str]) -> int:
    """``create [reservation] ReservationName=... Key=Value...``.

    Args:
        word: the command word as typed.
        args: the words after it.

    Returns:
        The exit status.
    """
    if not args:
        return _fail(f"too few arguments for {word} keyword")
    if not any(_names_reservation(arg) for arg in args):
        return _fail(f"scontrol: error: Invalid creation entity: {args[0]}")
    words = args[1:] if "=" not in args[0] and _names_reservation(args[0]) else args
    fields = _fields(_pairs(words), "create")
    if isinstance(fields, int):
        return fields
    if "users" not in fields and "accounts" not in fields:
        return _fail(
            f"scontrol: error: Either Users/Groups and/or Accounts must be specified.{_NOT_CREATED}"
        )
    if "nodes" not in fields and "node_count" not in fields:
        return _fail(
            "scontrol: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be"
            f" specified.{_NOT_CREATED}"
        )
    if "end_time" not in fields and "duration" not in fields:
        return _fail(f"scontrol: error: An end time or duration must be given.{_NOT_CREATED}")
    try:
        reply = common.call("ManageReservation", verb="create", requester_uid=os.getuid(), **fields)
    except RpcError as err:
        return _fail(f"Error creating the reservation: {common.rpc_message(err)}")
    sys.stdout.write(f"Reservation created: {reply.name}\n")
    return 0


def update_reservation(name: str, pairs: list[tuple[str, str]]) -> int:
    """``update ReservationName=X Key=Value...``.

    Args:
        name: the reservation.
        pairs: the other pairs.

    Returns:
        The exit status.
    """
    fields = _fields(pairs, "update")
    if isinstance(fields, int):
        return fields
    try:
        common.call(
            "ManageReservation", verb="update", name=name, requester_uid=os.getuid(), **fields
        )
    except RpcError as err:
        message = common.rpc_message(err)
        return _fail(f"Error updating the reservation: {message}\nslurm_update error: {message}")
    sys.stdout.write("Reservation updated.\n")
    return 0


def delete_command(word: str, args: list[str]) -> int:
    """``delete ReservationName=X`` or ``delete reservation X``.

    Args:
        word: the command word as typed.
        args: the words after it.

    Returns:
        The exit status.
    """
    if not args:
        return _fail(f"too few arguments for {word} keyword")
    tag, eq, name = args[0].partition("=")
    if len(args) > 2 or (len(args) == 1 and not eq):
        return _fail(
            "scontrol: error: Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'"
        )
    if len(args) == 2:
        tag, name = args
    if not _names_reservation(tag):
        return _fail(f"Invalid deletion entity: {args[0]}")
    try:
        common.call("ManageReservation", verb="delete", name=name, requester_uid=os.getuid())
    except RpcError as err:
        return _fail(f"delete_reservation {args[0]}: {common.rpc_message(err)}")
    return 0


def _pairs(args: list[str]) -> list[tuple[str, str]]:
    return [(key, value) for key, _, value in (arg.partition("=") for arg in args)]


def _duration(start: int, end: int) -> str:
    if not end:
        return "UNLIMITED"
    return units.format_duration_long(end - start)


def reservation_lines(resv: Message, now: int) -> list[str]:
    """``show reservation``'s lines for one reservation.

    Args:
        resv: a ReservationInfo.
        now: the controller's time (for State).

    Returns:
        The lines (continuation lines indented by three spaces).
    """
    start = fmt.timestamp_or(resv.start_time, "Unknown")
    end = fmt.timestamp_or(resv.end_time, "Unknown")
    active = resv.start_time <= now and (not resv.end_time or now < resv.end_time)
    nodes = hostlist.compress(list(resv.nodes)) if resv.nodes else "(null)"
    return [
        f"ReservationName={resv.name} StartTime={start} "
        f"EndTime={end} Duration={_duration(resv.start_time, resv.end_time)}",
        f"   Nodes={nodes} NodeCnt={len(resv.nodes)} CoreCnt={resv.core_count} Features=(null) "
        f"PartitionName={resv.partition or '(null)'} Flags={resv.flags}",
        f"   TRES=cpu={resv.core_count}",
        f"   Users={resv.users or '(null)'} Groups=(null) Accounts={resv.accounts or '(null)'} "
        f"Licenses=(null) State={'ACTIVE' if active else 'INACTIVE'} BurstBuffer=(null) Watts=n/a",
        "   MaxStartDelay=(null)",
    ]


def show_reservations(args: list[str], oneliner: bool) -> int:
    """``show reservation [NAME]``.

    Args:
        args: at most one name.
        oneliner: ``-o``: one line per reservation.

    Returns:
        The exit status.
    """
    reply = common.call("GetReservations", names=args[:1])
    if not reply.reservations:
        if args:
            sys.stdout.write(f"Reservation {args[0]} not found\n")  # stdout, as Slurm's
            return 1
        sys.stdout.write("No reservations in the system\n")
        return 0
    out = []
    for resv in reply.reservations:
        lines = reservation_lines(resv, reply.now)
        out.append(
            " ".join(line.strip() for line in lines) if oneliner else "\n".join(lines) + "\n"
        )
    sys.stdout.write("".join(block + "\n" for block in out))
    return 0
