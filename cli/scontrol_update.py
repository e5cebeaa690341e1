"""``scontrol update``: change a job (JobId=), a node (NodeName=) or a reservation.

Job updates are :mod:`cli.scontrol_jobupdate`'s. Node keys: State (DRAIN,
RESUME, DOWN, UNDRAIN, IDLE...) and Reason. Keys are case-insensitive;
errors use Slurm's words and exit status 1.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys

from cli import common
from cli import scontrol_jobupdate as jobupdate
from cli.scontrol_resv import update_reservation
from minislurm.h2grpc import RpcError

NODE_STATES = (
    "NORESP",
    "DRAIN",
    "FAIL",
    "FUTURE",
    "RESUME",
    "POWER_DOWN",
    "POWER_UP",
    "UNDRAIN",
    "DOWN",
    "IDLE",
)


def _fail(text: str) -> int:
    sys.stderr.write(text + "\n")
    return 1


def parse_pairs(args: list[str]) -> list[tuple[str, str]]:
    """Split ``Key=Value`` arguments (a value may hold spaces and ``=``).

    Args:
        args: the arguments after ``update``.

    Returns:
        ``(key, value)`` pairs; a word without ``=`` has an empty value.
    """
    return [(key, value) for key, _, value in (arg.partition("=") for arg in args)]


def update_node(names: str, pairs: list[tuple[str, str]]) -> int:
    """``update NodeName=EXPR State=... Reason=...``.

    Args:
        names: the NodeName value (a hostlist expression).
        pairs: the other ``(key, value)`` pairs.

    Returns:
        The exit status.
    """
    state = reason = ""
    for key, value in pairs:
        lower = key.lower()
        if lower == "state":
            state = value.upper()
            if state not in NODE_STATES:
                return _fail(
                    f"Invalid input: {key}={value}\nRequest aborted\n"
                    "Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP "
                    "UNDRAIN\nNot all states are valid given a node's prior state"
                )
        elif lower == "reason":
            reason = value
        else:
            return _fail(
                f"Update of this parameter is not supported: {key}={value}\nRequest aborted"
            )
    if state in ("DOWN", "DRAIN", "FAIL") and not reason:
        return _fail("You must specify a reason when DOWNING or DRAINING a node. Request denied")
    if not state and not reason:
        return _fail("No changes specified")
    try:
        common.call(
            "UpdateNode", names=names, state=state, reason=reason, requester_uid=os.getuid()
        )
    except RpcError as err:
        return _fail(f"slurm_update error: {common.rpc_message(err)}")
    return 0


def update_command(args: list[str]) -> int:
    """``update``: a job or node update, chosen by its JobId= or NodeName= key.

    Args:
        args: the ``Key=Value`` arguments.

    Returns:
        The exit status.
    """
    if not args:
        return _fail("too few arguments for keyword:update")
    pairs = parse_pairs(args)
    for index, (key, value) in enumerate(pairs):
        rest = pairs[:index] + pairs[index + 1 :]
        if key.lower() == "jobid":
            return jobupdate.update_job(value, rest)
        if key.lower() == "nodename":
            return update_node(value, rest)
        if key.lower() in ("reservationname", "reservation"):
            return update_reservation(value, rest)
    return _fail(
        "No valid entity in update command\n"
        'Input line must include "NodeName", "PartitionName", "Reservation", "JobId", '
        'or "SlurmctldDebug"'
    )
