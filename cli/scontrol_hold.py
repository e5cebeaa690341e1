"""``scontrol hold|uhold|release|requeue|requeuehold``: one HoldJobs call per argument.

Imports cli and minislurm's lean modules only; none of ctld or nodeagent.
"""

from __future__ import annotations

import os
import sys

from cli import common, fmt
from minislurm.arrays import parse_job_ref
from minislurm.h2grpc import RpcError

HOLD, USER_HOLD, RELEASE, REQUEUE, REQUEUE_HOLD = 0, 1, 2, 3, 4  # HoldJobsRequest.Action


def _fail(text: str) -> int:
    sys.stderr.write(text + "\n")
    return 1


def hold_command(args: list[str], action: int, keyword: str) -> int:
    """``hold|uhold|release|requeue|requeuehold JOBS...``: one call per argument,
    Slurm's messages per job.

    Args:
        args: job ids, each possibly a comma list.
        action: HOLD, USER_HOLD, RELEASE, REQUEUE or REQUEUE_HOLD.
        keyword: the command's name, for the usage error.

    Returns:
        The exit status (1 when any job failed).
    """
    if not args:
        return _fail(f"too few arguments for keyword:{keyword}")
    status = 0
    for word in args:
        items = fmt.split_jobs(word)
        ids = [int(item) for item in items if item.isdigit()]
        refs = [item for item in items if not item.isdigit() and _is_task_ref(item)]
        errors = [
            (item, "Invalid job id specified")
            for item in items
            if not item.isdigit() and item not in refs
        ]
        if ids or refs:
            errors += _hold(ids, refs, action)
        for job, error in errors:
            sys.stderr.write(f"{error} for job {job}\n")
        if errors:
            if action not in (REQUEUE, REQUEUE_HOLD):  # requeue prints the per-job lines only
                sys.stderr.write(f"slurm_suspend error: {errors[-1][1]}\n")
            status = 1
    return status


def _is_task_ref(item: str) -> bool:
    try:
        _, tasks, step = parse_job_ref(item)
    except ValueError:
        return False
    return tasks is not None and not step


def _hold(ids: list[int], refs: list[str], action: int) -> list[tuple[str, str]]:
    """One HoldJobs call: ``(job, error)`` for each job that failed (every job when
    the call itself failed)."""
    try:
        reply = common.call(
            "HoldJobs", job_ids=ids, array_tasks=refs, action=action, requester_uid=os.getuid()
        )
    except RpcError as err:
        return [(str(job), common.rpc_message(err)) for job in [*ids, *refs]]
    return [(r.ref or str(r.job_id), r.error) for r in reply.results if r.error]
