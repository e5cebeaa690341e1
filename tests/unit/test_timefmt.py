"""Tests of cli.timefmt: SLURM_TIME_FORMAT as Slurm 22.05's commands read it.

Expected texts are what the reference cluster's squeue and scontrol printed
with the same settings.
"""

from __future__ import annotations

import time

import pytest

from cli import timefmt

NOON = time.mktime((2026, 12, 1, 12, 0, 0, 0, 0, -1))  # a Tuesday, local time


def at(days: float, hour: int = 9, minute: int = 5) -> float:
    return time.mktime((2026, 12, 1 + int(days), hour, minute, 7, 0, 0, -1))


@pytest.mark.parametrize(
    ("value", "form", "error"),
    [
        ("", timefmt.STANDARD, ""),
        ("standard", timefmt.STANDARD, ""),
        ("relative", "relative", ""),
        ("%a %T", "%a %T", ""),
        ("bogus", timefmt.STANDARD, "invalid SLURM_TIME_FORMAT = 'bogus'"),
        ("%Y" + "x" * 30, timefmt.STANDARD, "invalid SLURM_TIME_FORMAT = '%Y" + "x" * 30 + "'"),
    ],
)
def test_the_variable_names_a_form_or_is_refused(value: str, form: str, error: str) -> None:
    assert timefmt.time_format({"SLURM_TIME_FORMAT": value}) == (form, error)


@pytest.mark.parametrize(
    ("form", "text"),
    [
        (timefmt.STANDARD, "2026-12-01T09:05:07"),
        ("%a %T", "Tue 09:05:07"),
        ("%H:%M", "09:05"),
    ],
)
def test_strftime_forms(form: str, text: str) -> None:
    assert timefmt.format_time(at(0), form, NOON) == text


@pytest.mark.parametrize(
    ("days", "text"),
    [
        (0, "09:05:07"),
        (-1, "Ystday 09:05"),
        (1, "Tomorr 09:05"),
        (3, "Fri 09:05"),
        (9, "10 Dec 09:05"),
        (-20, "11 Nov 09:05"),
        (400, "5 Jan 2028"),
    ],
)
def test_relative_form_is_slurms(days: int, text: str) -> None:
    assert timefmt.format_time(at(0) + days * 86400, "relative", NOON) == text


def test_what_does_not_fit_is_cut_at_31_characters() -> None:
    assert (
        timefmt.format_time(at(0), "%c %c", NOON)
        == time.strftime("%c %c", time.localtime(at(0)))[:31]
    )
