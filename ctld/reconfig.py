"""``scontrol reconfigure``: what of a re-read slurm.conf can change while slurmctld runs.

As Slurm's: the scheduler's parameters, priority weights, time-outs,
limits, the programs around jobs and nodes (Prolog, Epilog, health
checks...), metrics access and the partitions' settings change at once;
what the daemons' identity, their ports, the nodes, the partitions' node
lists, the topology or the state's location are made of needs a restart
(Slurm 22.05 cannot add nodes by reconfigure either). :func:`live_part`
gives the configuration to run with (the new one, those parts kept as they
were) and what waits for a restart.

Pure functions of two configurations; imports minislurm.config only.
"""

from __future__ import annotations

from dataclasses import replace

from minislurm.config import SlurmConfig

# slurm.conf's settings a running slurmctld keeps until it restarts, by field and key.
RESTART_FIELDS = {
    "cluster_name": "ClusterName",
    "controller_host": "SlurmctldHost",
    "controller_addr": "SlurmctldHost",
    "controller_port": "SlurmctldPort",
    "slurmd_port": "SlurmdPort",
    "state_save_location": "StateSaveLocation",
    "slurm_user": "SlurmUser",
    "slurmd_spool_dir": "SlurmdSpoolDir",
    "auth_type": "AuthType",
    "tls_type": "TLSType",
    "tls_parameters": "TLSParameters",
    "metrics_type": "MetricsType",
    "metrics_port": "MetricsPort",
    "gres_types": "GresTypes",
    "select_type_parameters": "SelectTypeParameters",
    "topology_plugin": "TopologyPlugin",
    "topology_param": "TopologyParam",
    "topology": "topology.conf",
    "nodes": "NodeName",
}


def live_part(old: SlurmConfig, new: SlurmConfig, port: int) -> tuple[SlurmConfig, list[str]]:
    """The configuration a running slurmctld takes from a re-read slurm.conf.

    Args:
        old: the configuration it runs with.
        new: the file as it now reads.
        port: the port it listens on (a local cluster writes it into the file once bound).

    Returns:
        ``new`` with the parts that need a restart kept as in ``old``, and the
        names of those that changed (``NodeName``, ``PartitionName=gpu Nodes``...).
    """
    kept = {field: getattr(old, field) for field in RESTART_FIELDS}
    same = {**kept, "controller_port": new.controller_port if new.controller_port == port else -1}
    waiting = sorted(
        {
            key
            for field, key in RESTART_FIELDS.items()
            if getattr(new, field) not in (kept[field], same[field])
        }
    )
    partitions = new.partitions
    old_parts = {p.name: p for p in old.partitions}
    if set(old_parts) != {p.name for p in new.partitions}:
        waiting.append("PartitionName (added or removed)")
        partitions = old.partitions
    else:
        moved = [p.name for p in new.partitions if p.nodes != old_parts[p.name].nodes]
        waiting += [f"PartitionName={name} Nodes" for name in moved]
        partitions = tuple(replace(p, nodes=old_parts[p.name].nodes) for p in new.partitions)
    return replace(new, partitions=partitions, **kept), waiting
