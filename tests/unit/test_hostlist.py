"""Tests of minislurm.hostlist against Slurm's hostlist behaviour."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minislurm import hostlist
from minislurm.hostlist import compress, count, expand


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        # scontrol_show_hostnames.txt and scontrol_show_hostnames_complex.txt
        ("n[1-2]", ["n1", "n2"]),
        ("a[01-03,7],b1", ["a01", "a02", "a03", "a7", "b1"]),
        ("gpu[01-04,07],login1", ["gpu01", "gpu02", "gpu03", "gpu04", "gpu07", "login1"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("n[8-10]", ["n8", "n9", "n10"]),
        ("n[098-100]", ["n098", "n099", "n100"]),
        ("login1", ["login1"]),
        ("login", ["login"]),
        ("n1,n1", ["n1", "n1"]),
        ("n[1-2],n[2-3]", ["n1", "n2", "n2", "n3"]),
        ("n1 n2\tn3\nn4", ["n1", "n2", "n3", "n4"]),
        ("n1, n2,,n3,", ["n1", "n2", "n3"]),
        ("[1-3]", ["1", "2", "3"]),
        ("n[1-2]-ib", ["n1-ib", "n2-ib"]),
        ("", []),
        ("  ", []),
    ],
)
def test_expand_gives_slurm_names_in_order(expr: str, hosts: list[str]) -> None:
    assert expand(expr) == hosts


def test_expand_several_brackets_is_a_product_with_the_leftmost_slowest() -> None:
    assert expand("rack[1-2]-n[1-3]") == [
        "rack1-n1", "rack1-n2", "rack1-n3", "rack2-n1", "rack2-n2", "rack2-n3",
    ]  # fmt: skip


def test_expand_three_brackets_with_lists_and_padding() -> None:
    assert expand("r[1,3]c[01-02]g[0]") == [
        "r1c01g0", "r1c02g0", "r3c01g0", "r3c02g0",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        # What Slurm 22.05's `scontrol show hostnames` prints for these.
        ("n[1-", ["n]"]),
        ("n[1-3", ["n]"]),
        ("n[", ["n]"]),
        ("x[1-2,5", ["x]", "5"]),
        ("a,n[1-", ["a", "n]"]),
        ("x[1-2],y[3", ["x1", "x2", "y]"]),
        ("n[1-2]a[", ["n[1-2]a]"]),
        ("[1-2", ["1-2"]),
        ("n1-3]", ["n1-3]"]),
        ("a]b", ["a]b"]),
        ("n[1-]", ["n1"]),
    ],
)
def test_unclosed_brackets_and_stray_ones_are_read_as_slurm_reads_them(
    expr: str, hosts: list[str]
) -> None:
    assert expand(expr) == hosts


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("n[[1-2]]", "nested"),
        ("n[3-1]", "descending"),
        ("n[a-b]", "invalid range"),
        ("n[1-b]", "invalid range"),
        ("n[]", "empty range"),
        ("n[1,,2]", "invalid range"),
        ("n[-1]", "invalid range"),
        ("n[1 -2]", "whitespace"),
        ("n[0-70000]", "too many hosts"),
    ],
)
def test_malformed_expression_raises_value_error(expr: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[")):
        expand(expr)


@pytest.mark.parametrize(
    "expr",
    ["n[1-3]", "a[01-03,7],b1", "rack[1-2]-n[1-3]", "n1 n2", "x,y,z[1-9]", "", "n[1-2],n2"],
)
def test_count_matches_the_length_of_expand(expr: str) -> None:
    assert count(expr) == len(expand(expr))


def test_count_of_a_huge_product_does_not_build_the_list() -> None:
    assert count("r[0-65535]n[0-65535]") == 65536 * 65536


def test_count_rejects_malformed_expressions() -> None:
    with pytest.raises(ValueError):
        count("n[5-1]")


@pytest.mark.parametrize(
    ("hosts", "expr"),
    [
        # scontrol_show_hostlist.txt
        (["n1", "n2", "n3", "n5"], "n[1-3,5]"),
        (["n1", "n2"], "n[1-2]"),
        (["n1"], "n1"),
        (["login"], "login"),
        (["n01", "n02", "n3"], "n[01-02,3]"),
        (["n9", "n10", "n11"], "n[9-11]"),
        (["n09", "n10"], "n[09-10]"),
        (["n1", "n02"], "n[1,02]"),
        (["a01", "a02", "a03", "a7", "b1"], "a[01-03,7],b1"),
        (["rack1-n1", "rack1-n2", "rack2-n1"], "rack1-n[1-2],rack2-n1"),
        (["login", "n1", "n2"], "login,n[1-2]"),
        ([], ""),
    ],
)
def test_compress_writes_slurm_ranges(hosts: list[str], expr: str) -> None:
    assert compress(hosts) == expr


@pytest.mark.parametrize(
    ("hosts", "expr"),
    [
        # Slurm's `scontrol show hostlist h003,h002,h001` prints h[003,002,001].
        (["h003", "h002", "h001"], "h[003,002,001]"),
        (["n3", "n1", "n2"], "n[3,1-2]"),
        (["n1", "m1", "n2"], "n1,m1,n2"),
        (["n1", "n1"], "n[1,1]"),
    ],
)
def test_compress_keeps_order_and_duplicates_like_scontrol_show_hostlist(
    hosts: list[str], expr: str
) -> None:
    assert compress(hosts) == expr
    assert expand(expr) == hosts


@pytest.mark.parametrize(
    ("hosts", "expr"),
    [
        (["h003", "h002", "h001"], "h[001-003]"),
        (["n3", "n1", "n2", "n1"], "n[1-3]"),
        (["n10", "n9", "n2"], "n[2,9-10]"),
        (["rack10-n1", "rack2-n1"], "rack2-n1,rack10-n1"),
        (["b1", "a2", "a1"], "a[1-2],b1"),
    ],
)
def test_compress_sorted_sorts_naturally_and_drops_duplicates(hosts: list[str], expr: str) -> None:
    assert compress(hosts, sort=True) == expr


_HOSTS = st.builds(
    lambda prefix, number, width: f"{prefix}{number:0{width}d}",
    st.sampled_from(["n", "gpu", "rack1-n", "a"]),
    st.integers(min_value=0, max_value=120),
    st.integers(min_value=1, max_value=3),
)


@given(st.lists(_HOSTS, max_size=40))
def test_compress_then_expand_gives_any_list_back(hosts: list[str]) -> None:
    assert expand(compress(hosts)) == hosts


@given(st.lists(_HOSTS, max_size=40))
def test_sorted_unique_lists_round_trip(hosts: list[str]) -> None:
    ordered = expand(compress(hosts, sort=True))
    assert sorted(ordered) == sorted(set(hosts))
    assert compress(ordered) == compress(hosts, sort=True)
    assert expand(compress(ordered)) == ordered


@given(st.lists(_HOSTS, max_size=40))
def test_count_of_compressed_list_is_its_length(hosts: list[str]) -> None:
    assert count(compress(hosts)) == len(hosts)


def test_max_range_is_slurms() -> None:
    assert hostlist.MAX_RANGE == 65536
    assert len(expand("n[1-65536]")) == 65536
