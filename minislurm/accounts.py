"""Accounts, users, associations and QOS: the records of the accounting tree.

A :class:`Book` holds the accounts, users and associations, and the QOS;
the tree always holds the account ``root`` and the user ``root`` in it, as a
fresh Slurm database does. The controller changes the book
(:mod:`ctld.accounting`) and its store keeps it; both speak these records.

Imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROOT = "root"
UNSET = -1  # a limit that is not set
NORMAL_QOS = "normal"
NO_ADMIN, OPERATOR, ADMINISTRATOR = ADMIN_LEVELS = ("None", "Operator", "Administrator")


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
