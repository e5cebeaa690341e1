"""Tests of minislurm.iopattern: Slurm's ``%`` codes in output file names."""

from __future__ import annotations

import pytest

from minislurm.iopattern import (
    DEFAULT_ARRAY_OUTPUT,
    DEFAULT_OUTPUT,
    expand_pattern,
    output_path,
)

VALUES = {
    "j": "42",
    "x": "train",
    "u": "alice",
    "N": "n1",
    "A": "8",
    "a": "3",
    "J": "42.0",
    "s": "0",
    "t": "0",
    "n": "0",
}


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("slurm-%j.out", "slurm-42.out"),
        ("%x-%j.out", "train-42.out"),  # output_naming_x_j.txt: slurm-ok-20.out for -o slurm-%x-%j
        ("%u/%x.log", "alice/train.log"),
        ("%N.out", "n1.out"),
        ("arr-%A_%a.out", "arr-8_3.out"),  # output_naming_array.txt
        ("%J.out", "42.0.out"),
        ("100%%.txt", "100%.txt"),
        ("%%j", "%j"),
        ("%j%j", "4242"),
        ("plain.out", "plain.out"),
        ("", ""),
    ],
)
def test_expand_pattern_replaces_known_codes(pattern: str, expected: str) -> None:
    assert expand_pattern(pattern, VALUES) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("job%4j.out", "job0042.out"),
        ("%6A_%3a", "000008_003"),
        ("%2j", "42"),  # wider values are not cut
        ("%1j", "42"),
        ("%10x", "train"),  # padding applies to numbers only
        ("%5N", "n1"),
    ],
)
def test_expand_pattern_zero_pads_numeric_values_to_the_given_width(
    pattern: str, expected: str
) -> None:
    assert expand_pattern(pattern, VALUES) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("%q.out", "%q.out"),  # not a code
        ("%b-%j", "%b-42"),
        ("50%", "50%"),  # a trailing %
        ("x%4", "x%4"),  # digits but no code
        ("%j.%Z", "42.%Z"),
    ],
)
def test_expand_pattern_leaves_unknown_codes_alone(pattern: str, expected: str) -> None:
    assert expand_pattern(pattern, VALUES) == expected


def test_expand_pattern_leaves_codes_without_a_value_alone() -> None:
    assert expand_pattern("%x-%A_%a-%j", {"j": "5"}) == "%x-%A_%a-5"


@pytest.mark.parametrize(
    ("pattern", "keep", "expected"),
    [
        ("%N-%j.out", "N", "%N-42.out"),
        ("%N-%j.out", "Nj", "%N-%j.out"),
        ("%4N-%4j", "N", "%4N-0042"),
        ("%N%%", "N", "%N%"),
        ("%x", "", "train"),
    ],
)
def test_expand_pattern_keeps_the_codes_it_is_told_to(
    pattern: str, keep: str, expected: str
) -> None:
    assert expand_pattern(pattern, VALUES, keep=keep) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("slurm\\-%j.out", "slurm-%j.out"),
        ("\\%x-%j", "%x-%j"),
        ("a\\b%%", "ab%%"),
    ],
)
def test_a_backslash_disables_every_expansion(pattern: str, expected: str) -> None:
    assert expand_pattern(pattern, VALUES) == expected


def test_default_patterns_are_slurms() -> None:
    assert expand_pattern(DEFAULT_OUTPUT, VALUES) == "slurm-42.out"
    assert expand_pattern(DEFAULT_ARRAY_OUTPUT, VALUES) == "slurm-8_3.out"


@pytest.mark.parametrize(
    ("pattern", "work_dir", "expected"),
    [
        ("slurm-%j.out", "/cluster/work", "/cluster/work/slurm-42.out"),
        ("logs/%x.out", "/cluster/work", "/cluster/work/logs/train.out"),
        ("../out/%j", "/cluster/work", "/cluster/out/42"),
        ("./%j.out", "/cluster/work/", "/cluster/work/42.out"),
        ("/tmp/%u/%j.out", "/cluster/work", "/tmp/alice/42.out"),
        ("/abs//dir/./%j", "/cluster/work", "/abs/dir/42"),
    ],
)
def test_output_path_resolves_relative_patterns_against_the_work_dir(
    pattern: str, work_dir: str, expected: str
) -> None:
    assert output_path(pattern, work_dir, VALUES) == expected


def test_output_path_passes_keep_through() -> None:
    assert output_path("%N-%j.out", "/w", VALUES, keep="N") == "/w/%N-42.out"
