"""How sacct (and sstat) lay out their lines, as Slurm's ``src/common/print_fields.c`` does.

Reads ``--format`` lists into columns (names abbreviate to the first field
they start, ``%width`` sets a width, negative for left-justified); writes
fixed-width cells each followed by a space (strings longer than the width
end in ``+``), or cells delimited with ``-p``/``-P``.

Pure functions; imports cli.sacct_fields only.
"""

from __future__ import annotations

from cli.sacct_fields import DATE, FIELDS, STR, Field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from minislurm.wire.protowire import Message


class InvalidField(Exception):
    """A ``--format`` name that names no field."""


class Column:
    """A field as ``--format`` asked for it, with the width it prints in."""

    __slots__ = ("field", "width")

    def __init__(self, field: Field, width: int) -> None:
        self.field = field
        self.width = width


def _atoi(text: str) -> int:
    """C's atoi: leading blanks, a sign, digits; anything else ends the number."""
    text = text.lstrip()
    sign = -1 if text[:1] == "-" else 1
    text = text[1:] if text[:1] in "+-" and text else text
    digits = ""
    for char in text:
        if not char.isdigit():
            break
        digits += char
    return sign * int(digits) if digits else 0


def find_field(name: str, fields: Sequence[Field] = FIELDS) -> Field:
    """The field a ``--format`` name means: the first whose name starts with it, any case.

    Args:
        name: e.g. ``jobid``, ``State``, ``elap``.
        fields: the command's fields (sacct's by default).

    Returns:
        The field.

    Raises:
        InvalidField: no field starts with it.
    """
    lower = name.lower()
    for field in fields:
        if field.name.lower().startswith(lower):
            return field
    raise InvalidField(name)


def parse_columns(spec: str) -> list[Column]:
    """Read a ``--format`` list: ``JobID,JobName%12,state%-20`` (``ALL`` for every field).

    A width given to a field anywhere applies to every use of it, as in
    sacct (the width lives in Slurm's field table).

    Args:
        spec: comma-separated names, each with an optional ``%width``.

    Returns:
        The columns.

    Raises:
        InvalidField: a name that names no field (the name without its width).
    """
    picked: list[Field] = []
    widths: dict[str, int] = {}
    for item in spec.split(","):
        item = item.lstrip()
        if not item:
            continue
        name, percent, width = item.partition("%")
        chosen = list(FIELDS) if "ALL".startswith(name.upper()) else [find_field(name)]
        if percent:
            widths.update((field.name, _atoi(width)) for field in chosen)
        picked.extend(chosen)
    return [Column(field, widths.get(field.name, field.width)) for field in picked]


class Layout:
    """How lines are written: fixed-width, or delimited (``-p``: with a trailing delimiter)."""

    __slots__ = ("delimiter", "parsable", "trailing")

    def __init__(self, parsable: bool = False, trailing: bool = False, delimiter: str = "|"):
        self.parsable = parsable
        self.trailing = trailing
        self.delimiter = delimiter

    def join(self, cells: list[str]) -> str:
        """A line of delimited cells."""
        end = self.delimiter if self.trailing else ""
        return self.delimiter.join(cells) + end


def fixed_cell(text: str | None, width: int, kind: str) -> str:
    """One fixed-width cell and its trailing space, as print_fields.c writes it.

    Args:
        text: the value; None or "" print blank.
        width: the width, negative for left-justified.
        kind: STR values longer than the width end in ``+``; DATE values are
            cut; NUM values are never cut.

    Returns:
        The cell.
    """
    size = abs(width)
    text = text or ""
    if kind == STR and len(text) > size:
        text = text[: size - 1] + "+" if size else ""
    elif kind == DATE:
        text = text[:size]
    return (text.rjust(size) if width > 0 else text.ljust(size)) + " "


def header_lines(columns: list[Column], layout: Layout) -> list[str]:
    """The header (and, fixed-width, the line of dashes).

    Args:
        columns: the columns.
        layout: how to write them.

    Returns:
        The lines, without newlines.
    """
    if layout.parsable:
        return [layout.join([c.field.name for c in columns])]
    names = "".join(fixed_cell(c.field.name[: abs(c.width)], c.width, DATE) for c in columns)
    dashes = "".join("-" * abs(c.width) + " " for c in columns)
    return [names, dashes]


def record_line(columns: list[Column], record: Message | Any, now: int, layout: Layout) -> str:
    """One record's line.

    Args:
        columns: the columns.
        record: an AcctRecord (or what the columns' fields read: sstat's figures).
        now: the reply's time.
        layout: how to write it.

    Returns:
        The line, without a newline.
    """
    values = [c.field.value(record, now) for c in columns]
    if layout.parsable:
        return layout.join([v or "" for v in values])
    return "".join(
        fixed_cell(v, c.width, c.field.kind) for v, c in zip(values, columns, strict=True)
    )


def help_format(fields: Sequence[Field] = FIELDS) -> str:
    """What ``--helpformat`` prints: every field name, four to a line.

    Args:
        fields: the command's fields (sacct's by default).

    Returns:
        The text, ending in a newline.
    """
    out = []
    for i, field in enumerate(fields):
        if i & 3:
            out.append(" ")
        elif i:
            out.append("\n")
        out.append(f"{field.name:<19}")
    return "".join(out) + "\n"
