"""Security: who is calling, proved on every RPC.

- ``cred``: the cluster key (``slurm.key``), and signing and checking with it.
- ``auth``: the credential every RPC carries (``auth/slurm``), made and checked.
- ``authd``: the local kiosk that signs for users who cannot read the key.
- ``authgrpc``: the grpcio interceptors that check credentials on the servers
  and sign calls on the daemons' own channels.
- ``munge``: ``AuthType=auth/munge`` through the munge daemon.

Imports the core and the transport's channel errors; the core imports nothing from here.
"""
