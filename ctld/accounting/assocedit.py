"""What ``sacctmgr add|modify|delete account|user`` does to the association tree.

Pure functions of a :class:`~minislurm.accounts.Book` that return the new book and
the lines sacctmgr prints, or raise :class:`~ctld.accounting.assoc.AcctError` with
Slurm's message, changing nothing.

Imports ctld.accounting.assoc and minislurm.accounts only.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.accounting.assoc import LABELS, AcctError, assoc_settings, check_keys, parse_admin_level
from minislurm.accounts import (
    ADMIN_LEVELS,
    ADMINISTRATOR,
    NO_ADMIN,
    ROOT,
    Account,
    Assoc,
    Book,
    User,
)

NOT_SUPER = (
    "sacctmgr: error: You must be a super user to modify a users admin level\n"
    " Error with request: Access/permission denied"
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
    lines += [f"  {LABELS[k]:<13} = {v}" for k, v in values.items() if k != "grp_tres" or v]
    lines.append(f"  {'Parent':<13} = {parent}")
    return replace(book, accounts=accounts, assocs=assocs), lines


def add_users(
    book: Book,
    names: list[str],
    settings: dict[str, str],
    cluster: str,
    grantor: str = ADMINISTRATOR,
) -> tuple[Book, list[str]]:
    """sacctmgr add user NAME... Account=A[,B] [DefaultAccount=] [AdminLevel=] [Fairshare=] ...

    Args:
        book: the current book.
        names: users to add (or to add to more accounts).
        settings: the request's settings.
        cluster: the cluster name (for the message).
        grantor: the requester's AdminLevel; a new user's may not be higher.

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
    admin = parse_admin_level(lowered.get("adminlevel", ""))
    if admin and ADMIN_LEVELS.index(admin) > ADMIN_LEVELS.index(grantor):
        raise AcctError(NOT_SUPER)
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
            users[name] = User(name, default or wanted[0], admin or NO_ADMIN)
            new_users.append(name)
        for account in wanted:
            if (account, name) not in assocs:
                assoc = Assoc(account, name, account, **values)  # type: ignore[arg-type]
                assocs[assoc.key] = assoc
                added.append(assoc)
    if not added:
        raise AcctError(" Nothing new added.")
    lines = [" Adding User(s)", *(f"  {n}" for n in new_users)] if new_users else []
    if new_users and admin:
        lines += [" Settings =", f"  Admin Level     = {admin}"]
    lines += [" Associations ="]
    lines += [f"  U = {a.user:<9} A = {a.account:<10} C = {cluster:<10}" for a in added]
    lines += [" Non Default Settings"]
    lines += [f"  {LABELS[k]:<13} = {v}" for k, v in sorted(values.items(), key=_label_order)]
    return replace(book, users=users, assocs=assocs), lines


def _label_order(item: tuple[str, object]) -> str:
    return LABELS[item[0]]


def modify(
    book: Book,
    entity: str,
    where: dict[str, str],
    settings: dict[str, str],
    cluster: str,
    grantor: str = ADMINISTRATOR,
) -> tuple[Book, list[str]]:
    """sacctmgr modify account|user [where] Name=X [Account=A] set K=V...

    Args:
        book: the current book.
        entity: "account" or "user".
        where: the conditions (names, and a user's account).
        settings: what to set.
        cluster: the cluster name (for the message).
        grantor: the requester's AdminLevel (only an administrator sets AdminLevel=).

    Returns:
        The new book and what sacctmgr prints.

    Raises:
        AcctError: nothing matched, a bad value, or AdminLevel= from a non-administrator.
    """
    if entity == "user":
        check_keys(settings, ("defaultaccount", "adminlevel"))
        return _modify_users(book, where, settings, cluster, grantor)
    check_keys(settings, ("description", "organization", "parent"))
    values = assoc_settings(settings)
    lowered = {k.lower(): v for k, v in settings.items()}
    names = _where_names(where)
    hits = [a for a in book.assocs.values() if not a.user and a.account in names]
    if not hits:
        raise AcctError(" Nothing modified")
    assocs = dict(book.assocs)
    accounts = dict(book.accounts)
    for assoc in hits:
        assocs[assoc.key] = replace(assoc, **values)  # type: ignore[arg-type]
        accounts[assoc.account] = replace(
            accounts[assoc.account],
            description=lowered.get("description", accounts[assoc.account].description),
            organization=lowered.get("organization", accounts[assoc.account].organization),
        )
    lines = [" Modified account associations..."]
    lines += [f"  C = {cluster:<10} A = {_chain_line(book, a.account)}" for a in hits]
    return replace(book, accounts=accounts, assocs=assocs), lines


def _modify_users(
    book: Book, where: dict[str, str], settings: dict[str, str], cluster: str, grantor: str
) -> tuple[Book, list[str]]:
    """The user half of :func:`modify`: the users' own fields, then their associations."""
    values = assoc_settings(settings)
    lowered = {k.lower(): v for k, v in settings.items()}
    names = _where_names(where)
    account_filter = {a.lower() for a in where.get("account", "").split(",") if a}
    # An AdminLevel Slurm cannot read changes nothing, as in Slurm.
    admin = parse_admin_level(lowered["adminlevel"]) if "adminlevel" in lowered else ""
    if admin and grantor != ADMINISTRATOR:
        raise AcctError(NOT_SUPER)
    default = lowered.get("defaultaccount", "").lower()
    hits = [
        a
        for a in book.assocs.values()
        if values and a.user in names and (not account_filter or a.account in account_filter)
    ]
    named = sorted(n for n in names if n in book.users) if admin or default else []
    if not hits and not named:
        raise AcctError(" Nothing modified")
    users = dict(book.users)
    for name in named:
        if default and (default, name) not in book.assocs:
            raise AcctError(f" User {name} doesn't have an association with account {default}")
        users[name] = replace(
            users[name],
            default_account=default or users[name].default_account,
            admin=admin or users[name].admin,
        )
    assocs = dict(book.assocs)
    for assoc in hits:
        assocs[assoc.key] = replace(assoc, **values)  # type: ignore[arg-type]
    lines = [" Modified users...", *(f"  {n}" for n in named)] if named else []
    if hits:
        lines += [" Modified user associations..."]
        lines += [f"  C = {cluster:<10} A = {a.account:<20} U = {a.user:<9}" for a in hits]
    return replace(book, users=users, assocs=assocs), lines


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
    new = replace(book, accounts=accounts, users=users, assocs=assocs)
    return new, [title, *(f"  {n}" for n in gone)]


def _under(book: Book, assoc: Assoc, accounts: set[str]) -> bool:
    if assoc.account in accounts:
        return True
    return any(a.account in accounts for a in book.ancestors(assoc))
