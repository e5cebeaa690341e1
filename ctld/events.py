"""One structured log line for each event an operator acts on.

A node drained, undrained, down or back up, and a job requeued, each get a
line in slurmctld's log from the ``ctld.events`` logger::

    event=node_drain node=n3 reason="Prolog error" uid=0
    event=node_down node=n7 reason="Not responding"
    event=node_resume node=n3
    event=job_requeue job=12 run=0 ended=NODE_FAIL nodes=n[5-8]

``key=value`` pairs, a value quoted (JSON string syntax) when it holds a space,
a quote or ``=``, so that grep, awk and log shippers read them without a
grammar of their own. :func:`node_event` and :func:`requeue_event` make the
lines; ClusterState.put_node and Ledger.commit log them with each change.

Imports minislurm.
"""

from __future__ import annotations

import json
import logging

from minislurm.model import EarlierRun, Node
from minislurm.states import NodeFlag, NodeState

log = logging.getLogger("ctld.events")


def line(event: str, **fields: object) -> str:
    """``event=NAME key=value ...``, empty values left out.

    Args:
        event: the event's name.
        **fields: its fields, in order.

    Returns:
        The line.
    """
    parts = [f"event={event}"]
    for key, value in fields.items():
        text = str(value)
        if text == "":
            continue
        if any(c in text for c in ' "=\\') or not text.isprintable():
            text = json.dumps(text)
        parts.append(f"{key}={text}")
    return " ".join(parts)


def node_event(old: Node | None, new: Node) -> str | None:
    """The line of a node's change, if it is one an operator acts on.

    Args:
        old: the record it replaces (None: the first one, from the configuration).
        new: the record.

    Returns:
        ``node_down`` (its base state became DOWN), ``node_drain`` (DRAIN set),
        ``node_resume`` (back from DOWN, or DRAIN cleared), or None.
    """
    if old is None:
        return None
    fields = {"node": new.name, "reason": new.reason, "uid": new.reason_uid if new.reason else ""}
    if new.state is NodeState.DOWN and old.state is not NodeState.DOWN:
        return line("node_down", **fields)
    if NodeFlag.DRAIN in new.flags and NodeFlag.DRAIN not in old.flags:
        return line("node_drain", **fields)
    drain_cleared = NodeFlag.DRAIN in old.flags and NodeFlag.DRAIN not in new.flags
    back_up = old.state is NodeState.DOWN and new.state is not NodeState.DOWN
    if drain_cleared or back_up:
        return line("node_resume", node=new.name)
    return None


def requeue_event(run: EarlierRun) -> str:
    """The line of a job's requeue: which run ended, how, and on which nodes.

    Args:
        run: the run the requeue ended.

    Returns:
        The line.
    """
    job = run.job
    nodes = job.allocation.nodelist if job.allocation else ""
    return line("job_requeue", job=job.job_id, run=job.restarts, ended=run.state, nodes=nodes)
