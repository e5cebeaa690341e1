"""The spool contract: the files slurmd and a stepd exchange in a job's or a step's directory.

slurmd's spool directory (``SlurmdSpoolDir``) holds ``slurmd.alive`` (touched
every second while slurmd lives), a directory per batch job
(``job<ID>``, the id on five digits at least) and one per srun step
(``step<JOB>.<STEP>``). In each of those:

=================  ===========  ===========================================================
file               written by   what it holds
=================  ===========  ===========================================================
``slurm_script``   slurmd       the batch script (batch jobs only)
``job.json``       slurmd       what stepd runs (root's: the user must not change it)
``stepio.sock``    slurmd       the socket a step's stepd connects to, while it starts
``stepd.log``      stepd        stepd's own messages
``stepd.pid``      stepd        its pid and start time (:mod:`minislurm.procs`)
``task.pid``       stepd        the process groups of the tasks, one a line
``usage.json``     stepd        the usage sampled so far (:mod:`nodeagent.usage`), for sstat
``terminate.json`` slurmd       why a kill was asked (stepd reads it on SIGTERM)
``killed``         stepd        not empty once a batch job's processes have had SIGTERM
``lost-output``    stepd        frames a step's stepd could not send once slurmd was gone
``status.json``    stepd        how the batch script or the step's tasks ended
=================  ===========  ===========================================================

A file slurmd writes while stepd may read it is replaced atomically
(written aside, then renamed). stepd opens the files slurmd reads while it
is still root, and writes them once (``status.json``) or rewrites them in
place (``usage.json``, read tolerantly).

Each file's content is a record here (a NamedTuple, as dataclasses would
cost every stepd start some 10 ms of imports: inspect, ast, dis...).

Imports the standard library, minislurm.procs, minislurm.stepids and nodeagent.cgroups
(standard library alone) only: stepd imports it.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, NamedTuple, TypeVar

from minislurm import procs
from minislurm.stepids import BATCH_STEP, step_id_text
from nodeagent.cgroups import Confinement

ALIVE_FILE = "slurmd.alive"  # in slurmd's spool directory
SCRIPT_FILE = "slurm_script"
JOB_FILE = "job.json"
SOCKET_NAME = "stepio.sock"
LOG_FILE = "stepd.log"
STEPD_PID_FILE = "stepd.pid"
TASK_PID_FILE = "task.pid"
USAGE_FILE = "usage.json"
TERMINATE_FILE = "terminate.json"
KILLED_FILE = "killed"  # not empty once a batch stepd has sent the job's processes SIGTERM
LOST_OUTPUT_FILE = "lost-output"
STATUS_FILE = "status.json"
STEPD_DIED = "slurmstepd died"  # the outcome's message when stepd left no status.json


def job_dir(spool: str, job_id: int) -> str:
    """The directory of a job's batch script.

    Args:
        spool: slurmd's spool directory.
        job_id: the job.

    Returns:
        Its path.
    """
    return os.path.join(spool, f"job{job_id:05d}")


def step_dir(spool: str, job_id: int, step_id: int) -> str:
    """The directory of an srun step's part on this node.

    Args:
        spool: slurmd's spool directory.
        job_id: the job.
        step_id: the step.

    Returns:
        Its path.
    """
    return os.path.join(spool, f"step{job_id}.{step_id}")


def find_jobs(spool: str) -> list[int]:
    """The jobs whose directories are in a spool.

    Args:
        spool: slurmd's spool directory.

    Returns:
        Their ids, in order.
    """
    names = sorted(os.listdir(spool))
    return [int(n[3:]) for n in names if n.startswith("job") and n[3:].isdigit()]


def find_steps(spool: str) -> list[tuple[int, int]]:
    """The steps whose directories are in a spool (``step<job>.<step>``).

    Args:
        spool: slurmd's spool directory.

    Returns:
        ``(job id, step id)`` of each, in order.
    """
    found = []
    for name in os.listdir(spool) if os.path.isdir(spool) else []:
        job, dot, step = name[4:].partition(".")
        if name.startswith("step") and dot and job.isdigit() and step.isdigit():
            found.append((int(job), int(step)))
    return sorted(found)


def log_tail(directory: str, limit: int) -> str:
    """The end of stepd's log, for slurmd's own when a launch or a stepd failed.

    Args:
        directory: the job's or step's directory.
        limit: at most this many characters, the last ones.

    Returns:
        The text; ``(empty)`` or ``(none)`` when the log is empty or missing.
    """
    try:
        with open(os.path.join(directory, LOG_FILE), errors="replace") as f:
            return f.read()[-limit:] or "(empty)"
    except OSError:
        return "(none)"


# --- job.json, stepd.pid, task.pid -----------------------------------------------------------


class BatchJob(NamedTuple):
    """A batch script's ``job.json``: what its stepd runs, as whom, with which streams."""

    job_id: int
    uid: int
    gid: int
    user: str
    umask: int
    argv: tuple[str, ...]  # the script's arguments; the script is SCRIPT_FILE beside job.json
    env: dict[str, str]
    work_dir: str
    stdout: str
    stderr: str
    stdin: str
    node: str
    kill_wait: int  # seconds between SIGTERM and SIGKILL
    acct_freq: int = 30  # JobAcctGatherFrequency: seconds between usage samples
    open_mode: str = ""  # --open-mode: "append" keeps the output files' content
    restarts: int = 0  # the job's Restarts: which run this is
    alive_file: str = ""  # slurmd's ALIVE_FILE
    fence_after: float = 0.0  # SlurmdTimeout: stepd kills the job when slurmd is gone that long
    hosts_file: str = ""  # the job's /etc/hosts (nodeagent.hostsfile); "" for the host's own
    task_prolog: str = ""  # TaskProlog: run as the user before the script
    task_epilog: str = ""  # TaskEpilog: run as the user after it
    mem_limit: int = 0  # KiB the script and its processes may hold (the job's --mem here)
    gpu_usage: str = ""  # where its GPUs' usage is read (nodeagent.gpuusage); "": nowhere
    cgroup: Confinement | None = None  # its cgroups (TaskPlugin=task/cgroup); None: none
    mode: str = "batch"

    def as_step(self, directory: str) -> StepJob:
        """The batch script as the one task of a step (what stepd's supervisor runs).

        Args:
            directory: the job's directory, where the script is.

        Returns:
            The step: task 0 runs the script with its arguments, streams and directory.
        """
        task = TaskJob(
            task_id=0,
            local_id=0,
            argv=(os.path.join(directory, SCRIPT_FILE), *self.argv),
            env=self.env,
            cwd=self.work_dir,
            stdout=self.stdout,
            stderr=self.stderr,
            stdin=self.stdin,
            append=self.open_mode == "append",
        )
        return StepJob(
            job_id=self.job_id,
            step_id=BATCH_STEP,
            uid=self.uid,
            gid=self.gid,
            user=self.user,
            umask=self.umask,
            cwd=self.work_dir,
            node=self.node,
            kill_wait=self.kill_wait,
            tasks=(task,),
            step_text=step_id_text(BATCH_STEP),
            acct_freq=self.acct_freq,
            hosts_file=self.hosts_file,
            task_prolog=self.task_prolog,
            task_epilog=self.task_epilog,
            mem_limit=self.mem_limit,
            gpu_usage=self.gpu_usage,
            cgroup=self.cgroup,
        )


