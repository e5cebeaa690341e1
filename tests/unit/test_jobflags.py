"""Input environment variables as options, and their precedence (cli.jobflags, stepspec, sbatch).

Slurm reads #SBATCH directives, then its input variables, then the command
line, each overriding the one before; a flag's variable is set by "", "yes"
or a non-zero number (the man pages' rule).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli import jobflags
from cli.sbatch import merged_options
from cli.stepspec import merged_values


@pytest.mark.parametrize(
    ("environ", "words"),
    [
        ({"SBATCH_JOB_NAME": "x"}, ["--job-name=x"]),
        ({"SBATCH_TIMELIMIT": "5"}, ["--time=5"]),
        ({"SBATCH_MEM_PER_NODE": "1G"}, ["--mem=1G"]),
        ({"SBATCH_ARRAY_INX": "1-3"}, ["--array=1-3"]),
        ({"SBATCH_REQUEUE": ""}, ["--requeue"]),
        ({"SBATCH_REQUEUE": "yes"}, ["--requeue"]),
        ({"SBATCH_REQUEUE": "1"}, ["--requeue"]),
        ({"SBATCH_REQUEUE": "0"}, []),
        ({"SBATCH_REQUEUE": "no"}, []),
        ({"SBATCH_EXCLUSIVE": ""}, ["--exclusive"]),
        ({"SBATCH_EXCLUSIVE": "user"}, ["--exclusive=user"]),
        ({"SBATCH_DEBUG": "2"}, ["--verbose", "--verbose"]),
        (
            {"SLURM_HINT": "multithread", "SBATCH_HINT": "nomultithread"},
            ["--hint=multithread", "--hint=nomultithread"],
        ),
        ({"SLURM_UMASK": "022", "SLURM_CONF": "/etc/slurm.conf"}, []),
        ({"SLURM_JOB_NAME": "x", "SRUN_CPUS_PER_TASK": "2"}, []),  # srun's, not sbatch's
    ],
)
def test_sbatch_variables_become_option_words(environ: dict[str, str], words: list[str]) -> None:
    assert jobflags.environment_words("sbatch", environ) == words


def test_sbatchs_own_variable_overrides_the_slurm_one() -> None:
    values = jobflags.environment_values(
        "sbatch", {"SBATCH_HINT": "nomultithread", "SLURM_HINT": "multithread"}
    )
    assert values == {"hint": "nomultithread"}


def test_srun_reads_the_counts_of_its_allocation_and_the_command_line_wins() -> None:
    environ = {
        "SLURM_JOB_ID": "7",
        "SLURM_NNODES": "2",
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_NTASKS": "4",
        "SLURM_CPUS_PER_TASK": "2",  # not srun's in 22.05: SRUN_CPUS_PER_TASK is
        "SLURM_JOB_NAME": "batch-name",  # ignored inside an allocation
        "SLURM_LABELIO": "1",
    }
    values = merged_values({"nodes": "1"}, environ)
    assert values == {"jobid": "7", "nodes": "1", "ntasks": "4", "label": True}


def test_srun_outside_an_allocation_takes_its_name_from_slurm_job_name() -> None:
    assert merged_values({}, {"SLURM_JOB_NAME": "named"}) == {"job_name": "named"}


def test_srun_drops_a_tasks_per_node_that_does_not_fit_with_slurms_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    environ = {"SLURM_NNODES": "2", "SLURM_NTASKS": "4"}
    assert merged_values({"ntasks_per_node": "1"}, environ) == {"nodes": "2", "ntasks": "4"}
    assert capsys.readouterr().err == (
        "srun: Warning: can't honor --ntasks-per-node set to 1 which doesn't match the"
        " requested tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node.\n"
    )


def test_srun_shrinks_the_nodes_to_the_tasks_with_slurms_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert merged_values({"ntasks": "1"}, {"SLURM_NNODES": "2"}) == {"nodes": "1", "ntasks": "1"}
    assert capsys.readouterr().err == (
        "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
    )


def test_sbatch_reads_directives_then_the_environment_then_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\n#SBATCH -J directive\n#SBATCH -t 3\n#SBATCH -p debug\ntrue\n")
    for name in list(os.environ):
        if name.startswith(("SBATCH_", "SLURM_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SBATCH_JOB_NAME", "environment")
    monkeypatch.setenv("SBATCH_TIMELIMIT", "5")
    values, _, _, _ = merged_options(["-t", "7", str(script)])
    assert (values["job_name"], values["time"], values["partition"]) == (
        "environment",
        "7",
        "debug",
    )
