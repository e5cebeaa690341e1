"""Slurm hostlist expressions: ``gpu[01-04,07],login1`` <-> a list of host names.

The role of Slurm's ``src/common/hostlist.c``: ``expand`` turns an expression
into names (``scontrol show hostnames``), ``compress`` turns names into an
expression (``scontrol show hostlist``, or ``hostlistsorted`` with
``sort=True``), ``count`` sizes an expression without building the list.

Syntax, as Slurm reads it: hosts are separated by commas or whitespace; a
host may hold several bracket groups (``rack[1-2]-n[1-3]``), expanded as a
cartesian product with the leftmost group varying slowest; a bracket holds
comma-separated numbers or ``lo-hi`` ranges, each zero-padded to the width of
its ``lo`` (``n[08-10]`` gives n08 n09 n10, ``n[8-10]`` gives n8 n9 n10).
Slurm's leniency is kept: a ``[`` never closed makes a literal name (``n[1-``
is ``n]``), a stray ``]`` is a plain character, ``n[1-]`` is ``n1``.

The commands import this module, so it imports nothing at module level but
the standard library's cheapest parts, and none of our other packages.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

# Slurm's MAX_RANGE: a larger bracket range is taken to be a mistake.
MAX_RANGE = 64 * 1024

_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t\n\r\f\v")

# A parsed host: literal strings alternating with bracket groups; a bracket
# group is a list of (lo, hi, width) ranges.
_Range = tuple[int, int, int]
_Part = str | list[_Range]


def expand(expr: str) -> list[str]:
    """Expand a hostlist expression into host names, in order, keeping duplicates.

    Args:
        expr: e.g. ``"gpu[01-04,07],login1"`` or ``"n1 n2"``; empty gives [].

    Returns:
        The host names, e.g. ``["gpu01", "gpu02", "gpu03", "gpu04", "gpu07", "login1"]``.

    Raises:
        ValueError: the expression is malformed (unbalanced brackets, a
            descending or non-numeric range, an empty range, a range larger
            than MAX_RANGE).
    """
    hosts: list[str] = []
    for parts in _parse(expr):
        hosts.extend(_expand_parts(parts, 0, ""))
    return hosts


def count(expr: str) -> int:
    """Count the hosts an expression names, without building the list.

    Args:
        expr: a hostlist expression.

    Returns:
        How many names ``expand(expr)`` would return (duplicates included).

    Raises:
        ValueError: the expression is malformed.
    """
    total = 0
    for parts in _parse(expr):
        product = 1
        for part in parts:
            if not isinstance(part, str):
                product *= sum(hi - lo + 1 for lo, hi, _ in part)
        total += product
    return total


def compress(hosts: Iterable[str], *, sort: bool = False) -> str:
    """Write host names as one hostlist expression, as ``scontrol show hostlist`` does.

    Without ``sort`` the order is kept exactly (``expand`` gives the input
    back): runs of consecutive numbers with one prefix become ranges, and
    neighbouring ranges of one prefix share a bracket (``n3,n1,n2`` gives
    ``n[3,1-2]``, as Slurm prints it). A number joins a range only when the
    range's zero-padding reproduces it (``n01,n02,n3`` gives ``n[01-02,3]``).
    Names without a numeric suffix are written as they are.

    Args:
        hosts: host names, e.g. ``["n1", "n2", "n3", "n5"]``.
        sort: like ``scontrol show hostlistsorted``: sort (numbers
            numerically, prefixes in natural order) and drop duplicates.

    Returns:
        The expression, e.g. ``"n[1-3,5]"``; ``""`` for no hosts.
    """
    names = list(hosts)
    if sort:
        names = sorted(set(names), key=_sort_key)
    groups: list[tuple[str, list[list[str]]]] = []  # (prefix, [[lo, hi], ...])
    for name in names:
        prefix, digits = _split_suffix(name)
        if digits is None:
            groups.append((name, []))
            continue
        if groups and groups[-1][0] == prefix and groups[-1][1]:
            last = groups[-1][1][-1]
            if _extends(last, digits):
                last[1] = digits
            else:
                groups[-1][1].append([digits, digits])
        else:
            groups.append((prefix, [[digits, digits]]))
    return ",".join(_format_group(prefix, ranges) for prefix, ranges in groups)


def _extends(run: list[str], digits: str) -> bool:
    """Whether ``digits`` is the number after ``run``'s end, written in its width."""
    width = len(run[0])
    return int(digits) == int(run[1]) + 1 and digits == f"{int(digits):0{width}d}"


def _format_group(prefix: str, ranges: list[list[str]]) -> str:
    if not ranges:
        return prefix
    items = [lo if lo == hi else f"{lo}-{hi}" for lo, hi in ranges]
    if len(items) == 1 and ranges[0][0] == ranges[0][1]:
        return prefix + items[0]
    return f"{prefix}[{','.join(items)}]"


