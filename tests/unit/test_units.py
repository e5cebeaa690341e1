"""Tests of minislurm.units against the formats in Slurm's reference outputs."""

from __future__ import annotations

import calendar
import signal
import time
from collections.abc import Iterator

import pytest

from minislurm.units import (
    INFINITE,
    format_duration_long,
    format_duration_short,
    format_exit_code,
    format_gres,
    format_limit_long,
    format_limit_short,
    format_limit_sinfo,
    format_memory_mb,
    format_timestamp,
    parse_gres,
    parse_memory_mb,
    parse_signal,
    parse_time_limit,
    parse_timestamp,
    signal_name,
)


def test_infinite_is_slurms_constant() -> None:
    assert INFINITE == 0xFFFFFFFF


# --------------------------------------------------------------------------- time limits


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("90", 90),
        ("5:30", 6),  # M:S rounds up to the minute
        ("0:30", 1),
        ("5:00", 5),
        ("1:00:00", 60),
        ("1:30:01", 91),
        ("2-3", 2 * 24 * 60 + 3 * 60),
        ("2-03:30", 2 * 24 * 60 + 3 * 60 + 30),
        ("1-0:0:1", 24 * 60 + 1),
        ("0-0:1", 1),
        ("10080", 10080),
        (" 15 ", 15),
    ],
)
def test_parse_time_limit_reads_slurm_forms(text: str, minutes: int) -> None:
    assert parse_time_limit(text) == minutes


@pytest.mark.parametrize("text", ["UNLIMITED", "INFINITE", "infinite", "Unlimited", "0", "0:0"])
def test_parse_time_limit_unlimited_words_and_zero_mean_infinite(text: str) -> None:
    assert parse_time_limit(text) == INFINITE


def test_parse_time_limit_zero_can_be_a_real_duration() -> None:
    assert parse_time_limit("0", zero_is_infinite=False) == 0
    assert parse_time_limit("7-0", zero_is_infinite=False) == 10080


@pytest.mark.parametrize(
    "text", ["", " ", "abc", "-5", "1:2:3:4", "1-2-3", "1-1:2:3:4", "5m", "1.5", "1:", ":1", "-1"]
)
def test_parse_time_limit_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid time specification"):
        parse_time_limit(text)


@pytest.mark.parametrize(
    ("sbatch_time", "scontrol_time_limit"),
    # FACTS.md: what scontrol shows as TimeLimit for these --time values
    [("90", "01:30:00"), ("5:30", "00:06:00"), ("2-3", "2-03:00:00"), ("infinite", "UNLIMITED")],
)
def test_time_limit_round_trips_to_scontrol_output(
    sbatch_time: str, scontrol_time_limit: str
) -> None:
    assert format_limit_long(parse_time_limit(sbatch_time)) == scontrol_time_limit


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (3, "00:00:03"),  # scontrol_show_job_running.txt RunTime
        (87, "00:01:27"),  # scontrol_show_job_timeout.txt RunTime
        (0, "00:00:00"),  # DelayBoot=00:00:00
        (5400, "01:30:00"),
        (86400 + 3 * 3600, "1-03:00:00"),
        (10 * 86400, "10-00:00:00"),
        (-1, "INVALID"),
    ],
)
def test_format_duration_long_as_scontrol_runtime(seconds: int, text: str) -> None:
    assert format_duration_long(seconds) == text


@pytest.mark.parametrize(
    ("minutes", "text"),
    [(5, "00:05:00"), (1, "00:01:00"), (60, "01:00:00"), (INFINITE, "UNLIMITED")],
)
def test_format_limit_long_as_scontrol_time_limit(minutes: int, text: str) -> None:
    # scontrol_show_job_running.txt, _timeout.txt, scontrol_show_partition.txt
    assert format_limit_long(minutes) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0:00"),  # squeue_default.txt TIME
        (3, "0:03"),
        (15, "0:15"),
        (300, "5:00"),
        (5400, "1:30:00"),
        (3600, "1:00:00"),
        (86400, "1-00:00:00"),
        (2 * 86400 + 61, "2-00:01:01"),
        (-5, "INVALID"),
    ],
)
def test_format_duration_short_as_squeue_time(seconds: int, text: str) -> None:
    assert format_duration_short(seconds) == text


