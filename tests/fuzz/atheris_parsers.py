"""Coverage-guided fuzzing (atheris/libFuzzer) of the #SBATCH and slurm.conf parsers.

Run by hand for as long as you like::

    .venv/bin/python tests/fuzz/atheris_parsers.py -max_total_time=600

tests/unit/test_fuzz_parsers.py runs it briefly in CI. Each input is split
in two: one half becomes a batch script's ``#SBATCH`` lines, parsed as
sbatch parses them; the other a slurm.conf's text, parsed and converted as
the daemons do (``Include`` left out: it reads other files). Refusals
(CommandError, UsageError, ConfigError) are fine; any other exception is
reported by libFuzzer with the input that caused it.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports():
    from cli import opts
    from cli.common import CommandError
    from cli.sbatch import OPTIONS, directives
    from minislurm import config
    from minislurm.errors import MinislurmError

CONF = os.path.join(tempfile.mkdtemp(prefix="minislurm-fuzz-"), "slurm.conf")


def one_input(data: bytes) -> None:
    """Parse one input as #SBATCH lines and as slurm.conf."""
    half = len(data) // 2
    script = b"#!/bin/sh\n#SBATCH " + data[:half].replace(b"\n", b"\n#SBATCH ")
    try:
        opts.parse(OPTIONS, directives(script))
    except (CommandError, opts.UsageError):
        pass
    text = data[half:].decode("utf-8", errors="replace")
    if "nclude" in text.lower():
        return  # Include reads other files (not fuzzed)
    with open(CONF, "w", encoding="utf-8") as conf:
        conf.write(text)
    try:
        config.load_slurm_conf(CONF)
    except MinislurmError:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