class TaskJob(NamedTuple):
    """One task in a step's ``job.json``.

    ``stdout``/``stderr`` None: a pipe whose output stepd relays to slurmd;
    ``stdin`` None: a pipe slurmd feeds. ``cwd`` None: the step's.
    """

    task_id: int  # global rank (SLURM_PROCID)
    local_id: int  # rank on this node (SLURM_LOCALID)
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    stdin: str | None = None
    append: bool = False
    pty: bool = False  # a pseudo-terminal is its stdin, stdout and stderr (srun --pty)


class StepJob(NamedTuple):
    """An srun step's ``job.json``: its tasks on this node and how they run."""

    job_id: int
    step_id: int
    uid: int
    gid: int
    user: str
    umask: int
    cwd: str
    node: str
    kill_wait: int  # seconds between SIGTERM and SIGKILL
    tasks: tuple[TaskJob, ...]
    step_text: str  # the step as Slurm writes it: 0, 1... or interactive
    acct_freq: int = 30  # JobAcctGatherFrequency: seconds between usage samples
    hosts_file: str = ""  # the tasks' /etc/hosts (nodeagent.hostsfile); "" for the host's own
    window: tuple[int, int] = (0, 0)  # a pty's rows and columns at launch (0: the default)
    task_prolog: str = ""  # TaskProlog: run as the user before each task
    task_epilog: str = ""  # TaskEpilog: run as the user after each task
    mem_limit: int = 0  # KiB the step's tasks here may hold together (0: no limit)
    gpu_usage: str = ""  # where its GPUs' usage is read (nodeagent.gpuusage); "": nowhere
    user_task_prolog: str = ""  # srun --task-prolog: after TaskProlog
    user_task_epilog: str = ""  # srun --task-epilog: before TaskEpilog
    cgroup: Confinement | None = None  # its cgroups (TaskPlugin=task/cgroup); None: none
    socket: str = SOCKET_NAME  # where slurmd listens for the stepd, in the directory
    mode: str = "step"