@pytest.mark.parametrize(
    ("minutes", "text"),
    # squeue_long.txt TIME_LIMI; FACTS.md: %l prints 1:30:00
    [(1, "1:00"), (5, "5:00"), (90, "1:30:00"), (INFINITE, "UNLIMITED")],
)
def test_format_limit_short_as_squeue_time_limit(minutes: int, text: str) -> None:
    assert format_limit_short(minutes) == text


@pytest.mark.parametrize(
    ("minutes", "text"),
    # sinfo_default.txt TIMELIMIT
    [(60, "1:00:00"), (INFINITE, "infinite"), (30, "30:00"), (1440, "1-00:00:00")],
)
def test_format_limit_sinfo_prints_lowercase_infinite(minutes: int, text: str) -> None:
    assert format_limit_sinfo(minutes) == text


# --------------------------------------------------------------------------- memory


@pytest.mark.parametrize(
    ("text", "megabytes"),
    [
        ("4G", 4096),
        ("4g", 4096),
        ("100G", 102400),
        ("512", 512),
        ("512M", 512),
        ("512m", 512),
        ("1T", 1024 * 1024),
        ("1024K", 1),
        ("1025K", 2),  # kilobytes round up
        ("1k", 1),
        ("0", 0),
        ("4GB", 4096),
        ("16000MB", 16000),
    ],
)
def test_parse_memory_mb_reads_mem_syntax(text: str, megabytes: int) -> None:
    assert parse_memory_mb(text) == megabytes


@pytest.mark.parametrize(
    "text", ["", "G", "1.5G", "-1", "-1G", "4X", "4B", "4GiB", "four", "4 G", "4BB"]
)
def test_parse_memory_mb_rejects_what_slurm_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid memory specification"):
        parse_memory_mb(text)


@pytest.mark.parametrize(
    ("megabytes", "text"),
    # jobcomp_filetxt.txt Tres: mem=8000M, mem=16000M, mem=24000M, mem=100G
    [
        (8000, "8000M"),
        (16000, "16000M"),
        (24000, "24000M"),
        (102400, "100G"),
        (1024, "1G"),
        (1536, "1536M"),
        (1024 * 1024, "1T"),
        (1024**3, "1P"),
        (0, "0M"),
    ],
)
def test_format_memory_mb_as_tres_strings(megabytes: int, text: str) -> None:
    assert format_memory_mb(megabytes) == text


# --------------------------------------------------------------------------- gres


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("gpu:4", [("gpu", "", 4)]),
        ("gpu", [("gpu", "", 1)]),
        ("gpu:a100:2", [("gpu", "a100", 2)]),
        ("gpu:a100", [("gpu", "a100", 1)]),
        ("gpu:2,tpu:1", [("gpu", "", 2), ("tpu", "", 1)]),
        ("gres/gpu:2", [("gpu", "", 2)]),
        ("gres:gpu:2", [("gpu", "", 2)]),  # TresPerNode=gres:gpu:2
        ("gpu:0", [("gpu", "", 0)]),
        ("gpu:1g.5gb:3", [("gpu", "1g.5gb", 3)]),
        ("gpu:1g.5gb", [("gpu", "1g.5gb", 1)]),
        ("", []),
        ("none", []),
    ],
)
def test_parse_gres_reads_gres_syntax(text: str, parsed: list[tuple[str, str, int]]) -> None:
    assert parse_gres(text) == parsed


@pytest.mark.parametrize(
    "text", ["gpu:", ":4", "gpu:-1", "gpu:a100:x", "gpu:a:b:2", "gpu:2,", ",gpu", "gpu: 2"]
)
def test_parse_gres_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError, match="gres"):
        parse_gres(text)