def _split_suffix(name: str) -> tuple[str, str | None]:
    """Split ``n01`` into ``("n", "01")``; a name without digits at the end gets None."""
    end = len(name)
    while end > 0 and name[end - 1] in _DIGITS:
        end -= 1
    if end == len(name):
        return name, None
    return name[:end], name[end:]


def _sort_key(name: str) -> tuple[tuple[tuple[int, int | str], ...], int, int, int]:
    prefix, digits = _split_suffix(name)
    if digits is None:
        return _natural_key(prefix), 0, 0, 0
    return _natural_key(prefix), 1, int(digits), len(digits)


def _natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Order ``rack2`` before ``rack10`` (Slurm compares prefixes with strnatcmp)."""
    chunks: list[tuple[int, int | str]] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or (text[i] in _DIGITS) != (text[start] in _DIGITS):
            chunk = text[start:i]
            chunks.append((0, int(chunk)) if chunk[0] in _DIGITS else (1, chunk))
            start = i
    return tuple(chunks)


def _expand_parts(parts: list[_Part], index: int, head: str) -> Iterator[str]:
    if index == len(parts):
        yield head
        return
    part = parts[index]
    if isinstance(part, str):
        yield from _expand_parts(parts, index + 1, head + part)
        return
    for lo, hi, width in part:
        for number in range(lo, hi + 1):
            yield from _expand_parts(parts, index + 1, f"{head}{number:0{width}d}")


def _parse(expr: str) -> list[list[_Part]]:
    """Split an expression into hosts, each parsed into literals and bracket groups."""
    return [_parse_host(token, expr) for token in _tokens(expr)]


def _tokens(expr: str) -> Iterator[str]:
    """The hosts of an expression: commas and whitespace separate them, except inside brackets.

    As Slurm's ``_next_tok``: a ``[`` that no ``]`` follows does not hold a
    bracket open, so ``n[1-2,5`` is the hosts ``n[1-2`` and ``5``.
    """
    start = pos = 0
    while pos < len(expr):
        char = expr[pos]
        if char == "[":
            close = expr.find("]", pos)
            pos = close if close >= 0 else pos
        elif char == "," or char in _SPACE:
            if pos > start:
                yield expr[start:pos]
            start = pos + 1
        pos += 1
    if pos > start:
        yield expr[start:]


def _parse_host(token: str, expr: str) -> list[_Part]:
    """Parse one host token such as ``rack[1-2]-n[01-03]``.

    A token whose last ``[`` is never closed is one literal name, as Slurm
    reads it: what comes before that ``[`` with a ``]`` after it (``n[1-``
    is ``n]``), or, with nothing before it, what comes after (``[1-2`` is
    ``1-2``). A ``]`` with no ``[`` before it is a plain character.
    """
    last_open = token.rfind("[")
    if last_open >= 0 and token.find("]", last_open) < 0:
        return [token[:last_open] + "]" if last_open else token[1:]]
    parts: list[_Part] = []
    pos = 0
    while pos < len(token):
        open_at = token.find("[", pos)
        if open_at < 0:
            parts.append(token[pos:])
            break
        close_at = token.index("]", open_at)
        body = token[open_at + 1 : close_at]
        if "[" in body:
            raise ValueError(f"nested '[' in hostlist {expr!r}")
        if _SPACE.intersection(body):
            raise ValueError(f"whitespace inside brackets in hostlist {expr!r}")
        if open_at > pos:
            parts.append(token[pos:open_at])
        parts.append(_parse_ranges(body, expr))
        pos = close_at + 1
    return parts


def _parse_ranges(body: str, expr: str) -> list[_Range]:
    """Parse the inside of one bracket: ``01-04,07`` into [(1, 4, 2), (7, 7, 2)]."""
    if not body:
        raise ValueError(f"empty range '[]' in hostlist {expr!r}")
    ranges: list[_Range] = []
    for item in body.split(","):
        lo_text, _, hi_text = item.partition("-")
        if not _is_number(lo_text) or (hi_text and not _is_number(hi_text)):
            raise ValueError(f"invalid range {item!r} in hostlist {expr!r}")
        lo = int(lo_text)
        hi = int(hi_text) if hi_text else lo  # Slurm reads ``1-`` as ``1``
        if hi < lo:
            raise ValueError(f"descending range {item!r} in hostlist {expr!r}")
        if hi - lo + 1 > MAX_RANGE:
            raise ValueError(f"too many hosts in range {item!r} of hostlist {expr!r}")
        ranges.append((lo, hi, len(lo_text)))
    return ranges


def _is_number(text: str) -> bool:
    return bool(text) and all(char in _DIGITS for char in text)
