"""The differential conformance suite: the same shell text against minislurm and real Slurm.

``cases/<area>.toml`` holds the cases, ``expected/<area>.json`` what real Slurm
22.05 printed for each (written by ``python -m tests.conformance.record``), and
``test_conformance.py`` runs every case against a minislurm cluster shaped like
the reference one and compares. README.md in this directory says how to add a
case. Imports nothing of the product: the suite drives the installed commands.
"""