@pytest.mark.parametrize(
    ("items", "text"),
    [
        ([("gpu", "", 8)], "gpu:8"),  # scontrol_show_node.txt Gres=gpu:8
        ([("gpu", "a100", 2), ("tpu", "", 1)], "gpu:a100:2,tpu:1"),
        ([], ""),
    ],
)
def test_format_gres_as_scontrol_shows_it(items: list[tuple[str, str, int]], text: str) -> None:
    assert format_gres(items) == text
    assert parse_gres(text) == items


# --------------------------------------------------------------------------- signals


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("TERM", 15),
        ("SIGTERM", 15),
        ("sigterm", 15),
        ("term", 15),
        ("USR1", 10),
        ("SIGUSR2", 12),
        ("KILL", 9),
        ("9", 9),
        ("HUP", 1),
        ("CONT", 18),
        ("STOP", 19),
        ("64", 64),
        ("IOT", 6),
    ],
)
def test_parse_signal_reads_names_and_numbers(text: str, number: int) -> None:
    assert parse_signal(text) == number


@pytest.mark.parametrize("text", ["", "0", "65", "-9", "BOGUS", "SIG", "TERMX", "9x", "SIG15"])
def test_parse_signal_rejects_unknown(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid signal"):
        parse_signal(text)


def test_signal_table_matches_this_platforms_signal_module() -> None:
    for sig in signal.Signals:
        if sig.name.startswith("SIG") and not sig.name.startswith("SIGRT"):
            assert parse_signal(sig.name) == sig.value
            if sig.name not in ("SIGIOT", "SIGCLD", "SIGPOLL"):
                assert signal_name(sig.value) == sig.name[3:]


@pytest.mark.parametrize(("number", "name"), [(10, "USR1"), (15, "TERM"), (9, "KILL"), (40, "40")])
def test_signal_name_omits_sig_prefix(number: int, name: str) -> None:
    assert signal_name(number) == name


# --------------------------------------------------------------------------- timestamps


@pytest.fixture
def utc() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


_SUBMIT = calendar.timegm((2026, 11, 30, 4, 26, 6, 0, 0, 0))


def test_format_timestamp_as_scontrol_prints_it(utc: None) -> None:
    assert format_timestamp(_SUBMIT) == "2026-11-30T04:26:06"


@pytest.mark.parametrize("value", [0, None, INFINITE])
def test_format_timestamp_of_unset_time_is_unknown(value: int | None) -> None:
    assert format_timestamp(value) == "Unknown"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T04:26:06", _SUBMIT),
        ("2026-11-30T04:26", _SUBMIT - 6),
        ("2026-11-30", _SUBMIT - (4 * 3600 + 26 * 60 + 6)),
        ("2024-02-29T23:59:59", calendar.timegm((2024, 2, 29, 23, 59, 59, 0, 0, 0))),
    ],
)
def test_parse_timestamp_reads_iso_local_time(utc: None, text: str, expected: int) -> None:
    assert parse_timestamp(text) == expected


def test_parse_timestamp_inverts_format_timestamp_in_local_time() -> None:
    now = int(time.time())
    assert parse_timestamp(format_timestamp(now)) == now


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-11-30T",
        "2026-13-01",
        "2026-02-29",
        "2026-11-31",
        "2026-11-30T24:00",
        "2026-11-30T04:60",
        "2026-11-30T04:26:61",
        "26-11-30",
        "2026/11/30",
        "2026-11-30T04",
        "now",
        "2026-11-30T04:26:06:00",
    ],
)
def test_parse_timestamp_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError):
        parse_timestamp(text)


@pytest.mark.parametrize(
    ("exit_code", "sig", "text"), [(3, 0, "3:0"), (0, 9, "0:9"), (0, 15, "0:15"), (0, 0, "0:0")]
)
def test_format_exit_code_as_slurm_exit_code_field(exit_code: int, sig: int, text: str) -> None:
    # FACTS.md: exit 3 -> 3:0; killed by 9 -> 0:9; scancel -> 0:15
    assert format_exit_code(exit_code, sig) == text
