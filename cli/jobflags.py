"""The options of sbatch, srun and salloc, and the environment variables that set them.

One table holds every option of Slurm 22.05's three submission commands:
its long name, short letter, argument kind and which commands have it.
Another maps each command's input environment variables (``SBATCH_*``,
``SLURM_*``/``SRUN_*``, ``SALLOC_*``) to the option each one sets. Options
are read as Slurm reads them: ``#SBATCH`` directives first, then the
environment, then the command line, each overriding the one before.

What each option does is the commands' business; how values of options
accepted without effect are checked is :mod:`minislurm.optcheck`'s.

Imports cli.opts only.
"""

from __future__ import annotations

from cli.opts import NO_ARG, OPTIONAL, REQUIRED, Option, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

SBATCH, SRUN, SALLOC = "sbatch", "srun", "salloc"
_LETTER = {"b": SBATCH, "r": SRUN, "a": SALLOC}
_ARG = {"N": NO_ARG, "R": REQUIRED, "O": OPTIONAL}

# long name, short letter (- for none), argument (None, Required, Optional),
# commands (b: sbatch, r: srun, a: salloc).
_TABLE = """
accel-bind - R r
account A R bra
acctg-freq - R bra
array a R b
batch - R b
bb - R bra
bbf - R bra
bcast - O r
bcast-exclude - R r
begin b R bra
bell - N a
chdir D R bra
cluster-constraint - R bra
clusters M R bra
comment - R bra
compress - O r
constraint C R bra
container - R bra
contiguous - N bra
core-spec S R bra
cores-per-socket - R bra
cpu-bind - R r
cpu-freq - R bra
cpus-per-gpu - R bra
cpus-per-task c R bra
deadline - R bra
delay-boot - R bra
dependency d R bra
disable-status X N r
distribution m R bra
epilog - R r
error e R br
exact - N r
exclude x R bra
exclusive - O bra
export - R br
export-file - R b
extra-node-info B R bra
get-user-env - O ba
gid - R bra
gpu-bind - R bra
gpu-freq - R bra
gpus G R bra
gpus-per-node - R bra
gpus-per-socket - R bra
gpus-per-task - R bra
gres - R bra
gres-flags - R bra
help h N bra
het-group - R r
hint - R bra
hold H N bra
ignore-pbs - N b
immediate I O ra
input i R br
job-name J R bra
jobid - R r
kill-command K O a
kill-on-bad-exit K O r
kill-on-invalid-dep - R b
label l N r
licenses L R bra
mail-type - R bra
mail-user - R bra
mcs-label - R bra
mem - R bra
mem-bind - R bra
mem-per-cpu - R bra
mem-per-gpu - R bra
mincpus - R bra
mpi - R r
msg-timeout - R r
multi-prog - N r
network - R bra
nice - O bra
no-allocate Z N r
no-bell - N a
no-kill k O bra
no-requeue - N b
no-shell - N a
nodefile F R bra
nodelist w R bra
nodes N R bra
ntasks n R bra
ntasks-per-core - R bra
ntasks-per-gpu - R bra
ntasks-per-node - R bra
ntasks-per-socket - R bra
open-mode - R br
output o R br
overcommit O N bra
overlap - O r
oversubscribe s N bra
parsable - N b
partition p R bra
power - R bra
prefer - R bra
preserve-env E N r
priority - R bra
profile - R bra
prolog - R r
propagate - O br
pty - N r
qos q R bra
quiet Q N bra
quit-on-interrupt - N r
reboot - N bra
relative r R r
requeue - N b
reservation - R bra
resv-ports - O r
segment - R bra
send-libs - O r
signal - R bra
slurmd-debug - R r
sockets-per-node - R bra
spread-job - N bra
switches - R bra
task-epilog - R r
task-prolog - R r
test-only - N br
thread-spec - R bra
threads T R r
threads-per-core - R bra
time t R bra
time-min - R bra
tmp - R bra
uid - R bra
unbuffered u N r
usage - N bra
use-min-nodes - N bra
verbose v N bra
version V N bra
wait W N b
wait W R r
wait-all-nodes - R ba
wckey - R bra
wrap - R b
x11 - O ra
"""

# Not in the man page, as in Slurm: the srun salloc runs for its interactive step.
_HIDDEN = {"srun": [Option("interactive")]}
# Flags that undo each other share a destination: the last one given wins.
_FLAG_VALUES = {"no-requeue": ("requeue", False), "no-bell": ("bell", False)}
_MANY = frozenset({"verbose"})