def create(directory: str, job: BatchJob | StepJob, script: bytes | None = None) -> None:
    """Make a job's or a step's directory with what its stepd is to run, before stepd starts.

    The directory is root's and not listable (0711, whatever the umask): the
    job's user may run its script (theirs, 0500) but not touch ``job.json``,
    which stepd reads before it drops to that user.

    Args:
        directory: the directory, which must not exist yet.
        job: the batch script's or the step's description (``job.json``).
        script: the batch script (``SCRIPT_FILE``), for a batch job.

    Raises:
        FileExistsError: the directory exists.
        OSError: it or its files could not be made.
    """
    os.mkdir(directory, 0o711)
    os.chmod(directory, 0o711)  # the umask may have taken bits; the user needs x
    if script is not None:
        path = os.path.join(directory, SCRIPT_FILE)
        with open(path, "wb") as f:
            f.write(script)
        os.chmod(path, 0o500)
        if os.getuid() == 0:
            os.chown(path, job.uid, job.gid)
    _write_job(directory, job)


def _write_job(directory: str, job: BatchJob | StepJob) -> None:
    data = job._asdict()
    if isinstance(job, StepJob):
        data["tasks"] = [task._asdict() for task in job.tasks]
    if job.cgroup is not None:
        data["cgroup"] = job.cgroup._asdict()
    with open(os.path.join(directory, JOB_FILE), "w") as f:
        json.dump(data, f)


def read_job(directory: str) -> BatchJob | StepJob:
    """What stepd is to run.

    Args:
        directory: the job's or step's directory.

    Returns:
        The description (its ``mode`` says which).

    Raises:
        OSError: there is none.
        ValueError: it is malformed.
    """
    with open(os.path.join(directory, JOB_FILE)) as f:
        data = json.load(f)
    try:
        raw: dict[str, Any] | None = data.get("cgroup")
        cgroup = None
        if raw is not None:
            lists = {k: tuple(v) for k, v in raw.items() if isinstance(v, list)}
            cgroup = Confinement(**{**raw, **lists})
        if data.get("mode") == "step":
            tasks = tuple(_record(TaskJob, t, argv=tuple(t["argv"])) for t in data["tasks"])
            window = tuple(data.get("window") or (0, 0))
            return _record(StepJob, data, tasks=tasks, window=window, cgroup=cgroup)
        return _record(BatchJob, data, argv=tuple(data["argv"]), cgroup=cgroup)
    except (AttributeError, KeyError, TypeError) as error:
        raise ValueError(f"{JOB_FILE}: {error!r}") from error


