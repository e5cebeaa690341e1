"""srun --multi-prog: the program each rank runs, with %t and %o (cli.multiprog)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli.common import CommandError
from cli.multiprog import multi_prog


def run_rank(command: list[str], rank: int) -> str:
    env = {**os.environ, "SLURM_PROCID": str(rank)}
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout


def test_each_rank_runs_its_line_with_its_rank_and_offset(tmp_path: Path) -> None:
    conf = tmp_path / "multi.conf"
    conf.write_text("# comment\n0 echo zero %t\n1-2,5 echo 'a b' %t-%o\n* echo rest%t\n")
    command = multi_prog(str(conf))
    outputs = [run_rank(command, rank) for rank in range(7)]
    assert outputs == [
        "zero 0\n",
        "a b 1-0\n",
        "a b 2-1\n",
        "rest3\n",
        "rest4\n",
        "a b 5-2\n",
        "rest6\n",
    ]


def test_a_missing_file_is_refused_in_slurms_words(tmp_path: Path) -> None:
    with pytest.raises(CommandError) as err:
        multi_prog(str(tmp_path / "none.conf"))
    assert err.value.message == f"error: Could not open multi_prog config file {tmp_path}/none.conf"
