"""Queries on the accounting tables: accounts, users, associations and their usage.

Like ``repo.py``, every function takes a Session whose transaction the
caller owns, and speaks in :mod:`minislurm.accounts` dataclasses.

Imports ctld.store.models and minislurm.accounts.
"""

from __future__ import annotations

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ctld.store.models import AccountRow, AcctUserRow, AssocRow, QosRow
from minislurm.accounts import Account, Assoc, Book, Qos, User, initial_qos

Usage = dict[tuple[str, str], float]


def load_book(s: Session) -> tuple[Book, Usage, float] | None:
    """The stored accounts, users, associations and QOS, with usage and its time.

    Args:
        s: the session.

    Returns:
        ``(book, usage, usage_time)``, or None when nothing was ever stored.
    """
    rows = s.scalars(select(AssocRow)).all()
    if not rows:
        return None
    accounts = {
        r.name: Account(r.name, r.description, r.organization)
        for r in s.scalars(select(AccountRow))
    }
    users = {
        r.name: User(r.name, r.default_account, r.admin) for r in s.scalars(select(AcctUserRow))
    }
    assocs = {
        (r.account, r.user): Assoc(
            r.account, r.user, r.parent, r.shares, r.max_jobs, r.max_submit, r.grp_tres
        )
        for r in rows
    }
    usage = {(r.account, r.user): r.raw_usage for r in rows if r.raw_usage}
    qos = {
        r.name: Qos(
            r.name,
            r.description,
            r.priority,
            r.max_jobs_pu,
            r.max_submit_pu,
            tuple(n for n in r.preempt.split(",") if n),
            r.preempt_mode,
        )
        for r in s.scalars(select(QosRow))
    }
    book = Book(accounts, users, assocs, qos or initial_qos())
    return book, usage, max(r.usage_time for r in rows)


def save_book(s: Session, book: Book, usage: Usage, usage_time: float) -> None:
    """Replace the stored accounts, users and associations with ``book``.

    Args:
        s: the session.
        book: what is now true.
        usage: raw usage by association.
        usage_time: when that usage was computed.
    """
    s.execute(delete(AssocRow))
    s.execute(delete(AcctUserRow))
    s.execute(delete(AccountRow))
    s.execute(delete(QosRow))
    s.add_all(
        QosRow(name=q.name, description=q.description, priority=q.priority,
               max_jobs_pu=q.max_jobs_pu, max_submit_pu=q.max_submit_pu,
               preempt=",".join(q.preempt), preempt_mode=q.preempt_mode)
        for q in book.qos.values()
    )  # fmt: skip
    s.add_all(
        AccountRow(name=a.name, description=a.description, organization=a.organization)
        for a in book.accounts.values()
    )
    s.add_all(
        AcctUserRow(name=u.name, default_account=u.default_account, admin=u.admin)
        for u in book.users.values()
    )
    s.add_all(
        AssocRow(
            account=a.account, user=a.user, parent=a.parent, shares=a.shares,
            max_jobs=a.max_jobs, max_submit=a.max_submit, grp_tres=a.grp_tres,
            raw_usage=usage.get(a.key, 0.0), usage_time=usage_time,
        )
        for a in book.assocs.values()
    )  # fmt: skip


def save_usage(s: Session, usage: Usage, usage_time: float) -> None:
    """Store charged and decayed usage.

    Args:
        s: the session.
        usage: raw usage by association (others are 0).
        usage_time: when it was computed.
    """
    s.execute(update(AssocRow).values(raw_usage=0.0, usage_time=usage_time))
    for (account, user), amount in usage.items():
        s.execute(
            update(AssocRow)
            .where(AssocRow.account == account, AssocRow.user == user)
            .values(raw_usage=amount)
        )
