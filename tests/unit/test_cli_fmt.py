"""Tests of cli.fmt: Slurm's format strings, cell padding and cutting, shared value formats."""

from __future__ import annotations

import json
import pwd
import re
from pathlib import Path

import pytest

from cli import fmt
from minislurm import units

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
CODES = frozenset("ijPtTRN")


# --------------------------------------------------------------------------- cells


@pytest.mark.parametrize(
    ("text", "width", "right", "cut", "expected"),
    [
        ("14", 18, True, True, "                14"),  # %.18i
        ("running", 8, True, True, " running"),
        ("toomanynodes", 8, True, True, "toomanyn"),  # right-justified values are cut
        ("toomanynodes", 8, False, True, "toomanyn"),
        ("gpu", 5, False, True, "gpu  "),
        ("n[1-2]", 1, True, False, "n[1-2]"),  # squeue %.1N: not cut
        ("NODELIST", 3, False, False, "NOD"),  # left-justified is always cut (%.3s)
        ("anything", 0, True, True, "anything"),  # no width: as it is
    ],
)
def test_cell_pads_and_cuts_like_slurms_print_str(
    text: str, width: int, right: bool, cut: bool, expected: str
) -> None:
    assert fmt.cell(text, width, right, cut) == expected


# --------------------------------------------------------------------------- -o formats


def _describe(columns: list[fmt.Column]) -> list[tuple[object, ...]]:
    return [
        ("literal", c.suffix) if c.literal else (c.code, c.width, c.right, c.suffix)
        for c in columns
    ]


def test_parse_format_reads_squeues_default_format() -> None:
    columns, errors = fmt.parse_format("%.18i %.9P %.8j %.2t %R", CODES)
    assert errors == []
    assert _describe(columns) == [
        ("i", 18, True, " "),
        ("P", 9, True, " "),
        ("j", 8, True, " "),
        ("t", 2, True, " "),
        ("R", 0, False, ""),
    ]


def test_parse_format_keeps_text_before_the_first_percent() -> None:
    columns, _ = fmt.parse_format("pre %i", CODES)
    assert _describe(columns) == [("literal", "pre "), ("i", 0, False, "")]


@pytest.mark.parametrize(
    ("spec", "literal", "error"),
    [
        ("%!", "%!", "!"),
        ("%5.3i|", "%5.3i|", "."),  # a dot after the width is no code
        ("%-5i|", "%-5i|", "-"),
        ("%.5", "%.5", ""),  # ended before its code
    ],
)
def test_parse_format_prints_an_invalid_specification_as_written(
    spec: str, literal: str, error: str
) -> None:
    columns, errors = fmt.parse_format(spec, CODES)
    assert _describe(columns) == [("literal", literal)]
    assert errors == [error]


def test_parse_format_drops_doubled_percent_signs_as_strtok_does() -> None:
    columns, _ = fmt.parse_format("%i%%%j", CODES)
    assert [c.code for c in columns] == ["i", "j"]


# --------------------------------------------------------------------------- -O formats


def test_parse_long_format_defaults_to_width_20_left_justified() -> None:
    columns, errors = fmt.parse_long_format("JobID,NAME", {"jobid", "name"})
    assert errors == []
    assert _describe(columns) == [("jobid", 20, False, ""), ("name", 20, False, "")]


def test_parse_long_format_reads_width_justification_and_suffix() -> None:
    columns, _ = fmt.parse_long_format("JobID:5 ,Name:.10|,State:0", {"jobid", "name", "state"})
    assert _describe(columns) == [
        ("jobid", 5, False, " "),
        ("name", 10, True, "|"),
        ("state", 0, False, ""),
    ]


def test_parse_long_format_drops_and_reports_unknown_names() -> None:
    columns, errors = fmt.parse_long_format("jobid,bogus,", {"jobid"})
    assert [c.code for c in columns] == ["jobid"]
    assert errors == ["bogus"]


def test_render_concatenates_cells_suffixes_and_literals() -> None:
    columns, _ = fmt.parse_format("x%.3i|%2j", CODES)
    line = fmt.render(columns, lambda c: ({"i": "7", "j": "name"}[c.code], True))
    assert line == "x  7|na"


# --------------------------------------------------------------------------- values


def test_timestamp_or_prints_local_time_or_the_missing_word() -> None:
    epoch = units.parse_timestamp("2026-11-30T04:26:06")
    assert fmt.timestamp_or(epoch) == "2026-11-30T04:26:06"
    assert fmt.timestamp_or(0) == "N/A"
    assert fmt.timestamp_or(0, "Unknown") == "Unknown"


def test_date_line_has_the_ctime_shape_of_squeue_long() -> None:
    reference = (REF / "squeue_long.txt").read_text().splitlines()[2]
    pattern = r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \d{4}"
    assert re.fullmatch(pattern, reference)
    assert re.fullmatch(pattern, fmt.date_line())
    epoch = units.parse_timestamp("2026-11-30T04:26:12")
    assert fmt.date_line(epoch) == reference
    # Early in a month the day keeps its zero (real sinfo -l: "Tue Dec 01 22:01:32 2026").
    assert fmt.date_line(units.parse_timestamp("2026-12-01T22:01:32")) == "Tue Dec 01 22:01:32 2026"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("PD", "PENDING"),
        ("r", "RUNNING"),
        ("completed", "COMPLETED"),
        ("oom", "OUT_OF_MEMORY"),
        ("CG", "COMPLETING"),
        ("bogus", None),
        ("", None),
    ],
)
def test_job_state_name_reads_names_and_compact_codes(text: str, name: str | None) -> None:
    assert fmt.job_state_name(text) == name


def test_resolve_user_takes_names_and_existing_uids_only() -> None:
    me = pwd.getpwuid(0)
    assert fmt.resolve_user(me.pw_name) == 0
    assert fmt.resolve_user("0") == 0
    assert fmt.resolve_user("no-such-user-xyz") is None
    assert fmt.resolve_user("4242424") is None


def test_user_and_group_names_prefer_what_the_controller_sent() -> None:
    assert fmt.user_name(0, "alice") == "alice"
    assert fmt.user_name(0) == pwd.getpwuid(0).pw_name
    assert fmt.user_name(4242424) == "4242424"
    assert fmt.group_name(4242424) == "4242424"


def test_split_list_drops_empty_items() -> None:
    assert fmt.split_list("gpu,,debug,") == ["gpu", "debug"]


# --------------------------------------------------------------------------- JSON


def test_to_json_writes_slurms_layout() -> None:
    text = fmt.to_json({"errors": [], "a": {"b": "/x", "n": None, "t": True, "f": 1.0}})
    assert text == (
        '{\n  "errors": [\n  ],\n  "a": {\n    "b": "\\/x",\n    "n": null,\n'
        '    "t": true,\n    "f": 1.0\n  }\n}'
    )


def test_to_json_reproduces_the_frame_of_the_reference_capture() -> None:
    captured = (REF / "squeue_json.txt").read_text()
    frame = captured[captured.index("{") : captured.index('  "jobs"')]
    document = json.loads(captured[captured.index("{") : captured.rindex("}") + 1])
    ours = fmt.to_json({"meta": document["meta"], "errors": [], "jobs": []})
    assert ours.startswith(frame)


def test_to_json_escapes_control_characters_and_quotes() -> None:
    assert fmt.to_json('a"b\\c\n\x01') == '"a\\"b\\\\c\\n\\u0001"'