Job = TypeVar("Job", BatchJob, StepJob, TaskJob)


def _record(cls: type[Job], data: dict[str, Any], **fixed: object) -> Job:
    """A record from its JSON object: unknown keys are left out, missing ones take defaults."""
    known = {k: v for k, v in data.items() if k in cls._fields}
    return cls(**{**known, **fixed})


def write_stepd_pid(directory: str) -> None:
    """Record this stepd's pid (and start time, so that it is never mistaken).

    Args:
        directory: the job's or step's directory.
    """
    procs.write_pid_file(os.path.join(directory, STEPD_PID_FILE))


def stepd_pid(directory: str) -> int | None:
    """The pid of the directory's stepd, if it still runs.

    Args:
        directory: the job's or step's directory.

    Returns:
        The pid, or None.
    """
    return procs.live_pid(os.path.join(directory, STEPD_PID_FILE))


def task_groups(directory: str) -> list[int]:
    """The tasks' process groups stepd recorded (the batch script's own, for a job).

    Args:
        directory: the job's or step's directory.

    Returns:
        The groups, none before stepd started the tasks.
    """
    return procs.recorded_pids(os.path.join(directory, TASK_PID_FILE))


def signal_task_groups(directory: str, signum: int) -> None:
    """Send a signal to each of the tasks' process groups stepd recorded (gone ones skipped).

    Args:
        directory: the job's or step's directory.
        signum: the signal.
    """
    for pgid in task_groups(directory):
        try:
            os.killpg(pgid, signum)
        except OSError:
            pass


# --- terminate.json ---------------------------------------------------------------------------


class Terminate(NamedTuple):
    """A kill request (``terminate.json``; a step's stepd also gets it as a frame)."""

    outcome: str  # CANCELLED, TIMEOUT, NODE_FAIL... (decides the line stepd writes)
    kill_wait: float  # seconds between SIGTERM and SIGKILL
    time: float  # the decision's time, for the line

    def to_json(self) -> bytes:
        """The request as JSON.

        Returns:
            The encoded object.
        """
        return json.dumps(self._asdict()).encode()

    @classmethod
    def from_json(cls, data: bytes | str) -> Terminate:
        """A request from JSON; what it leaves unsaid takes the defaults of a plain kill.

        Args:
            data: the encoded object.

        Returns:
            The request.

        Raises:
            ValueError: not a JSON object of numbers and a text.
        """
        value = json.loads(data)
        if not isinstance(value, dict):
            raise ValueError("a kill request is a JSON object")
        try:
            return cls(
                outcome=str(value.get("outcome", "")),
                kill_wait=float(value.get("kill_wait", 30)),
                time=float(value.get("time", time.time())),
            )
        except TypeError as error:
            raise ValueError(str(error)) from error


def write_terminate(directory: str, request: Terminate) -> None:
    """Say why slurmd asks for a kill, before it sends stepd SIGTERM.

    Args:
        directory: the job's or step's directory.
        request: the kill.
    """
    path = os.path.join(directory, TERMINATE_FILE)
    with open(path + ".tmp", "wb") as f:
        f.write(request.to_json())
    os.replace(path + ".tmp", path)


def mark_killed(killed_fd: int) -> None:
    """Say that stepd has sent the job's processes SIGCONT and SIGTERM.

    Args:
        killed_fd: KILLED_FILE, opened (:func:`open_private`) while stepd was root:
            the job's user may not create files in the job's directory.
    """
    os.write(killed_fd, b"signalled\n")


def killed(directory: str) -> bool:
    """Whether the job's stepd has sent its processes SIGTERM (:func:`mark_killed`).

    Args:
        directory: the job's directory.

    Returns:
        True once it has.
    """
    try:
        return os.path.getsize(os.path.join(directory, KILLED_FILE)) > 0
    except OSError:
        return False


