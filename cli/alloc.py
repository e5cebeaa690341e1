"""Allocations for srun and salloc outside a batch job: request, wait, release.

As Slurm's clients do, they submit a job without a batch script, wait
(saying ``job N queued and waiting for resources`` when it does not start
at once), and end it themselves when their work is done (CompleteJob), or
cancel it when interrupted while it waits.

Imports cli.common, cli.submit and minislurm's lean modules.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # ``signal`` imports enum (~9 ms)
import os
import sys
import time

from cli.common import CommandError, call, controller, rpc_message
from cli.submit import error_status
from minislurm import optcheck
from minislurm.wire.h2grpc import RpcError, Unreachable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

FIRST_WAIT = 0.2  # seconds before saying the job is queued (an idle cluster starts it sooner)
WAIT_SLICE = 30  # seconds of each server-side wait
RELEASE_PATIENCE = 60.0  # seconds to keep trying to release an allocation (controller restart)


def allocate(
    prog: str, spec: dict[str, object], quiet: bool, immediate: float | None = None
) -> Message:
    """Submit an allocation and wait until it runs.

    Args:
        prog: srun or salloc, for messages.
        spec: the JobSpec fields (``batch`` False).
        quiet: no informational messages.
        immediate: ``-I``: seconds it may wait for resources (None: for ever).

    Returns:
        The running job (JobInfo).

    Raises:
        CommandError: the request was rejected, the job ended without running,
            or it did not start within ``immediate`` seconds.
    """
    try:
        submitted = call("SubmitJob", spec=spec)
    except RpcError as err:
        *details, last = rpc_message(err).split("\n")
        lines = [f"error: {d}" for d in details]
        what = "Job submit/allocate failed" if prog == "salloc" else "Unable to allocate resources"
        lines.append(f"error: {what}: {last}")
        raise CommandError(f"\n{prog}: ".join(lines), error_status(prog)) from None
    job_id, job = int(submitted.job_id), submitted.job
    queued = False
    deadline = None if immediate is None else time.monotonic() + immediate
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if job.state == "PENDING":
            job = _wait(job_id, FIRST_WAIT if deadline is None else min(FIRST_WAIT, immediate or 0))
        while job.state == "PENDING":
            if deadline is not None and time.monotonic() >= deadline:
                _busy(prog, job_id)
            if not queued and not quiet:
                _queued(prog, job_id, job)
            queued = True
            left = WAIT_SLICE if deadline is None else max(deadline - time.monotonic(), 0.0)
            job = _wait(job_id, min(WAIT_SLICE, left))
    except KeyboardInterrupt:
        release(job_id, cancel=True)
        raise CommandError(f"error: Job allocation {job_id} has been revoked.") from None
    finally:
        signal.signal(signal.SIGINT, previous)
    if job.state != "RUNNING":
        raise CommandError(f"error: Job allocation {job_id} has been revoked.")
    if queued and not quiet:
        _say(prog, f"job {job_id} has been allocated resources")
    running: Message = job
    return running


def _queued(prog: str, job_id: int, job: Message) -> None:
    """What salloc and srun say of an allocation that waits."""
    if prog == "salloc":
        _say(prog, f"Pending job allocation {job_id}")
        if job.reason in ("JobHeldUser", "JobHeldAdmin"):
            _say(prog, "Job is in held state, pending scheduler release")
            return
    _say(prog, f"job {job_id} queued and waiting for resources")


def _busy(prog: str, job_id: int) -> None:
    """``-I``: the allocation did not start in time; it is cancelled, as Slurm revokes it."""
    release(job_id, cancel=True)
    if prog == "salloc":
        _say(prog, f"Job allocation {job_id} has been revoked.")
    status = os.environ.get("SLURM_EXIT_IMMEDIATE", "")
    raise CommandError(
        "error: Unable to allocate resources: Requested nodes are busy",
        int(status) if status.isdigit() and int(status) else 1,
    )


def immediate(values: dict[str, object]) -> float | None:
    """``-I[seconds]``: how long the allocation may wait for resources (None: for ever).

    Args:
        values: the merged options.

    Returns:
        Seconds, or None.

    Raises:
        CommandError: not a number (Slurm's words).
    """
    if "immediate" not in values:
        return None
    text = str(values["immediate"])
    if not text:
        return 0.0
    try:
        return float(optcheck.count(text, "immediate", least=0))
    except optcheck.OptionError as err:
        raise CommandError(err.lines[0], err.status) from None


def _wait(job_id: int, timeout: float) -> Message:
    """WaitJob, again on a new connection when a controller restart cut it (it only reads).

    Raises:
        RpcError: the controller refused, or stayed unreachable for MessageTimeout.
    """
    while True:
        try:
            job: Message = call("WaitJob", job_id=job_id, timeout=timeout).job
            return job
        except Unreachable:
            raise
        except RpcError as err:
            if err.code != "UNAVAILABLE":
                raise


def release(job_id: int, exit_code: int = 0, signal_number: int = 0, cancel: bool = False) -> None:
    """End an allocation this command made.

    Args:
        job_id: the job.
        exit_code: the status it ends with.
        signal_number: the signal that ended the work, if any.
        cancel: cancel it instead (interrupted before it ran).
    """
    fields: dict[str, object] = {"job_ids": [job_id]}
    method = "CancelJobs"
    if not cancel:
        method = "CompleteJob"
        fields = {"job_id": job_id, "exit_code": exit_code, "signal": signal_number}
    # Both are idempotent: a controller that restarted meanwhile is called
    # again (a new connection) until it answers.
    deadline = time.monotonic() + RELEASE_PATIENCE
    delay = 0.1
    while True:
        try:
            call(method, requester_uid=os.getuid(), **fields)
            return
        except RpcError as err:
            if err.code != "UNAVAILABLE":
                return  # already over (cancelled, timed out): nothing left to release
            if time.monotonic() + delay > deadline:
                prog = os.path.basename(sys.argv[0])
                _say(prog, f"error: Unable to release job allocation {job_id}: {err.details}")
                return
        time.sleep(delay)
        delay = min(delay * 2, 2.0)


class Revocation:
    """Hears, from a thread of its own, when a running allocation ends under its command.

    Slurm's controller tells salloc when its job is cancelled or reaches its
    time limit; salloc says so, leaves its command running (its exit status
    is salloc's) and does not release the allocation: it is gone already.
    The thread long-polls WaitJob on a connection of its own.
    """

    def __init__(self, prog: str, job_id: int, quiet: bool) -> None:
        import threading  # only salloc, once it has its allocation, needs threads

        self.prog = prog
        self.job_id = job_id
        self.quiet = quiet
        self.lock = threading.Lock()
        self.revoked = False
        self.released = False
        threading.Thread(target=self._watch, name="revocation", daemon=True).start()

    def _watch(self) -> None:
        client = controller(own=True)
        while True:
            try:
                job = client.call(
                    "WaitJob", job_id=self.job_id, timeout=WAIT_SLICE, until_ended=True
                ).job
            except RpcError as err:
                if err.code == "NOT_FOUND":
                    return
                time.sleep(1.0)  # a controller restart under way: ask again
                continue
            if job.state not in ("PENDING", "RUNNING", "SUSPENDED"):
                self._revoke(job.state == "TIMEOUT" or job.reason == "TimeLimit")
                return

    def _revoke(self, time_limit: bool) -> None:
        with self.lock:
            if self.released:
                return  # salloc ended it itself
            self.revoked = True
            if self.quiet:
                return
            if time_limit:
                _say(
                    self.prog,
                    f"Job {self.job_id} has exceeded its time limit and its allocation has been"
                    " revoked.",
                )
            else:
                _say(self.prog, f"Job allocation {self.job_id} has been revoked.")

    def release(self) -> bool:
        """The command has ended: whether the allocation is still salloc's to release.

        Returns:
            False when it was revoked meanwhile (nothing is left to release).
        """
        with self.lock:
            self.released = True
            return not self.revoked


def _say(prog: str, text: str) -> None:
    sys.stderr.write(f"{prog}: {text}\n")
    sys.stderr.flush()
