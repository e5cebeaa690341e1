"""Queries on the reservations table.

Like ``repo.py``, every function takes a Session whose transaction the
caller owns, and speaks in :class:`minislurm.model.Resv`.

Imports ctld.store.models and minislurm.model.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ctld.store.models import ReservationRow
from minislurm.model import Resv


def load_reservations(s: Session) -> list[Resv]:
    """Every stored reservation.

    Args:
        s: the session.

    Returns:
        The reservations.
    """
    return [
        Resv(
            r.name, r.start, r.end, tuple(r.nodes), tuple(r.users), tuple(r.accounts),
            tuple(r.flags), r.partition,
        )
        for r in s.scalars(select(ReservationRow))
    ]  # fmt: skip


def save_reservation(s: Session, resv: Resv) -> None:
    """Insert or replace a reservation.

    Args:
        s: the session.
        resv: the reservation.
    """
    s.merge(
        ReservationRow(
            name=resv.name, start=resv.start, end=resv.end, nodes=list(resv.nodes),
            users=list(resv.users), accounts=list(resv.accounts), flags=list(resv.flags),
            partition=resv.partition,
        )
    )  # fmt: skip


def delete_reservations(s: Session, names: list[str]) -> None:
    """Remove reservations.

    Args:
        s: the session.
        names: their names.
    """
    s.execute(delete(ReservationRow).where(ReservationRow.name.in_(names)))