def read_terminate(directory: str) -> Terminate:
    """Why slurmd asked for the kill, CANCELLED when unsaid.

    Args:
        directory: the job's or step's directory.

    Returns:
        The request.
    """
    try:
        with open(os.path.join(directory, TERMINATE_FILE), "rb") as f:
            return Terminate.from_json(f.read())
    except (OSError, ValueError):
        return Terminate("CANCELLED", 30, time.time())


# --- status.json ------------------------------------------------------------------------------


def open_private(path: str, append: bool = False) -> int:
    """A file of stepd's own in the spool (opened while still root; slurmd reads it).

    Args:
        path: the file.
        append: keep what it holds.

    Returns:
        The descriptor.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    return os.open(path, flags, 0o644)


def write_status(status_fd: int, result: StepResult) -> None:
    """Record how the script or the step ended (``status.json``, opened by :func:`open_private`).

    Args:
        status_fd: the file.
        result: the outcome.
    """
    # No fsync: slurmd reads this after stepd exits, even if slurmd itself
    # restarted (the page cache survives processes); losing it to a power cut
    # loses the node and its jobs anyway, and an fsync cost each step ~5 ms.
    os.write(status_fd, result.to_json())


class TaskResult(NamedTuple):
    """How one task ended (from status.json)."""

    task_id: int
    local_id: int
    pid: int
    exit_code: int
    signal: int
    error: str = ""
    max_rss: int = 0  # KiB
    total_cpu: float = 0.0  # seconds


class StepResult(NamedTuple):
    """How a step ended on this node: the highest exit code and signal, and each task's."""

    job_id: int
    step_id: int
    exit_code: int
    signal: int
    start_time: float
    end_time: float
    outcome: str = ""  # CANCELLED, TIMEOUT, LAUNCH_FAILED, or "" when it ran to its end
    message: str = ""
    max_rss: int = 0  # KiB, the largest task (its whole process tree, sampled)
    total_cpu: float = 0.0  # seconds, every process of the step
    tasks: tuple[TaskResult, ...] = ()
    lost_output: int = 0  # bytes of frames kept in lost-output
    dropped_output: int = 0  # bytes of output dropped once lost-output was full

    def to_json(self) -> bytes:
        """The result as status.json (and a step's DONE frame) hold it.

        Returns:
            The encoded object.
        """
        tasks = [task._asdict() for task in self.tasks]
        return json.dumps({**self._asdict(), "tasks": tasks}).encode()


def read_status(directory: str) -> StepResult | None:
    """The step's outcome as stepd recorded it in status.json.

    Args:
        directory: the step's spool directory.

    Returns:
        The result, or None when stepd has not (or never) recorded it.
    """
    try:
        with open(os.path.join(directory, STATUS_FILE)) as f:
            return result_from_json(json.load(f))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def result_from_json(data: dict[str, object]) -> StepResult:
    """A :class:`StepResult` from status.json's (or a DONE frame's) content.

    Args:
        data: the decoded JSON.

    Returns:
        The result.

    Raises:
        KeyError: a required field is missing.
        TypeError: a field has the wrong type.
        ValueError: a field has a bad value.
    """
    required = {k: data[k] for k in ("job_id", "exit_code", "signal")}
    tasks = tuple(TaskResult(**t) for t in data.get("tasks", []))  # type: ignore[attr-defined]
    return StepResult(
        **required,  # type: ignore[arg-type]
        step_id=int(data.get("step_id", 0)),  # type: ignore[call-overload]  # a batch script's: 0
        start_time=float(data["start_time"]),  # type: ignore[arg-type]
        end_time=float(data["end_time"]),  # type: ignore[arg-type]
        outcome=str(data.get("outcome", "")),
        message=str(data.get("message", "")),
        max_rss=int(data.get("max_rss", 0)),  # type: ignore[call-overload]
        total_cpu=float(data.get("total_cpu", 0.0)),  # type: ignore[arg-type]
        tasks=tasks,
        lost_output=int(data.get("lost_output", 0)),  # type: ignore[call-overload]
        dropped_output=int(data.get("dropped_output", 0)),  # type: ignore[call-overload]
    )
