"""slurmstepd: the supervisor of one batch script, or of one srun step's tasks, on a node.

Started by slurmd as ``python -m nodeagent.stepd JOBDIR`` in a session of
its own, so it and its tasks outlive a restart of slurmd. It reads
``JOBDIR/job.json``, becomes a child subreaper (orphaned descendants come
back to it, so nothing escapes the kill), drops to the job's user and
starts the work: the tasks of one step, each with its own argv,
environment, working directory and standard streams, all in ONE process
group (led by the first task, as Slurm's ``job->pgid``). ``job.json``'s
``"mode"`` says whose:

- batch (the default): the batch script, run as the one task of its job's
  batch step (:meth:`nodeagent.spool.BatchJob.as_step`), its streams the
  job's output files (opened as the user, waiting a moment for a directory
  that a tool creates right after sbatch, see :mod:`nodeagent.stdfiles`).
  This stepd has no connection to slurmd, which follows it through its
  files. On SIGTERM it kills the job: SIGTERM to every process, SIGKILL
  after KillWait; the reason (``JOBDIR/terminate.json``) decides the
  ``*** JOB 12 ON n1 CANCELLED AT ... ***`` line it writes to the job's
  stderr, and the ``killed`` file says the SIGTERM was sent. When the
  script ends, leftover processes are killed (after what remains of
  KillWait, when the job was being killed), and ``JOBDIR/status.json``
  records the outcome for slurmd. When slurmd has not touched its alive
  file for SlurmdTimeout (``fence_after``), the controller has declared
  the node DOWN and requeued the job: stepd kills it (outcome NODE_FAIL)
  so that it never runs beside its next run.
- ``"step"`` (an srun job step, written by :mod:`nodeagent.stepio`): first
  connects, still as root, to slurmd's Unix socket ``JOBDIR/stepio.sock``,
  then starts the step's tasks on this node; their streams are files
  opened as the user, or pipes relayed to and from slurmd as frames. A
  ``pty`` task (srun ``--pty``'s task 0) runs instead in a session of its
  own on a pseudo-terminal (:mod:`nodeagent.ptyio`) that is its stdin,
  stdout and stderr: its output is relayed as STDOUT, its input and window
  size (WINSIZE frames) go to the pty's master. A TERMINATE frame (or
  SIGTERM with ``terminate.json``) kills the step as a batch job is
  killed, with ``*** STEP J.S ON node CANCELLED AT ... ***`` on the first
  task's stderr. Each task's start and exit is reported as it happens; a
  task that ends does not stop the others. After the last task, leftovers
  are killed, the pipes drained, ``status.json`` written (per-task results
  too) and a DONE frame sent. If slurmd goes away the step runs on: the
  frames meant for it are appended to ``JOBDIR/lost-output`` (same
  format, at most LOST_OUTPUT_LIMIT bytes of output) and task stdin gets
  EOF; a terminal is hung up (SIGHUP to its session), as nobody can type
  into it any more.

Signals go to the tasks' groups with ``killpg`` and, individually, to any
other descendant (a ``setsid`` escapee, a shell's job), so they reach every
task and its children.

The frame format (:mod:`nodeagent.stepd.frames`, documented in
:mod:`nodeagent.stepio`) is a 9-byte header ``!BII`` (kind, task id, payload
length) then the payload.

Usage (MaxRSS, TotalCPU) is sampled by :mod:`nodeagent.usage` while the
script or the tasks run, and completed with the children's ``getrusage``;
each sample's per-task peaks go to ``JOBDIR/usage.json`` for sstat. A
SIGTERM or SIGKILL sent to a whole step writes its CANCELLED line first, as
Slurm's stepd does.

The package, by concern: :mod:`~nodeagent.stepd.frames` (the frame format,
which slurmd imports too), :mod:`~nodeagent.stepd.common` (what both modes
share: privileges, descendants, stepd's own lines),
:mod:`~nodeagent.stepd.link` (a step's connection to slurmd),
:mod:`~nodeagent.stepd.tasks` (a step's tasks: their streams, terminal and
start), :mod:`~nodeagent.stepd.supervisor` (a step's run to its end, a batch
script's too) and :mod:`~nodeagent.stepd.main` (the entry point,
and the fork server slurmd starts stepds with).

Imports nothing: importing :mod:`nodeagent.stepd.frames` must not load the
supervisor.
"""
