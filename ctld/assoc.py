"""Accounts, users and their associations: the tree that fair share and limits read.

What ``sacctmgr add|modify|delete account|user`` does, as pure functions of
a :class:`Book` (the accounts, users and associations) that return the new
book and the lines sacctmgr prints, or raise :class:`AcctError` with
Slurm's message. The tree always holds the account ``root`` and the user
``root`` in it, as a fresh Slurm database does.

Imports only minislurm.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from minislurm.errors import InvalidRequest

ROOT = "root"
UNSET = -1  # a limit that is not set
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
_ACCOUNT_KEYS = {"description": "description", "organization": "organization"}


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
    admin: str = "None"


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
class Book:
    """Every account, user and association."""

    accounts: dict[str, Account] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    assocs: dict[tuple[str, str], Assoc] = field(default_factory=dict)

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
        {ROOT: User(ROOT, ROOT, "Administrator")},
        {(ROOT, ""): Assoc(ROOT), (ROOT, ROOT): Assoc(ROOT, ROOT)},
    )


def _int_value(name: str, value: str) -> int:
    text = value.strip()
    if text in ("-1", ""):
        return UNSET
    if not text.isascii() or not text.isdigit():
        label = "FairShare" if name == "shares" else _LABELS[name]
        raise AcctError(f"sacctmgr: error: Invalid value for {label} ({value})")
    return int(text)


_LABELS = {
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


def _chain_line(book: Book, account: str) -> str:
    parent = book.assocs[(account, "")].parent
    return f"{account} of {parent}" if parent else account


def add_accounts(
    book: Book, names: list[str], settings: dict[str, str], cluster: str
) -> tuple[Book, list[str]]:
    """sacctmgr add account NAME... [Parent=] [Description=] [Organization=] [Fairshare=] ...

    Args:
        book: the current book.
        names: accounts to add.
        settings: the request's settings.
        cluster: the cluster name (for the message).

    Returns:
        The new book and what sacctmgr prints.

    Raises:
        AcctError: nothing was added (a name exists, the parent is unknown, a bad value).
    """
    check_keys(settings, ("parent", "description", "organization", "cluster"))
    values = assoc_settings(settings)
    lowered = {k.lower(): v for k, v in settings.items()}
    parent = lowered.get("parent", ROOT).lower()
    if parent not in book.accounts:
        raise AcctError(
            f" Parent account '{parent}' doesn't exist on cluster {cluster}\n"
            "        Contact your admin to add this account.\n No associations created."
        )
    new = [n.lower() for n in names if n.lower() not in book.accounts]
    if not new:
        raise AcctError(" Nothing new added.")
    accounts = dict(book.accounts)
    assocs = dict(book.assocs)
    for name in new:
        descr = lowered.get("description", name)
        org = lowered.get("organization", name if parent == ROOT else parent)
        accounts[name] = Account(name, descr, org)
        assocs[(name, "")] = Assoc(name, "", parent, **values)  # type: ignore[arg-type]
    lines = [" Adding Account(s)", *(f"  {n}" for n in new), " Settings"]
    descr = lowered.get("description", "Account Name")
    org = lowered.get("organization", "Parent/Account Name")
    lines += [f"  Description     = {descr}", f"  Organization    = {org}"]
    lines += [" Associations", *(f"  A = {n:<10} C = {cluster:<10}" for n in new), " Settings"]
    lines += [f"  {_LABELS[k]:<13} = {v}" for k, v in values.items() if k != "grp_tres" or v]
    lines.append(f"  {'Parent':<13} = {parent}")
    return replace(book, accounts=accounts, assocs=assocs), lines


def add_users(
    book: Book, names: list[str], settings: dict[str, str], cluster: str
) -> tuple[Book, list[str]]:
    """sacctmgr add user NAME... Account=A[,B] [DefaultAccount=] [Fairshare=] ...

    Args:
        book: the current book.
        names: users to add (or to add to more accounts).
        settings: the request's settings.
        cluster: the cluster name (for the message).

    Returns:
        The new book and what sacctmgr prints.

    Raises:
        AcctError: nothing was added.
    """
    check_keys(settings, ("account", "accounts", "defaultaccount", "cluster", "adminlevel"))
    values = assoc_settings(settings)
    lowered = {k.lower(): v for k, v in settings.items()}
    wanted = [
        a.lower() for a in (lowered.get("account") or lowered.get("accounts") or "").split(",") if a
    ]
    default = lowered.get("defaultaccount", "").lower()
    if not wanted and default:
        wanted = [default]
    if not wanted:
        raise AcctError(" Need name of account to add user to.")
    for account in [*wanted, *([default] if default else [])]:
        if account not in book.accounts:
            raise AcctError(
                f" This account '{account}' doesn't exist.\n"
                "        Contact your admin to add this account.\n"
                " No associations or wckeys created."
            )
    users = dict(book.users)
    assocs = dict(book.assocs)
    added: list[Assoc] = []
    new_users: list[str] = []
    for name in names:
        if name not in users:
            users[name] = User(name, default or wanted[0])
            new_users.append(name)
        for account in wanted:
            if (account, name) not in assocs:
                assoc = Assoc(account, name, account, **values)  # type: ignore[arg-type]
                assocs[assoc.key] = assoc
                added.append(assoc)
    if not added:
        raise AcctError(" Nothing new added.")
    lines = [" Adding User(s)", *(f"  {n}" for n in new_users)] if new_users else []
    lines += [" Associations ="]
    lines += [f"  U = {a.user:<9} A = {a.account:<10} C = {cluster:<10}" for a in added]
    lines += [" Non Default Settings"]
    lines += [f"  {_LABELS[k]:<13} = {v}" for k, v in sorted(values.items(), key=_label_order)]
    return replace(book, users=users, assocs=assocs), lines


def _label_order(item: tuple[str, object]) -> str:
    return _LABELS[item[0]]


def modify(
    book: Book, entity: str, where: dict[str, str], settings: dict[str, str], cluster: str
) -> tuple[Book, list[str]]:
    """sacctmgr modify account|user [where] Name=X [Account=A] set K=V...

    Args:
        book: the current book.
        entity: "account" or "user".
        where: the conditions (names, and a user's account).
        settings: what to set.
        cluster: the cluster name (for the message).

    Returns:
        The new book and what sacctmgr prints.

    Raises:
        AcctError: nothing matched, or a bad value.
    """
    check_keys(settings, ("description", "organization", "defaultaccount", "parent"))
    values = assoc_settings(settings)
    lowered = {k.lower(): v for k, v in settings.items()}
    names = _where_names(where)
    account_filter = {a.lower() for a in where.get("account", "").split(",") if a}
    if entity == "user":
        hits = [
            a
            for a in book.assocs.values()
            if a.user in names and (not account_filter or a.account in account_filter)
        ]
    else:
        hits = [a for a in book.assocs.values() if not a.user and a.account in names]
    if not hits:
        raise AcctError(" Nothing modified")
    assocs = dict(book.assocs)
    users = dict(book.users)
    accounts = dict(book.accounts)
    default = lowered.get("defaultaccount", "").lower()
    for assoc in hits:
        assocs[assoc.key] = replace(assoc, **values)  # type: ignore[arg-type]
        if entity == "user" and default:
            if (default, assoc.user) not in book.assocs:
                raise AcctError(
                    f" User {assoc.user} doesn't have an association with account {default}"
                )
            users[assoc.user] = replace(users[assoc.user], default_account=default)
        if entity == "account":
            accounts[assoc.account] = replace(
                accounts[assoc.account],
                description=lowered.get("description", accounts[assoc.account].description),
                organization=lowered.get("organization", accounts[assoc.account].organization),
            )
    new = replace(book, accounts=accounts, users=users, assocs=assocs)
    if entity == "user":
        lines = [" Modified user associations..."]
        lines += [f"  C = {cluster:<10} A = {a.account:<20} U = {a.user:<9}" for a in hits]
    else:
        lines = [" Modified account associations..."]
        lines += [f"  C = {cluster:<10} A = {_chain_line(book, a.account)}" for a in hits]
    return new, lines


def _where_names(where: dict[str, str]) -> set[str]:
    return {n for n in where.get("name", "").split(",") if n}


def delete(
    book: Book, entity: str, where: dict[str, str], busy: set[tuple[str, str]]
) -> tuple[Book, list[str]]:
    """sacctmgr delete account|user [where] Name=X [Account=A].

    Deleting an account deletes the accounts and users under it; a user
    whose last association goes is deleted too.

    Args:
        book: the current book.
        entity: "account" or "user".
        where: the conditions.
        busy: associations with jobs that are pending or running.

    Returns:
        The new book and what sacctmgr prints.

    Raises:
        AcctError: nothing matched, root was named, or jobs still use it.
    """
    names = _where_names(where)
    account_filter = {a.lower() for a in where.get("account", "").split(",") if a}
    if entity == "account":
        names = {n.lower() for n in names}
        if ROOT in names:
            raise AcctError(" You are not allowed to delete the root account")
        doomed = {a.key for a in book.assocs.values() if _under(book, a, names)}
    else:
        doomed = {
            a.key
            for a in book.assocs.values()
            if a.user in names and (not account_filter or a.account in account_filter)
        }
    if not doomed:
        raise AcctError(" Nothing deleted")
    if doomed & busy:
        raise AcctError(" Error with request: Job(s) active, cancel job(s) before remove")
    assocs = {k: a for k, a in book.assocs.items() if k not in doomed}
    accounts = {n: a for n, a in book.accounts.items() if (n, "") in assocs}
    left = {a.user for a in assocs.values() if a.user}
    users = {}
    for name, user in book.users.items():
        if name not in left:
            continue
        if (user.default_account, name) not in assocs:
            user = replace(
                user, default_account=min(a.account for a in assocs.values() if a.user == name)
            )
        users[name] = user
    gone = sorted(names) if entity == "account" else sorted({k[1] for k in doomed})
    title = " Deleting accounts..." if entity == "account" else " Deleting users..."
    if entity == "user" and account_filter:
        title = " Deleting user associations..."
    return Book(accounts, users, assocs), [title, *(f"  {n}" for n in gone)]


def _under(book: Book, assoc: Assoc, accounts: set[str]) -> bool:
    if assoc.account in accounts:
        return True
    return any(a.account in accounts for a in book.ancestors(assoc))
