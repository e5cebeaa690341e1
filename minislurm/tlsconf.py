"""TLS settings: ``TLSType=tls/openssl`` and ``TLSParameters=``, checked and resolved to files.

With ``TLSType=tls/openssl`` in slurm.conf, slurmctld and every slurmd serve
gRPC over TLS only, and every client (the commands, srun, the agents, the
controller's calls to the agents) verifies the server's certificate against
the cluster's CA and its name against the address it dialled. Slurm 24.11
calls its plugin ``tls/s2n``; ours uses Python's ``ssl`` (OpenSSL), hence the
name. ``TLSParameters`` takes Slurm's key names; relative paths are taken
beside slurm.conf::

    TLSType=tls/openssl
    TLSParameters=ca_cert_file=tls/ca.crt,ctld_cert_file=tls/ctld.crt,ctld_cert_key_file=tls/ctld.key

``slurmd_cert_file``/``slurmd_cert_key_file`` default to the controller's
pair, so one certificate naming every host serves a small cluster
(``minislurm cluster up --tls`` makes such a CA and certificate).

The sockets, contexts and grpcio credentials that use them are in
minislurm.wire.tls. Imports only ``os``.
"""

from __future__ import annotations

import os

TLS_NONE = "tls/none"
TLS_OPENSSL = "tls/openssl"
TLS_TYPES = (TLS_NONE, TLS_OPENSSL)
PARAM_KEYS = (
    "ca_cert_file",
    "ctld_cert_file",
    "ctld_cert_key_file",
    "slurmd_cert_file",
    "slurmd_cert_key_file",
)
DEFAULT_FILES = {
    "ca_cert_file": "tls/ca.crt",
    "ctld_cert_file": "tls/cluster.crt",
    "ctld_cert_key_file": "tls/cluster.key",
}


def check_parameters(params: dict[str, str]) -> None:
    """Reject TLSParameters keys we do not know (a typo must not turn TLS's files away).

    Args:
        params: the parsed ``TLSParameters``.

    Raises:
        ValueError: an unknown key or an empty path.
    """
    for key, value in params.items():
        if key not in PARAM_KEYS:
            raise ValueError(f"unknown TLSParameters key {key!r} (known: {', '.join(PARAM_KEYS)})")
        if not value:
            raise ValueError(f"TLSParameters {key}= needs a file")


def tls_files(
    conf_path: str, tls_type: str, params: dict[str, str], role: str = "ctld"
) -> tuple[str, str, str] | None:
    """The CA, certificate and key files a daemon or client uses, or None without TLS.

    Args:
        conf_path: the slurm.conf (relative paths are taken beside it).
        tls_type: ``TLSType``.
        params: ``TLSParameters``.
        role: ``"ctld"`` or ``"slurmd"`` (whose certificate and key).

    Returns:
        ``(ca, cert, key)`` as absolute paths, or None under ``tls/none``.
    """
    if tls_type != TLS_OPENSSL:
        return None
    base = os.path.dirname(os.path.abspath(conf_path))

    def pick(key: str, fallback: str) -> str:
        path = params.get(key) or params.get(fallback) or DEFAULT_FILES[fallback]
        return os.path.join(base, path)

    ca = pick("ca_cert_file", "ca_cert_file")
    if role == "slurmd":
        return (
            ca,
            pick("slurmd_cert_file", "ctld_cert_file"),
            pick("slurmd_cert_key_file", "ctld_cert_key_file"),
        )
    return (
        ca,
        pick("ctld_cert_file", "ctld_cert_file"),
        pick("ctld_cert_key_file", "ctld_cert_key_file"),
    )
