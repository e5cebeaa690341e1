"""minislurm: a Slurm-compatible workload manager for GPU training clusters.

This package is the shared core; it imports none of ctld, nodeagent or cli.
"""

__version__ = "0.1.0"
SLURM_VERSION = "22.05.8"  # the Slurm release whose behaviour we follow
VERSION_LINE = f"slurm {SLURM_VERSION} (minislurm {__version__})"
