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
from cli.scontrol_jobkeys import named
from cli.scontrol_resv import update_reservation
from minislurm.wire.h2grpc import RpcError

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
    "CANCEL_REBOOT",
)
REBOOT_NEXT = ("RESUME", "DOWN")


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
    return _update_nodes("slurm_update error", names=names, state=state, reason=reason)


def _update_nodes(error: str, **request: object) -> int:
    """One UpdateNode call; its refusal said after ``error`` (``slurm_update error``).

    Returns:
        The exit status.
    """
    try:
        common.call("UpdateNode", requester_uid=os.getuid(), **request)
    except RpcError as err:
        return _fail(f"{error}: {common.rpc_message(err)}")
    return 0


def reboot_command(args: list[str]) -> int:
    """``reboot [ASAP] [nextstate=RESUME|DOWN] [reason=...] {ALL|<NodeList>}``.

    Args:
        args: the words after ``reboot``.

    Returns:
        The exit status.
    """
    asap, next_state, reason, names = False, "", "", ""
    for word in args:
        key, eq, value = word.partition("=")
        if not eq and key.upper() == "ASAP":
            asap = True
        elif eq and key.lower() == "nextstate":
            next_state = value.upper()
            if next_state not in REBOOT_NEXT:
                return _fail(f"Invalid nextstate: {value}\nValid states are: RESUME DOWN")
        elif eq and key.lower() == "reason":
            reason = value
        elif not eq and not names:
            names = word
        else:
            return _fail(f"Invalid input: {word}")
    if not names:
        return _fail("Missing node list. Specify ALL|<NodeList>")
    return _update_nodes(
        "scontrol_reboot_nodes error",
        names=names,
        state="REBOOT",
        reason=reason,
        asap=asap,
        next_state=next_state,
    )


def cancel_reboot_command(args: list[str]) -> int:
    """``cancel_reboot <NodeList>``: the same as ``update NodeName=... State=CANCEL_REBOOT``.

    Args:
        args: the words after ``cancel_reboot``.

    Returns:
        The exit status.
    """
    if len(args) != 1:
        return _fail("Missing node list. Specify <NodeList>" if not args else "too many arguments")
    return update_node(args[0], [("State", "CANCEL_REBOOT")])


# Slurm's update entities, by the key that names them (shortest abbreviation).
ENTITIES = (
    ("NodeName", 3, "node"),
    ("PartitionName", 3, "partition"),
    ("JobId", 3, "job"),
    ("JobNAME", 3, "job"),
    ("StepId", 4, "step"),
    ("FrontendName", 2, "frontend"),
    ("ReservationName", 3, "reservation"),
    ("SlurmctldDebug", 2, "debug"),
)
NO_ENTITY = (
    "No valid entity in update command\n"
    'Input line must include "NodeName", "PartitionName", "Reservation", "JobId", '
    'or "SlurmctldDebug"'
)


def entities(args: list[str]) -> dict[str, str]:
    """The entities the arguments name, as Slurm finds them, with the value that names each.

    A key without ``=`` takes the next word as its value.

    Args:
        args: the arguments after ``update``.

    Returns:
        ``{entity: value}`` (the first value of each).
    """
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        tag, eq, value = args[i].partition("=")
        if not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        for keyword, minimum, entity in ENTITIES:
            if named(tag, keyword, minimum):
                found.setdefault(entity, value)
                break
        i += 1
    return found


def update_command(word: str, args: list[str]) -> int:
    """``update``: of jobs, else a reservation, else nodes, as Slurm picks the entity.

    Args:
        word: the command word as typed.
        args: the arguments.

    Returns:
        The exit status.
    """
    if not args:
        return _fail(f"too few arguments for {word} keyword")
    found = entities(args)
    if "job" in found:
        return jobupdate.update_job(args)
    pairs = parse_pairs(args)
    for entity, handler in (("reservation", update_reservation), ("node", update_node)):
        if entity in found:
            rest = [(k, v) for k, v in pairs if not _names(k, entity)]
            return handler(found[entity], rest)
    return _fail(NO_ENTITY)


def _names(key: str, entity: str) -> bool:
    return any(
        named(key, keyword, minimum) for keyword, minimum, name in ENTITIES if name == entity
    )
