"""Accounts, users and their associations: the tree that fair share and limits read.

A :class:`Book` holds the accounts, users and associations; the settings
sacctmgr takes (Fairshare=, MaxJobs=, MaxSubmitJobs=, GrpTRES=) are parsed
here, and :mod:`ctld.accounting.assocedit` changes the book. The tree always holds the
account ``root`` and the user ``root`` in it, as a fresh Slurm database does.

Imports only minislurm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minislurm.errors import InvalidRequest

ROOT = "root"
UNSET = -1  # a limit that is not set
NORMAL_QOS = "normal"
NO_ADMIN, OPERATOR, ADMINISTRATOR = ADMIN_LEVELS = ("None", "Operator", "Administrator")
# sacctmgr keys (lower case) -> Assoc field, for the settings we keep.
_ASSOC_KEYS = {
    "fairshare": "shares",
    "share": "shares",
    "shares": "shares",
    "maxjobs": "max_jobs",
    "maxsubmitjobs": "max_submit",
    "maxsubmit": "max_submit",
    "grptres": "grp_tres",
}


class AcctError(InvalidRequest):
    """A rejected sacctmgr request: the message is what sacctmgr prints."""


@dataclass(frozen=True)
class Account:
    """One account: its name and descriptive text."""

    name: str
    description: str
    organization: str


@dataclass(frozen=True)
class User:
    """One user: the account used when a job names none."""

    name: str
    default_account: str
    admin: str = NO_ADMIN  # AdminLevel: one of ADMIN_LEVELS


@dataclass(frozen=True)
class Assoc:
    """One association: an account (``user`` empty) or a user in an account.

    ``parent`` is the parent account of an account association (empty for
    root); a user association's parent is its account.
    """

    account: str
    user: str = ""
    parent: str = ""
    shares: int = 1
    max_jobs: int = UNSET
    max_submit: int = UNSET
    grp_tres: str = ""  # "gres/gpu=4"

    @property
    def key(self) -> tuple[str, str]:
        """What identifies it: (account, user)."""
        return (self.account, self.user)

    @property
    def parent_key(self) -> tuple[str, str] | None:
        """The key of the account association above it (None for root)."""
        if self.user:
            return (self.account, "")
        return (self.parent, "") if self.parent else None

    @property
    def grp_gpus(self) -> int:
        """The GrpTRES limit on GPUs (``gres/gpu=N``), or UNSET."""
        for item in self.grp_tres.split(","):
            name, _, value = item.partition("=")
            if name.lower() == "gres/gpu" and value.isdigit():
                return int(value)
        return UNSET


@dataclass(frozen=True)
class Qos:
    """One QOS."""

    name: str
    description: str = ""
    priority: int = 0
    max_jobs_pu: int = UNSET
    max_submit_pu: int = UNSET
    preempt: tuple[str, ...] = ()  # the QOS whose jobs its jobs may preempt (preempt/qos)
    preempt_mode: str = ""  # OFF, CANCEL, REQUEUE; "": the partition's or the global one


def initial_qos() -> dict[str, Qos]:
    """A fresh database's QOS table: ``normal``."""
    return {NORMAL_QOS: Qos(NORMAL_QOS, "Normal QOS default")}


@dataclass(frozen=True)
class Book:
    """Every account, user and association."""

    accounts: dict[str, Account] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    assocs: dict[tuple[str, str], Assoc] = field(default_factory=dict)
    qos: dict[str, Qos] = field(default_factory=initial_qos)

    def children(self, account: str) -> list[Assoc]:
        """The associations directly under an account: its users, then sub-accounts.

        Args:
            account: the account.

        Returns:
            Users first (by name), then accounts (by name), as sshare lists them.
        """
        users = sorted(
            (a for a in self.assocs.values() if a.user and a.account == account),
            key=lambda a: a.user,
        )
        subs = sorted(
            (a for a in self.assocs.values() if not a.user and a.parent == account),
            key=lambda a: a.account,
        )
        return users + subs

    def user_assoc(self, user: str, account: str) -> Assoc | None:
        """The user's association in an account (the default account when ``account`` is "").

        Args:
            user: the user name.
            account: the account, or "".

        Returns:
            The association, or None.
        """
        if not account:
            known = self.users.get(user)
            if known is None:
                return None
            account = known.default_account
        return self.assocs.get((account, user))

    def ancestors(self, assoc: Assoc) -> list[Assoc]:
        """The account associations above ``assoc``, nearest first, root last."""
        chain: list[Assoc] = []
        key = assoc.parent_key
        while key is not None and key in self.assocs:
            above = self.assocs[key]
            chain.append(above)
            key = above.parent_key
        return chain


def initial_book() -> Book:
    """A fresh database: account root, user root in it."""
    return Book(
        {ROOT: Account(ROOT, "default root account", ROOT)},
        {ROOT: User(ROOT, ROOT, ADMINISTRATOR)},
        {(ROOT, ""): Assoc(ROOT), (ROOT, ROOT): Assoc(ROOT, ROOT)},
    )


def _int_value(name: str, value: str) -> int:
    text = value.strip()
    if text in ("-1", ""):
        return UNSET
    if not text.isascii() or not text.isdigit():
        label = "FairShare" if name == "shares" else LABELS[name]
        raise AcctError(f"sacctmgr: error: Invalid value for {label} ({value})")
    return int(text)


LABELS = {
    "shares": "Fairshare",
    "max_jobs": "MaxJobs",
    "max_submit": "MaxSubmitJobs",
    "grp_tres": "GrpTRES",
}


def _grp_tres(value: str) -> str:
    items = [i for i in value.split(",") if i]
    for item in items:
        name, sep, count = item.partition("=")
        if (
            not sep
            or name.lower() not in ("gres/gpu", "cpu", "mem", "node")
            or not (count.isdigit() or count == "-1")
        ):
            raise AcctError(f" Unknown option: GrpTRES={value}")
    return ",".join(i for i in items if not i.endswith("=-1"))


def assoc_settings(settings: dict[str, str]) -> dict[str, object]:
    """Parse the association settings of a request (Fairshare=, MaxJobs=, ...).

    Args:
        settings: keys as given (any case) to their values.

    Returns:
        Assoc field names to values.

    Raises:
        AcctError: a value is malformed.
    """
    out: dict[str, object] = {}
    for key, value in settings.items():
        name = _ASSOC_KEYS.get(key.lower())
        if name is None:
            continue
        out[name] = _grp_tres(value) if name == "grp_tres" else _int_value(name, value)
        if name == "shares" and out[name] == UNSET:
            out[name] = 1
    return out


def parse_admin_level(value: str) -> str:
    """An AdminLevel= value as Slurm reads it: by its first letter (N, O, A or S).

    Args:
        value: what was given.

    Returns:
        One of ADMIN_LEVELS, or "" when the value names none (Slurm then changes nothing).
    """
    first = value.strip()[:1].lower()
    return {"n": NO_ADMIN, "o": OPERATOR, "a": ADMINISTRATOR, "s": ADMINISTRATOR}.get(first, "")


def check_keys(settings: dict[str, str], extra: tuple[str, ...]) -> None:
    """Reject keys sacctmgr does not know for this entity.

    Args:
        settings: the request's settings.
        extra: other keys allowed besides the association's.

    Raises:
        AcctError: an unknown key.
    """
    for key, value in settings.items():
        if key.lower() not in _ASSOC_KEYS and key.lower() not in extra:
            raise AcctError(
                f" Unknown option: {key}={value}\n Use keyword 'where' to modify condition"
            )
