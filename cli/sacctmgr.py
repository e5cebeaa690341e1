"""sacctmgr: view and change accounts, users and their associations.

The common forms of Slurm's sacctmgr::

    sacctmgr [-i] add|create account NAME[,NAME] [Parent=] [Fairshare=] [MaxJobs=] ...
    sacctmgr [-i] add user NAME Account=A [DefaultAccount=] [Fairshare=] [GrpTRES=] ...
    sacctmgr [-i] modify account|user [where] [Name=]X [Account=A] set K=V ...
    sacctmgr [-i] delete|remove account|user [where] [Name=]X [Account=A]
    sacctmgr [-i] add|modify|delete qos NAME [set] [Priority=] [MaxJobsPerUser=]
                                              [MaxSubmitJobsPerUser=]
    sacctmgr [-n] [-p|-P] show|list account|user|association|qos [NAME] [format=...] [tree]
                                                                [withassoc|-s]

Changes are committed at once (as with ``-i``; we never ask to confirm).
The controller validates and words the messages; this module parses the
command line and prints.

Imports cli.common and cli.sacctmgr_show.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

from cli import common, interactive
from cli.opts import Option
from cli.sacctmgr_show import (
    ACCOUNT_FIELDS,
    ASSOC_FIELDS,
    DEFAULT_ASSOC,
    QOS_FIELDS,
    USER_FIELDS,
    FormatError,
    pick,
    table,
    tree_fields,
    user_assoc_fields,
)
from minislurm.wire.h2grpc import RpcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.wire.protowire import Message

PROG = "sacctmgr"
OPTIONS = [
    Option("immediate", "i"),
    Option("noheader", "n"),
    Option("parsable", "p"),
    Option("parsable2", "P"),
    Option("associations", "s"),
    Option("quiet", "Q"),
    Option("readonly", "r"),
    Option("verbose", "v"),
    Option("help", "h"),
    Option("usage"),
    Option("version", "V"),
]
HELP = """sacctmgr [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -i or --immediate: commit changes immediately without asking
     -n or --noheader:  no header will be added to the beginning of output
     -p or --parsable:  output will be '|' delimited with a '|' at the end
     -P or --parsable2: output will be '|' delimited without a '|' at the end
     -s or --associations: show user associations with the user
    Valid <COMMAND> values are:
     add|create account|user|qos <NAME> [<SPECS>]
     modify|update account|user|qos [where] <SPECS> set <SPECS>
     delete|remove account|user|qos [where] <SPECS>
     list|show account|user|association|qos [<SPECS>] [format=] [tree] [withassoc]
"""
_VERBS = {
    "add": "add", "create": "add", "modify": "modify", "update": "modify",
    "delete": "delete", "remove": "delete", "show": "show", "list": "show",
}  # fmt: skip
_ENTITIES = {
    "account": "account", "accounts": "account", "user": "user", "users": "user",
    "association": "association", "associations": "association", "assoc": "association",
    "qos": "qos",
}  # fmt: skip
_ENTITIES_OF = {
    "show": (
        '"Account", "Association", "Cluster", "Configuration",\n'
        '"Event", "Federation", "Problem", "QOS", "Resource", "Reservation",\n'
        '"RunAwayJobs", "Stats", "Transaction", "TRES", "User", or "WCKey"'
    ),
    "add": '"Account", "Cluster", "Coordinator", "Federation", "QOS", "Resource", or "User"',
    "modify": '"Account", "Cluster", "Federation", "Job", "QOS", "Resource" or "User"',
}
_ENTITIES_OF["delete"] = _ENTITIES_OF["add"]


def bad_entity(verb: str) -> str:
    """Slurm's message for a command without an entity it knows.

    Args:
        verb: add, modify, delete or show.

    Returns:
        The message (two or four lines).
    """
    name = "list" if verb == "show" else verb
    return f"No valid entity in {name} command\nInput line must include {_ENTITIES_OF[verb]}"


def _split(tokens: list[str]) -> tuple[list[str], dict[str, str]]:
    """Bare words and Key=Value pairs (keys as given)."""
    words: list[str] = []
    pairs: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if sep:
            pairs[key] = value
        elif token.lower() != "where":
            words.append(token)
    return words, pairs


def _change(verb: str, entity: str, rest: list[str]) -> int:
    if entity == "association":
        sys.stderr.write(bad_entity(verb) + "\n")
        return 1
    lowered = [t.lower() for t in rest]
    if verb == "modify" and "set" in lowered:
        cut = lowered.index("set")
        cond_words, where = _split(rest[:cut])
        _, settings = _split(rest[cut + 1 :])
    elif verb == "add":
        cond_words, settings = _split(rest)
        where = {}
    else:
        cond_words, where = _split(rest)
        settings = {}
    if verb == "modify" and not settings:
        sys.stderr.write(" You didn't give me anything to set\n")
        return 1
    names = list(cond_words)
    for key in list(where) + list(settings):
        if key.lower() in ("name", "names", "user", "users") and verb == "add":
            names += settings.pop(key).split(",")
    where = {k: v for k, v in where.items()}
    if names and verb != "add":
        where["Name"] = ",".join(names)
    for key in list(where):
        if key.lower() in ("names", "user", "users") or (
            key.lower() == "account" and entity == "account"
        ):
            where["Name"] = where.pop(key)
    if not names and not where:
        sys.stderr.write(f" Need name of {entity} to {verb}.\n")
        return 1
    request = {
        "verb": verb,
        "entity": entity,
        "names": [n for name in names for n in name.split(",") if n],
        "where": {k.lower(): v for k, v in where.items()},
        "settings": settings,
        "requester_uid": os.getuid(),
    }
    try:
        reply = common.call("ManageAssoc", **request)
    except RpcError as err:
        message = common.rpc_message(err)
        # Slurm prints "Nothing ..." on stdout, its other refusals on stderr.
        out = sys.stdout if message.startswith(" Nothing") else sys.stderr
        out.write(message + "\n")
        return 1
    sys.stdout.write("".join(line + "\n" for line in reply.lines))
    return 0


def _show(entity: str, rest: list[str], values: dict[str, object]) -> int:
    words, pairs = _split(rest)
    lowered = {k.lower(): v for k, v in pairs.items()}
    flags = {w.lower() for w in words}
    names = {n for w in words if w.lower() not in ("tree", "withassoc") for n in w.split(",")}
    for key in ("name", "names", "user", "users", "account", "accounts"):
        if key in lowered and not (key.startswith("account") and entity == "user"):
            names |= set(lowered[key].split(","))
    style = "P" if values.get("parsable2") else "p" if values.get("parsable") else ""
    reply = common.call("GetAssocs")
    header = not values.get("noheader")
    try:
        lines = _listing(entity, reply, names, flags, lowered, values, style, header)
    except FormatError as err:
        sys.stderr.write(f"{err}\n")  # without the command's name, as Slurm's
        return 1
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def _listing(
    entity: str,
    reply: Message,
    names: set[str],
    flags: set[str],
    lowered: dict[str, str],
    values: dict[str, object],
    style: str,
    header: bool,
) -> list[str]:
    cluster = reply.cluster
    spec = lowered.get("format", "")
    if entity == "qos":
        rows = [q for q in reply.qos if not names or q.name in names]
        default = [f for k, f in QOS_FIELDS.items() if k != "description"]
        return table(pick(spec, QOS_FIELDS) if spec else default, rows, cluster, style, header)
    if entity == "account":
        rows = [a for a in reply.accounts if not names or a.name in names]
        fields = pick(spec, ACCOUNT_FIELDS) if spec else list(ACCOUNT_FIELDS.values())
        return table(fields, rows, cluster, style, header)
    if entity == "user" and not (values.get("associations") or "withassoc" in flags):
        rows = [u for u in reply.users if not names or u.name in names]
        fields = pick(spec, USER_FIELDS) if spec else list(USER_FIELDS.values())
        return table(fields, rows, cluster, style, header)
    if entity == "user":
        users = {u.name: u for u in reply.users}
        rows = [
            _user_row(a, users[a.user])
            for a in sorted(reply.assocs, key=lambda a: a.user)
            if a.user and a.user in users and (not names or a.user in names)
        ]
        return table(user_assoc_fields(), rows, cluster, style, header)
    wanted_accounts = set(lowered.get("account", lowered.get("accounts", "")).split(",")) - {""}
    wanted_users = set(lowered.get("user", lowered.get("users", "")).split(",")) - {""}
    rows = [
        a
        for a in reply.assocs
        if (not wanted_accounts or a.account in wanted_accounts)
        and (not wanted_users or a.user in wanted_users)
    ]
    fields = pick(spec, ASSOC_FIELDS) if spec else [ASSOC_FIELDS[n] for n in DEFAULT_ASSOC]
    if "tree" in flags:
        fields = tree_fields(fields)
    return table(fields, rows, cluster, style, header)


def _user_row(assoc: Message, user: Message) -> SimpleNamespace:
    """A user's association with the user's own fields, for ``show user -s``."""
    names = ("account", "user", "parent", "shares", "max_jobs", "max_submit", "grp_tres", "depth")
    row = SimpleNamespace(**{n: getattr(assoc, n) for n in names})
    row.name = user.name
    row.default_account = user.default_account
    row.admin = user.admin
    return row


def _sacctmgr(argv: list[str]) -> int:
    values, rest = common.parse_or_exit(PROG, OPTIONS, argv, help_text=HELP)
    if not rest:
        return interactive.run_lines(PROG, lambda words: _command(words, values))
    return _command(rest, values)


def _command(rest: list[str], values: dict[str, object]) -> int:
    verb = _VERBS.get(rest[0].lower())
    if verb is None:
        sys.stderr.write(f"invalid keyword: {rest[0]}\n")
        return 1
    entity = _ENTITIES.get(rest[1].lower()) if len(rest) > 1 else None
    if entity is None:
        sys.stderr.write(bad_entity(verb) + "\n")
        return 1
    if verb == "show":
        return _show(entity, rest[2:], values)
    return _change(verb, entity, rest[2:])


def main(argv: list[str] | None = None) -> int:
    """Run sacctmgr.

    Args:
        argv: the arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    return common.run(PROG, _sacctmgr, argv)