def _options(prog: str) -> list[Option]:
    found = []
    for row in _TABLE.split("\n"):
        if not row:
            continue
        long, short, arg, commands = row.split()
        if prog not in (_LETTER[c] for c in commands):
            continue
        dest, const = _FLAG_VALUES.get(long, ("", True))
        found.append(
            Option(
                long,
                "" if short == "-" else short,
                _ARG[arg],
                dest=dest,
                many=long in _MANY,
                const=const,
            )
        )
    return found


_BUILT: dict[str, list[Option]] = {}


def options(prog: str) -> list[Option]:
    """A command's options.

    Args:
        prog: sbatch, srun or salloc.

    Returns:
        Its options, in the table's (alphabetical) order.
    """
    if prog not in _BUILT:
        _BUILT[prog] = _options(prog) + _HIDDEN.get(prog, [])
    return _BUILT[prog]


# Each command's input environment variables, as its man page lists them:
# the options named PREFIX + the option's name in capitals (``SBATCH_JOB_NAME``
# sets --job-name), then the others, with the option each sets (None: read
# elsewhere, or no effect here). A later variable overrides an earlier one.
_REGULAR = {
    SBATCH: (
        "SBATCH_",
        "account acctg-freq batch clusters constraint container core-spec cpus-per-gpu"
        " delay-boot distribution error exclusive export get-user-env gpu-bind gpu-freq gpus"
        " gpus-per-node gpus-per-task gres gres-flags hint ignore-pbs input job-name mem-bind"
        " mem-per-cpu mem-per-gpu network no-kill no-requeue open-mode output overcommit"
        " partition power profile qos requeue reservation signal spread-job thread-spec"
        " threads-per-core use-min-nodes wait wait-all-nodes wckey",
    ),
    SRUN: (
        "SLURM_",
        "account acctg-freq bcast bcast-exclude constraint core-spec cpu-bind cpus-per-gpu"
        " delay-boot dependency disable-status distribution epilog exact exclusive gpu-bind"
        " gpu-freq gpus gpus-per-node gpus-per-task gres gres-flags hint immediate mem-bind"
        " mem-per-cpu mem-per-gpu network no-kill ntasks-per-core ntasks-per-gpu"
        " ntasks-per-node ntasks-per-socket open-mode overcommit overlap partition power"
        " profile prolog qos reservation resv-ports send-libs signal spread-job task-epilog"
        " task-prolog thread-spec threads threads-per-core use-min-nodes wait wckey",
    ),
    SALLOC: (
        "SALLOC_",
        "account acctg-freq bell clusters constraint container core-spec cpus-per-gpu"
        " delay-boot exclusive gpu-bind gpu-freq gpus gpus-per-node gpus-per-task gres"
        " gres-flags hint immediate mem-bind mem-per-cpu mem-per-gpu network no-bell no-kill"
        " overcommit partition power profile qos reservation signal spread-job thread-spec"
        " threads-per-core use-min-nodes wait-all-nodes wckey",
    ),
}
_COMMON: dict[str, str | None] = {
    "SLURM_CONF": None,  # where slurm.conf is (minislurm.conffile)
    "SLURM_DEBUG_FLAGS": None,
    "SLURM_EXIT_ERROR": None,  # the exit status of errors (cli.common)
}
# Slurm's own names for what the command's own names override.
_ALIASES: dict[str, dict[str, str | None]] = {
    SBATCH: {"SLURM_CLUSTERS": "clusters", "SLURM_HINT": "hint"},
    SRUN: {},
    SALLOC: {"SLURM_CLUSTERS": "clusters", "SLURM_HINT": "hint"},
}
_IRREGULAR: dict[str, dict[str, str | None]] = {
    SBATCH: {
        "SBATCH_ARRAY_INX": "array",
        "SBATCH_DEBUG": "verbose",
        "SBATCH_MEM_PER_NODE": "mem",
        "SBATCH_REQ_SWITCH": "switches",
        "SBATCH_SEGMENT_SIZE": "segment",
        "SBATCH_TIMELIMIT": "time",
        "SBATCH_WAIT4SWITCH": None,
        "SLURM_STEP_KILLED_MSG_NODE_ID": None,
        "SLURM_UMASK": None,  # the umask of the job's files (cli.sbatch_spec)
    },
    SRUN: {
        "SLURM_BURST_BUFFER": "bb",
        "SLURM_CLUSTERS": "clusters",
        "SLURM_COMPRESS": "compress",
        "SLURM_CPU_FREQ_REQ": "cpu-freq",
        "SRUN_CPUS_PER_TASK": "cpus-per-task",
        "SLURM_DEBUG": "verbose",
        "SLURM_DIST_PLANESIZE": None,  # the size of --distribution=plane (cli.srun)
        "SLURM_EXIT_IMMEDIATE": None,  # the exit status of --immediate (cli.alloc)
        "SLURM_EXPORT_ENV": "export",
        "SRUN_EXPORT_ENV": "export",
        "SLURM_JOB_ID": "jobid",
        "SLURM_JOB_NAME": "job-name",  # ignored inside an allocation (cli.srun)
        "SLURM_NNODES": "nodes",
        "SLURM_JOB_NUM_NODES": "nodes",
        "SLURM_KILL_BAD_EXIT": "kill-on-bad-exit",
        "SLURM_LABELIO": "label",
        "SLURM_MEM_PER_NODE": "mem",
        "SLURM_MPI_TYPE": "mpi",
        "SLURM_NPROCS": "ntasks",
        "SLURM_NTASKS": "ntasks",
        "SLURM_WORKING_DIR": "chdir",
        "SLURM_REMOTE_CWD": "chdir",
        "SLURM_REQ_SWITCH": "switches",
        "SRUN_SEGMENT_SIZE": "segment",
        "SLURM_STDERRMODE": "error",
        "SLURM_STDINMODE": "input",
        "SLURM_STDOUTMODE": "output",
        "SLURM_GRES": "gres",
        "SLURM_STEP_GRES": "gres",  # steps only (cli.srun)
        "SLURM_TIMELIMIT": "time",
        "SLURM_UNBUFFEREDIO": "unbuffered",
        "SLURM_WAIT4SWITCH": None,
        "SLURMD_DEBUG": "slurmd-debug",
        "SRUN_CONTAINER": "container",
        "PMI_FANOUT": None,
        "PMI_FANOUT_OFF_HOST": None,
        "PMI_TIME": None,
        "SLURM_PMI_KVS_NO_DUP_KEYS": None,
        "SLURM_SRUN_REDUCE_TASK_EXIT_MSG": None,
        "SLURM_STEP_KILLED_MSG_NODE_ID": None,
        "SLURM_TEST_EXEC": None,
        "SLURM_UMASK": None,
    },
    SALLOC: {
        "SALLOC_BURST_BUFFER": "bb",
        "SALLOC_DEBUG": "verbose",
        "SALLOC_KILL_CMD": "kill-command",
        "SALLOC_MEM_PER_NODE": "mem",
        "SALLOC_REQ_SWITCH": "switches",
        "SALLOC_SEGMENT_SIZE": "segment",
        "SALLOC_TIMELIMIT": "time",
        "SALLOC_WAIT4SWITCH": None,
        "SLURM_EXIT_IMMEDIATE": None,  # the exit status of --immediate (cli.alloc)
    },
}


