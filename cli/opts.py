"""Command-line options the way Slurm's commands read them (getopt_long).

Long options may be abbreviated to any unambiguous prefix (``--part=gpu``),
take their argument as ``--opt=value`` or ``--opt value``; short options
may be clustered (``-vh``) and take their argument attached (``-N2``) or
separate (``-N 2``); ``--`` ends the options. With ``stop_at_positional``
(sbatch, srun) the first non-option argument ends the options, so
everything after a script name belongs to the script.

Kept free of argparse and click: a command must start in a few
milliseconds, and Slurm's own parsing rules are what users type against.

Imports nothing.
"""

from __future__ import annotations

NO_ARG = 0
REQUIRED = 1
OPTIONAL = 2


class UsageError(Exception):
    """A command line that does not parse; the message is getopt's wording."""


class Option:
    """One option: its long name, short letter, argument kind and destination.

    A flag (``NO_ARG``) stores ``const`` (True unless told): two flags that
    undo each other (``--requeue``/``--no-requeue``) share a destination, so
    the last one given wins.
    """

    __slots__ = ("arg", "const", "dest", "long", "many", "short")

    def __init__(
        self,
        long: str,
        short: str = "",
        arg: int = NO_ARG,
        dest: str = "",
        many: bool = False,
        const: object = True,
    ) -> None:
        self.long = long
        self.short = short
        self.arg = arg
        self.dest = dest or long.replace("-", "_")
        self.many = many  # repeated uses accumulate in a list
        self.const = const

    def store(self, values: dict[str, object], value: object) -> None:
        """Record one use of the option."""
        if self.many:
            existing = values.setdefault(self.dest, [])
            assert isinstance(existing, list)
            existing.append(value)
        else:
            values[self.dest] = value


def _find_long(options: list[Option], name: str) -> Option:
    exact = [o for o in options if o.long == name]
    if exact:
        return exact[0]
    matches = [o for o in options if o.long.startswith(name)]
    if len({id(o) for o in matches}) == 1:
        return matches[0]
    if matches:
        choices = " ".join(f"'--{o.long}'" for o in sorted(matches, key=lambda o: o.long))
        raise UsageError(f"option '--{name}' is ambiguous; possibilities: {choices}")
    raise UsageError(f"unrecognized option '--{name}'")


def _parse_long(options: list[Option], argv: list[str], i: int, values: dict[str, object]) -> int:
    name, eq, value = argv[i][2:].partition("=")
    opt = _find_long(options, name)
    if opt.arg == NO_ARG:
        if eq:
            raise UsageError(f"option '--{opt.long}' doesn't allow an argument")
        opt.store(values, opt.const)
        return i + 1
    if eq or opt.arg == OPTIONAL:
        opt.store(values, value if eq else "")
        return i + 1
    if i + 1 >= len(argv):
        raise UsageError(f"option '--{opt.long}' requires an argument")
    opt.store(values, argv[i + 1])
    return i + 2


def _parse_short(options: list[Option], argv: list[str], i: int, values: dict[str, object]) -> int:
    word = argv[i]
    j = 1
    while j < len(word):
        letter = word[j]
        opt = next((o for o in options if o.short == letter), None)
        if opt is None:
            raise UsageError(f"invalid option -- '{letter}'")
        if opt.arg == NO_ARG:
            opt.store(values, opt.const)
            j += 1
            continue
        rest = word[j + 1 :]
        if rest or opt.arg == OPTIONAL:
            opt.store(values, rest)
            return i + 1
        if i + 1 >= len(argv):
            raise UsageError(f"option requires an argument -- '{letter}'")
        opt.store(values, argv[i + 1])
        return i + 2
    return i + 1


def parse(
    options: list[Option], argv: list[str], stop_at_positional: bool = False
) -> tuple[dict[str, object], list[str]]:
    """Parse a command line.

    Args:
        options: the command's options.
        argv: the arguments after the program name.
        stop_at_positional: the first non-option argument ends option parsing.

    Returns:
        ``(values, positionals)``: values by destination name (flags are True,
        repeated options are lists), and the other arguments in order.

    Raises:
        UsageError: an unknown, ambiguous or incomplete option.
    """
    values: dict[str, object] = {}
    positionals: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            positionals.extend(argv[i + 1 :])
            break
        if word.startswith("--"):
            i = _parse_long(options, argv, i, values)
        elif word.startswith("-") and word != "-":
            i = _parse_short(options, argv, i, values)
        elif stop_at_positional:
            positionals.extend(argv[i:])
            break
        else:
            positionals.append(word)
            i += 1
    return values, positionals
