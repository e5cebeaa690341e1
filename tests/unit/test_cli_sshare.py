"""Tests of sshare's -o and -e (cli.sshare), against Slurm 22.05's sshare."""

from __future__ import annotations

import pytest

from cli import common, sshare


@pytest.mark.parametrize(
    ("specs", "columns"),
    [
        (
            ["account,user%5,fairshare%-12,rawshares"],
            [("Account", -20), ("User", 5), ("FairShare", -12), ("RawShares", 10)],
        ),
        (["fair"], [("FairShare", 10)]),
        (["A", "Cl,n"], [("Account", -20), ("Cluster", 10), ("NormShares", 11)]),
        (["user,User"], [("User", 10)]),
        ([""], [("Account", -20)]),
    ],
)
def test_sshare_fields_are_matched_as_slurms(specs, columns):
    assert sshare.parse_fields(specs) == columns


def test_sshare_refuses_a_field_it_does_not_know():
    with pytest.raises(common.CommandError, match='Invalid field requested: "bogus"'):
        sshare.parse_fields(["Account,bogus"])


def test_sshare_help_format_is_slurms():
    assert sshare.help_format().splitlines() == [
        "Account           Cluster           EffectvUsage      FairShare        ",
        "GrpTRESMins       GrpTRESRaw        ID                LevelFS          ",
        "NormShares        NormUsage         Partition         RawShares        ",
        "RawUsage          TRESRunMins       User             ",
    ]
