"""Extract the option lists and input environment variables of sbatch, srun and salloc.

Reads the installed man pages (Slurm 22.05's: ``man sbatch|srun|salloc``)
and writes, for each command, into tests/data/slurm-22.05/:

- ``COMMAND.options``: the heading of each entry of the OPTIONS section, as
  the man page prints it (``-A, --account=<account>``), in its order;
- ``COMMAND.environment``: the variables the INPUT ENVIRONMENT VARIABLES
  section names, one entry a line (``SBATCH_HINT or SLURM_HINT``).

CI has no Slurm: the files are committed, and tests/unit/test_option_table.py
reads them. Run by hand where Slurm's man pages are installed.

Usage: python scripts/extract_man_options.py [MAN_DIR]   (default /usr/share/man/man1)
"""

from __future__ import annotations

import gzip
import itertools
import re
import sys
from pathlib import Path

COMMANDS = ("sbatch", "srun", "salloc")
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "slurm-22.05"


def _plain(line: str) -> str:
    """A man-page line without its font escapes (``\\fB``, ``\\-``)."""
    return re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").strip()


def sections(text: str) -> dict[str, list[str]]:
    """The lines of each ``.SH`` section."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith(".SH"):
            current = line[3:].strip().strip('"')
            found[current] = []
        elif current:
            found[current].append(line)
    return found


def tagged(lines: list[str], first: str) -> list[str]:
    """The tag line after each ``.TP`` whose text starts with ``first``, without repeats."""
    tags = []
    for before, line in itertools.pairwise(lines):
        text = _plain(line)
        if before.startswith(".TP") and text.startswith(first) and text not in tags:
            tags.append(text)
    return tags


def main(man_dir: str = "/usr/share/man/man1") -> None:
    """Write the files.

    Args:
        man_dir: where the gzipped man pages are.
    """
    OUT.mkdir(parents=True, exist_ok=True)
    for command in COMMANDS:
        text = gzip.open(Path(man_dir) / f"{command}.1.gz", "rt").read()
        parts = sections(text)
        options = tagged(parts["OPTIONS"], "-")
        variables = tagged(parts["INPUT ENVIRONMENT VARIABLES"], "")
        (OUT / f"{command}.options").write_text("\n".join(options) + "\n")
        (OUT / f"{command}.environment").write_text("\n".join(variables) + "\n")
        print(f"{command}: {len(options)} options, {len(variables)} variables")


if __name__ == "__main__":
    main(*sys.argv[1:])
