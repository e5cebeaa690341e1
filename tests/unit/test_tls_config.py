"""TLSType and TLSParameters in slurm.conf, and where daemons and commands find the files."""

from __future__ import annotations

from pathlib import Path

import pytest

from minislurm.conffile import read_client_config
from minislurm.config import load_slurm_conf
from minislurm.errors import ConfigError


def _conf(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "etc" / "slurm.conf"
    path.parent.mkdir(exist_ok=True)
    path.write_text("SlurmctldHost=ctl\n" + "".join(f"{line}\n" for line in lines))
    return str(path)


def test_without_tls_type_nothing_is_tls(tmp_path: Path) -> None:
    path = _conf(tmp_path, "TLSParameters=ca_cert_file=ca.pem")
    assert load_slurm_conf(path).tls_files() is None
    assert read_client_config(path).tls_ca == ""


def test_files_default_beside_slurm_conf_and_slurmd_falls_back_to_ctld(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    conf = load_slurm_conf(_conf(tmp_path, "TLSType=tls/openssl"))
    tls_files = (f"{etc}/tls/ca.crt", f"{etc}/tls/cluster.crt", f"{etc}/tls/cluster.key")
    assert conf.tls_files() == conf.tls_files("slurmd") == tls_files
    assert read_client_config(conf.path).tls_ca == f"{etc}/tls/ca.crt"


def test_parameters_name_each_file_relative_or_absolute(tmp_path: Path) -> None:
    params = (
        "ca_cert_file=/pki/ca.pem,ctld_cert_file=c.pem,ctld_cert_key_file=c.key,"
        "slurmd_cert_file=/pki/d.pem,slurmd_cert_key_file=d.key"
    )
    path = _conf(tmp_path, "TLSType=TLS/OpenSSL", f"TLSParameters={params}")
    conf = load_slurm_conf(path)
    etc = tmp_path / "etc"
    assert conf.tls_files() == ("/pki/ca.pem", f"{etc}/c.pem", f"{etc}/c.key")
    assert conf.tls_files("slurmd") == ("/pki/ca.pem", "/pki/d.pem", f"{etc}/d.key")
    assert read_client_config(path).tls_ca == "/pki/ca.pem"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("TLSType=tls/s2n", "expected one of tls/none, tls/openssl"),
        ("TLSParameters=ca_file=x", "unknown TLSParameters key 'ca_file'"),
        ("TLSParameters=ca_cert_file=", "ca_cert_file= needs a file"),
    ],
)
def test_bad_tls_settings_are_errors_at_their_line(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load_slurm_conf(_conf(tmp_path, "TLSType=tls/openssl", line))
    assert caught.value.line == 3
