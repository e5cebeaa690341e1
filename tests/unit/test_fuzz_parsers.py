"""Fuzzing the parsers of hostile text: ``#SBATCH`` lines and slurm.conf.

Hypothesis feeds each parser lines built from its real keywords and options
with awkward values (huge ranges and numbers, quotes, escapes, control and
non-ASCII characters) mixed with arbitrary text. A parser may accept the
input or refuse it with its own error (CommandError/UsageError for sbatch,
ConfigError for slurm.conf); any other exception is a crash, and an input
that takes over five seconds (the deadline) is runaway work. The number of
examples per test is ``MINISLURM_FUZZ_EXAMPLES`` (default 300), which keeps
the run to seconds in CI. Not covered: ``Include`` (it reads other files).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cli import opts
from cli.common import CommandError
from cli.sbatch import OPTIONS, batch_spec, directives
from minislurm import config, confkeys, hostlist
from minislurm.errors import MinislurmError

FUZZ = settings(
    max_examples=int(os.environ.get("MINISLURM_FUZZ_EXAMPLES", "300")),
    deadline=timedelta(seconds=5),  # generous for a loaded CI machine; catches runaway work
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

AWKWARD = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "99999999999999999999999",
        "1e309",
        "nan",
        "UNLIMITED",
        "infinite",
        "n[1-99999999]",
        "n[1-4],m[001-100]",
        "n[",
        "[]",
        "gpu:a100:99999999999",
        "gpu:-1",
        "1-2:3:4",
        "00:00:60",
        "9999-12-31T99:99:99",
        "now+99999999999days",
        "%j%x%a%A%u%N%%",
        "a,b,,c",
        "'quoted value'",
        '"unterminated',
        "\\",
        "x" * 300,
        "\u00e9\u4e2d\U0001f600",
        "\x00\x07\x1b[31m",
        "afterok:1:2?afternotok:3",
        "1-100%0",
        "0-4294967295",
    ]
)
VALUE = st.one_of(AWKWARD, st.text(max_size=30))


def _option_word(option: opts.Option) -> st.SearchStrategy[str]:
    names = [f"--{option.long}"] + ([f"-{option.short}"] if option.short else [])
    name = st.sampled_from(names)
    if option.arg == opts.NO_ARG:
        return name
    return st.builds(
        lambda n, v, eq: f"{n}={v}" if eq and n.startswith("--") else f"{n} {v}",
        name,
        VALUE,
        st.booleans(),
    )


# --export-file=N reads file descriptor N: one of pytest's own pipes, here.
FUZZED = [o for o in OPTIONS if o.long != "export-file"]
SBATCH_LINE = st.one_of(
    st.lists(st.one_of(*[_option_word(o) for o in FUZZED]), min_size=1, max_size=4).map(" ".join),
    st.text(max_size=60),
)


@FUZZ
@given(lines=st.lists(SBATCH_LINE, max_size=8), body=st.text(max_size=40))
def test_sbatch_directives_parse_or_refuse(lines: list[str], body: str) -> None:
    script = ("#!/bin/sh\n" + "".join(f"#SBATCH {line}\n" for line in lines) + body).encode(
        errors="surrogatepass"
    )
    try:
        values, _ = opts.parse(OPTIONS, directives(script))
        batch_spec(values, script, "fuzz", [])
    except (CommandError, opts.UsageError):
        pass


@pytest.mark.parametrize(
    "line",
    [
        "--nodefile=a\0b",
        "--bbf=a\0b",
        "--gid=a\0b",
        "--uid=a\0b",
        f"--gid={10**30}",
        f"--uid={10**30}",
        "--export-file=a\0b",
        f"--export-file={10**30}",
    ],
)
def test_a_nul_or_a_huge_number_in_a_directive_is_refused_cleanly(line: str) -> None:
    """Found by the test above: open(), getgrnam() and fdopen() raise ValueError or
    OverflowError for these, which escaped as tracebacks."""
    script = f"#!/bin/sh\n#SBATCH {line}\ntrue\n".encode()
    values, _ = opts.parse(OPTIONS, directives(script))
    with pytest.raises(CommandError):
        batch_spec(values, script, "fuzz", [])


def test_a_long_sbatch_line_is_parsed_in_linear_time() -> None:
    """A 4 MiB #SBATCH line (Slurm's max_script_size) once took hours (quadratic)."""
    script = b"#!/bin/sh\n#SBATCH --comment=" + b"x" * (4 * 1024 * 1024) + b"\n"
    assert len(directives(script)[0]) == 4 * 1024 * 1024 + len("--comment=")


CONF_KEYS = sorted(
    [*confkeys._GLOBAL_KEYS, *confkeys._NODE_KEYS, *confkeys._PARTITION_KEYS, "SlurmctldHost"]
)
CONF_LINE = st.one_of(
    st.lists(
        st.builds(lambda k, v: f"{k}={v}", st.sampled_from(CONF_KEYS), VALUE),
        min_size=1,
        max_size=5,
    ).map(" ".join),
    st.text(max_size=60).filter(lambda t: "include" not in t.lower()),
)
BASE = "SlurmctldHost=h\nNodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n"


@FUZZ
@given(lines=st.lists(CONF_LINE, max_size=10), base=st.booleans())
@example(lines=["\x1f"], base=False)  # found by atheris: str.split() saw no word
def test_slurm_conf_parses_or_refuses(lines: list[str], base: bool) -> None:
    text = (BASE if base else "") + "\n".join(lines) + "\n"
    with tempfile.TemporaryDirectory() as home:
        path = os.path.join(home, "slurm.conf")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        try:
            config.load_slurm_conf(path)
        except MinislurmError:
            pass


@FUZZ
@given(expr=st.one_of(AWKWARD, st.text(alphabet="n0123456789[]-,:", max_size=40)))
def test_hostlists_expand_boundedly_or_refuse(expr: str) -> None:
    try:
        names = hostlist.expand(expr)
    except ValueError:
        return
    assert len(names) <= 64 * 1024 * max(1, expr.count(",") + 1)


def test_coverage_guided_fuzzing_finds_no_crash(tmp_path: Path) -> None:
    """tests/fuzz/atheris_parsers.py for MINISLURM_ATHERIS_RUNS inputs (default 3000)."""
    pytest.importorskip("atheris", reason="atheris is not installed (x86_64, Python 3.11)")
    root = Path(__file__).resolve().parents[2]
    runs = os.environ.get("MINISLURM_ATHERIS_RUNS", "3000")
    flags = [f"-runs={runs}", "-max_total_time=60", f"-artifact_prefix={tmp_path}/"]
    done = subprocess.run(
        [sys.executable, str(root / "tests/fuzz/atheris_parsers.py"), *flags],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"Done {runs} runs" in done.stderr or "max_total_time" in done.stderr
