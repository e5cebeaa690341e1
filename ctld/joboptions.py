"""A submission's options accepted without effect, checked again, and against the nodes.

The commands check these values as Slurm's client does
(:mod:`minislurm.optcheck`); clients can be bypassed, so the controller
checks each again, then what only the cluster can answer: features,
licenses, temporary disk, CPUs per node, the sockets, cores and threads of
the nodes, and a minimum time within the time limit, with Slurm's words.

Pure functions; imports minislurm and ctld.state.
"""

from __future__ import annotations

from ctld.state import ClusterState
from minislurm import optcheck
from minislurm.config import PartitionConfig
from minislurm.errors import InvalidRequest
from minislurm.model import Node
from minislurm.units import INFINITE

NOT_AVAILABLE = "Requested node configuration is not available"
# Kept with the job beside optcheck's: --exclusive=user|mcs|topo and --ntasks-per-gpu.
_OTHERS = {"exclusive": ("user", "mcs", "topo"), "ntasks-per-gpu": ()}


def checked_options(options: dict[str, str]) -> dict[str, str]:
    """The options as the job keeps them, each value checked as the commands check it.

    Args:
        options: JobSpec.options.

    Returns:
        The options to keep.

    Raises:
        InvalidRequest: an unknown option or a value Slurm rejects.
    """
    kept = {}
    for name, value in options.items():
        if name in _OTHERS:
            allowed = _OTHERS[name]
            if (allowed and value not in allowed) or (not allowed and not value.isdigit()):
                raise InvalidRequest(f"Invalid --{name} specification")
            kept[name] = value
            continue
        if name not in optcheck.JOB_OPTIONS:
            raise InvalidRequest(f"Invalid option {name!r}")
        try:
            kept[name] = optcheck.check(name, value)
        except optcheck.OptionError as err:
            text = "\n".join(err.lines) or f"Invalid --{name} specification"
            raise InvalidRequest(text.replace("error: ", "")) from None
    return kept


def check_against_nodes(
    options: dict[str, str],
    part: PartitionConfig,
    state: ClusterState,
    time_limit: int,
    configuration: bool = True,
) -> None:
    """Reject what the partition's nodes can never give, as Slurm does at submit.

    Args:
        options: the checked options.
        part: the job's partition.
        state: the cluster.
        time_limit: the job's time limit in minutes (INFINITE: none).
        configuration: check what a node's configuration must give too
            (temporary disk, CPUs, sockets, cores and threads), which Slurm
            does only for a job it tries to place (not held, within its
            partition's limits).

    Raises:
        InvalidRequest: with Slurm's message.
    """
    if options.get("extra-node-info", "").split(":")[0] == "0":
        raise InvalidRequest("Node count specification invalid")
    members = [state.nodes[n] for n in part.nodes if n in state.nodes]
    features = {f for n in members for f in n.features.split(",") if f}
    _check_features(options, features)
    if options.get("licenses"):
        raise InvalidRequest("Invalid license specification")
    _check_time_min(options, time_limit)
    if configuration:
        _check_configuration(options, members)


def _check_configuration(options: dict[str, str], members: list[Node]) -> None:
    if options.get("tmp", "0") != "0":
        raise InvalidRequest(f"Temporary disk specification can not be satisfied\n{NOT_AVAILABLE}")
    if members and int(options.get("mincpus", "0")) > max(n.cpus for n in members):
        raise InvalidRequest(f"CPU count per node can not be satisfied\n{NOT_AVAILABLE}")
    if members and not any(_layout_fits(options, n) for n in members):
        raise InvalidRequest(
            f"Socket, core and/or thread specification can not be satisfied\n{NOT_AVAILABLE}"
        )


def _check_time_min(options: dict[str, str], time_limit: int) -> None:
    if "time-min" in options:
        minimum = int(options["time-min"])
        if minimum <= 0 or minimum == INFINITE or minimum > time_limit:
            raise InvalidRequest(
                "Invalid time-min specification (exceeds job's time or other limits)"
            )


def _feature_names(expr: str) -> set[str]:
    for mark in "&|,[]()!":
        expr = expr.replace(mark, " ")
    return {word.split("*")[0] for word in expr.split() if word.split("*")[0]}


def _check_features(options: dict[str, str], features: set[str]) -> None:
    constraint = options.get("constraint", "")
    if not _feature_names(constraint) <= features:
        raise InvalidRequest("Invalid feature specification")
    if not _feature_names(options.get("prefer", "")) <= features:
        raise InvalidRequest("Invalid preferred feature specification")
    batch = _feature_names(options.get("batch", ""))
    if options.get("batch") and not batch <= _feature_names(constraint):
        raise InvalidRequest("Job --batch option is invalid or not a subset of --constraints")


def _layout_fits(options: dict[str, str], node: Node) -> bool:
    """Whether a node has the sockets, cores per socket and threads per core asked for."""
    sockets, cores, threads = (options.get("extra-node-info", "") + "::").split(":")[:3]
    wanted = (
        (options.get("sockets-per-node") or sockets, node.sockets),
        (options.get("cores-per-socket") or cores, node.cores_per_socket),
        (options.get("threads-per-core") or threads, node.threads_per_core),
    )
    return all(not text or text == "*" or int(text) <= have for text, have in wanted)
