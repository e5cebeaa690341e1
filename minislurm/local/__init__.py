"""Local-cluster tooling: ``minislurm cluster up|down|status``.

- ``cluster``: one slurmctld and N slurmd as background processes, tracked by pid.
- ``netns``: the same cluster with each node in its own network namespace.
- ``tlskeys``: a cluster's CA and certificates for ``TLSType=tls/openssl``.

Starts processes; the core imports nothing from here.
"""
