"""Tests of minislurm.jobopts: --signal, --mail-type and --open-mode as Slurm 22.05 reads them.

Accepted and rejected values were checked with the reference cluster's sbatch.
"""

from __future__ import annotations

import pytest

from minislurm.jobopts import WarnSignal, parse_mail_type, parse_open_mode, parse_warn_signal


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("USR1", WarnSignal(10, 60, False)),
        ("SIGUSR2@90", WarnSignal(12, 90, False)),  # what submitit writes
        ("usr1@5", WarnSignal(10, 5, False)),
        ("10@5", WarnSignal(10, 5, False)),
        ("B:USR1@5", WarnSignal(10, 5, True)),
        ("RB:USR1@5", WarnSignal(10, 5, True)),
        ("BR:TERM", WarnSignal(15, 60, True)),
        ("R:USR1", WarnSignal(10, 60, False)),  # R: concerns reservations: no effect here
        ("USR1@0", WarnSignal(10, 0, False)),
        ("USR1@65535", WarnSignal(10, 65535, False)),
        ("USR1@ 5", WarnSignal(10, 5, False)),
    ],
)
def test_parse_warn_signal_reads_flags_signal_and_time(text: str, expected: WarnSignal) -> None:
    assert parse_warn_signal(text) == expected


@pytest.mark.parametrize(
    "text", ["", "bogus", "0", "B:", "USR1@x", "USR1@-1", "USR1@70000", "B:USR1@5x", "X:USR1"]
)
def test_parse_warn_signal_rejects_what_sbatch_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_warn_signal(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("END", "END"),
        ("end", "END"),
        ("FAIL,BEGIN", "BEGIN,FAIL"),
        ("ALL", "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT"),
        ("TIME_LIMIT_90,END", "END,TIME_LIMIT_90"),
        (
            "INVALID_DEPEND,ARRAY_TASKS,TIME_LIMIT,TIME_LIMIT_50,TIME_LIMIT_80,REQUEUE,STAGE_OUT",
            "ARRAY_TASKS,INVALID_DEPEND,REQUEUE,STAGE_OUT,TIME_LIMIT_50,TIME_LIMIT_80,TIME_LIMIT",
        ),
        ("NONE", ""),
        ("END,", "END"),
    ],
)
def test_parse_mail_type_gives_scontrols_order(text: str, shown: str) -> None:
    assert parse_mail_type(text) == shown


@pytest.mark.parametrize("text", ["bogus", "", ",", "END,bogus"])
def test_parse_mail_type_rejects_unknown_types(text: str) -> None:
    with pytest.raises(ValueError):
        parse_mail_type(text)


@pytest.mark.parametrize(
    ("text", "mode"),
    [("append", "append"), ("a", "append"), ("APPEND", "append"), ("truncate", "truncate")],
)
def test_parse_open_mode_goes_by_the_first_letter(text: str, mode: str) -> None:
    assert parse_open_mode(text) == mode


@pytest.mark.parametrize("text", ["bogus", ""])
def test_parse_open_mode_rejects_anything_else(text: str) -> None:
    with pytest.raises(ValueError):
        parse_open_mode(text)