def environment(prog: str) -> dict[str, str | None]:
    """A command's input environment variables and the option each sets.

    Args:
        prog: sbatch, srun or salloc.

    Returns:
        Variable name -> option long name (None: not an option), in the
        order they are applied (a later one overrides an earlier one).
    """
    prefix, names = _REGULAR[prog]
    table = {**_COMMON, **_ALIASES[prog]}
    for name in names.split():
        table[prefix + name.upper().replace("-", "_")] = name
    table.update(_IRREGULAR[prog])
    return table


def _flag_is_set(value: str) -> bool:
    """A flag's variable is set by "", "yes" or a non-zero number, as the man pages say."""
    text = value.strip().lower()
    return text in ("", "yes") or (text.lstrip("-").isdigit() and int(text) != 0)


def environment_words(prog: str, environ: Mapping[str, str]) -> list[str]:
    """The options a command's input environment variables give, as command-line words.

    Args:
        prog: sbatch, srun or salloc.
        environ: the command's environment.

    Returns:
        ``--option=value`` words, in the order they apply.
    """
    kinds = {o.long: o.arg for o in options(prog)}
    words = []
    for name, long in environment(prog).items():
        value = environ.get(name)
        if value is None or long is None:
            continue
        kind = kinds[long]
        if long == "verbose":  # SBATCH_DEBUG=N: N times -v
            words += ["--verbose"] * (int(value) if value.isdigit() else 0)
        elif kind == NO_ARG:
            if _flag_is_set(value):
                words.append(f"--{long}")
        elif kind == OPTIONAL and not value:
            words.append(f"--{long}")
        else:
            words.append(f"--{long}={value}")
    return words


def environment_values(prog: str, environ: Mapping[str, str]) -> dict[str, object]:
    """The option values a command's input environment variables give.

    Args:
        prog: sbatch, srun or salloc.
        environ: the command's environment.

    Returns:
        Values by destination, as :func:`cli.opts.parse` returns them.
    """
    values, _ = parse(options(prog), environment_words(prog, environ))
    return values
