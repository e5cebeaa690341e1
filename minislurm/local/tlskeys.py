"""Make a cluster's TLS files: a self-signed CA and one certificate naming every host.

``minislurm cluster up --tls`` and ``minislurm keygen --tls`` use it. The
``openssl`` command does the cryptography (Debian's ``openssl`` package), so
the project needs no Python crypto library. Keys are written mode 0600; the
certificate names ``localhost``, ``127.0.0.1``, ``::1`` and every host of
slurm.conf (SlurmctldHost's name and address, each node's name, NodeAddr and
NodeHostname), so every daemon can serve with it and every client verify it.

Imports minislurm.config.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import tempfile

from minislurm.config import SlurmConfig

CA_DAYS = 3650
CERT_DAYS = 825
_CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def cluster_hosts(conf: SlurmConfig) -> list[str]:
    """Every name and address by which a daemon of ``conf`` may be dialled.

    Args:
        conf: the cluster's configuration.

    Returns:
        The names and addresses, loopback first, without repeats.
    """
    hosts = ["localhost", "127.0.0.1", "::1", conf.controller_host, conf.controller_addr]
    for node in conf.nodes:
        hosts += [node.name, node.addr, node.hostname]
    return list(dict.fromkeys(h for h in hosts if h))


def _san(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return f"DNS:{host}"
    return f"IP:{host}"


def _openssl(*args: str) -> None:
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"openssl {args[0]} failed: {result.stderr.strip()}")


def make_cluster_certs(conf: SlurmConfig) -> list[str]:
    """Write a new CA and one certificate for ``conf``'s hosts where TLSParameters say.

    Files that exist are kept (the cluster may be running with them).

    Args:
        conf: the configuration (its TLSType must be ``tls/openssl``).

    Returns:
        The files written (none when all existed).

    Raises:
        RuntimeError: TLS is not configured, ``openssl`` is missing or fails.
    """
    files = conf.tls_files()
    if files is None:
        raise RuntimeError(f"TLSType={conf.tls_type}: no TLS files to make")
    ca, cert, key = files
    if all(os.path.exists(p) for p in files):
        return []
    if shutil.which("openssl") is None:
        raise RuntimeError(
            "the openssl command is needed to make TLS files (apt-get install openssl)"
        )
    for path in files:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    ca_key = os.path.splitext(ca)[0] + ".key"
    old = os.umask(0o077)
    try:
        _openssl(
            "req", "-x509", *_CURVE, "-keyout", ca_key, "-out", ca, "-days", str(CA_DAYS),
            "-subj", f"/CN=minislurm CA {conf.cluster_name}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        )  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            csr, ext = os.path.join(tmp, "req.csr"), os.path.join(tmp, "ext.cnf")
            with open(ext, "w") as f:
                f.write(
                    "basicConstraints=critical,CA:FALSE\n"
                    "keyUsage=critical,digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=serverAuth\n"
                    f"subjectAltName={','.join(_san(h) for h in cluster_hosts(conf))}\n"
                )
            _openssl(
                "req", *_CURVE, "-keyout", key, "-out", csr, "-subj", f"/CN={conf.cluster_name}",
            )  # fmt: skip
            _openssl(
                "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                "-out", cert, "-days", str(CERT_DAYS), "-extfile", ext,
            )  # fmt: skip
    finally:
        os.umask(old)
    for path in (ca, cert):  # everyone verifies with the CA; the keys stay 0600
        os.chmod(path, 0o644)
    return [ca, ca_key, cert, key]
