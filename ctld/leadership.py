"""Which of several controllers serves: a lease in the shared PostgreSQL database.

Several ``SlurmctldHost`` lines name a primary controller and its backups,
all keeping the state in one PostgreSQL database. One row of the table
``controller_lease`` says who holds the controller's role: its SlurmctldHost
name, an epoch raised by every change of holder, and when the role lapses
unless renewed, by the database server's clock (the controllers' clocks
need not agree).

- The holder renews the role every SlurmctldTimeout/5 seconds, from a thread
  with a connection of its own, so that a busy event loop does not lose it.
- Another takes the role once it has lapsed, at once when asked
  (``scontrol takeover``), and a controller takes back at once the role
  that it held itself (its own restart).
- Fencing: each transaction of the holder first reads the row ``FOR SHARE``
  and checks the epoch. A taker's UPDATE waits for the holder's
  transactions in flight, so the new holder loads the state after the last
  of them; any later transaction of the old holder finds another epoch and
  fails (:class:`Deposed`) before it writes, and the old holder shuts down.
- A holder that could not renew for SlurmctldTimeout (cut off from the
  database) shuts down too: another may hold the role by then. One that
  stops cleanly lets the role lapse at once.

The table is not part of the versioned schema: standbys use it before the
holder upgrades the database, and each creates it when it is missing.

Imports SQLAlchemy and the standard library.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from contextlib import suppress
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError

log = logging.getLogger(__name__)

LEASE = Table(
    "controller_lease",
    MetaData(),
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("holder", String, nullable=False),  # SlurmctldHost name; "" before anyone held it
    Column("epoch", BigInteger, nullable=False),
    Column("expires", Float, nullable=False),  # epoch seconds, the database server's clock
)
_NOW: ColumnElement[float] = literal_column("extract(epoch from clock_timestamp())", Float)
_CREATE_LOCK = 0x6D696E69736C726D  # advisory lock key: one creator of the table at a time
RENEWALS_PER_TIMEOUT = 5
POLL_SECONDS = 0.5  # how often a standby looks whether the role has lapsed


def connect_args(timeout: float, options: str = "") -> dict[str, object]:
    """libpq's settings for a controller's connections to the state database.

    None waits longer than ``timeout`` on a network gone silent: to connect,
    for its data to be acknowledged (``tcp_user_timeout``), or, idle, for
    the server to show it is there (keepalives): a controller cut off learns
    it within SlurmctldTimeout, and stops, instead of hanging in a call.

    Args:
        timeout: seconds.
        options: the server settings of its sessions (``-c name=value``...).
    """
    seconds = max(1, int(timeout))
    return {
        "connect_timeout": max(2, seconds),
        "tcp_user_timeout": seconds * 1000,
        "keepalives": 1,
        "keepalives_idle": 1,
        "keepalives_interval": 1,
        "keepalives_count": seconds,
        "options": options,
    }


class Deposed(Exception):
    """Another controller holds the role now: this one must not write, and shuts down."""


@dataclass(frozen=True)
class Holder:
    """Who holds the role, as the row says."""

    name: str  # "" when nobody has held it yet
    epoch: int


class Lease:
    """The role's row, seen by one controller.

    Args:
        url: the state database's SQLAlchemy URL (PostgreSQL).
        name: this controller's SlurmctldHost name.
        timeout: SlurmctldTimeout, seconds.
    """

    def __init__(self, url: str, name: str, timeout: float) -> None:
        self.name = name
        self.timeout = timeout
        self.epoch = 0  # the epoch this controller holds the role in; 0: it does not
        waits = f"-c lock_timeout={int(timeout * 200)} -c statement_timeout={int(timeout * 400)}"
        # A pool of its own: renewals never wait behind the controller's transactions.
        self._engine = create_engine(
            url, pool_size=1, max_overflow=1, connect_args=connect_args(timeout / 2, waits)
        )

    def prepare(self) -> None:
        """Create the table and its row when they are missing.

        Raises:
            SQLAlchemyError: the database cannot be reached.
        """
        with self._engine.begin() as conn:
            conn.execute(select(func.pg_advisory_xact_lock(_CREATE_LOCK)))
            LEASE.create(conn, checkfirst=True)
            row = {"id": 1, "holder": "", "epoch": 0, "expires": 0.0}
            conn.execute(insert(LEASE).values(row).on_conflict_do_nothing())

    def take(self, force: bool = False) -> bool:
        """Take the role if it has lapsed, was this controller's own, or ``force``.

        Args:
            force: take it from a holder that still holds it (a takeover).

        Returns:
            Whether this controller holds it now (``epoch`` is then its epoch).

        Raises:
            SQLAlchemyError: the database cannot be reached, or the holder's
                transactions kept the row locked past the lock timeout.
        """
        free = true() if force else or_(LEASE.c.expires < _NOW, LEASE.c.holder == self.name)
        taking = (
            update(LEASE)
            .where(LEASE.c.id == 1, free)
            .values(holder=self.name, epoch=LEASE.c.epoch + 1, expires=_NOW + self.timeout)
            .returning(LEASE.c.epoch)
        )
        with self._engine.begin() as conn:
            epoch = conn.execute(taking).scalar()
        if epoch is None:
            return False
        self.epoch = int(epoch)
        return True

    def renew(self) -> bool:
        """Push the role's lapse SlurmctldTimeout further.

        Returns:
            False when another controller holds the role now.

        Raises:
            SQLAlchemyError: the database cannot be reached.
        """
        return self._lapse_at(_NOW + self.timeout)

    def release(self) -> None:
        """Let the role lapse now, if this controller holds it (a clean stop): a backup
        takes it at once instead of after SlurmctldTimeout.

        Raises:
            SQLAlchemyError: the database cannot be reached.
        """
        self._lapse_at(literal(0.0, Float))

    def _lapse_at(self, expires: ColumnElement[float]) -> bool:
        """Set when the role lapses, if this controller holds it; return whether it does."""
        setting = (
            update(LEASE)
            .where(LEASE.c.id == 1, LEASE.c.holder == self.name, LEASE.c.epoch == self.epoch)
            .values(expires=expires)
        )
        with self._engine.begin() as conn:
            return conn.execute(setting).rowcount == 1

    def holder(self) -> Holder:
        """Who holds the role now.

        Raises:
            SQLAlchemyError: the database cannot be reached.
        """
        query = select(LEASE.c.holder, LEASE.c.epoch).where(LEASE.c.id == 1)
        with self._engine.connect() as conn:
            row = conn.execute(query).one()
        return Holder(row[0], int(row[1]))

    def fence(self, conn: Connection) -> None:
        """Check, at the start of one of the holder's transactions, that it still holds the role.

        The row stays share-locked until the transaction ends: a taker waits for it.

        Args:
            conn: the transaction's connection.

        Raises:
            Deposed: another controller has taken the role.
        """
        query = select(LEASE.c.epoch).where(LEASE.c.id == 1).with_for_update(read=True)
        epoch = conn.execute(query).scalar()
        if epoch != self.epoch:
            raise Deposed(
                f"another controller holds the role now (epoch {epoch}, ours {self.epoch})"
            )

    def close(self) -> None:
        """Close the lease's connections."""
        self._engine.dispose()


class Role:
    """A controller's part: standby until it takes the role, then primary until it loses it.

    Args:
        lease: the role's row.
    """

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.primary = False
        self.lost = asyncio.Event()  # set when the role is lost: the controller shuts down
        self.why = ""
        self._forced = False  # scontrol takeover: take it from its holder
        self._wake = asyncio.Event()  # look again now, not after POLL_SECONDS
        self._taken = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: threading.Thread | None = None
        self._stop = threading.Event()

    async def acquire(self) -> None:
        """Wait as a standby until this controller holds the role; then keep it."""
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self._prepare)
        while True:
            self._wake.clear()
            try:
                took = await asyncio.to_thread(self.lease.take, self._forced)
            except SQLAlchemyError as err:
                log.warning("cannot take the controller's role yet: %s", _short(err))
                took = False
            if took:
                break
            with suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
        self.primary = True
        self._taken.set()
        self._keeper = threading.Thread(target=self._keep, name="role keeper", daemon=True)
        self._keeper.start()

    async def take_over(self, timeout: float) -> bool:
        """Take the role now, from whoever holds it (scontrol takeover).

        Args:
            timeout: seconds to wait for it.

        Returns:
            Whether this controller holds it.
        """
        if not self.primary:
            self._forced = True
            self._wake.set()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._taken.wait(), timeout)
        return self.primary

    def fence(self, conn: Connection) -> None:
        """:meth:`Lease.fence`, and the shutdown when it fails.

        Raises:
            Deposed: another controller has taken the role.
        """
        try:
            self.lease.fence(conn)
        except Deposed as err:
            self._lose(str(err))
            raise

    def close(self) -> None:
        """Stop renewing, hand the role over if this controller still holds it, and close
        the lease's connections (after the controller's last transaction)."""
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(timeout=self.lease.timeout)
        if self.primary and not self.lost.is_set():
            try:
                self.lease.release()
            except SQLAlchemyError as err:
                log.warning("cannot hand the controller's role over: %s", _short(err))
        self.lease.close()

    def _prepare(self) -> None:
        while True:
            try:
                self.lease.prepare()
                return
            except SQLAlchemyError as err:
                log.warning("cannot reach the state database yet: %s", _short(err))
                time.sleep(POLL_SECONDS)

    def _keep(self) -> None:
        """Renew the role until it is lost or the controller stops (the keeper thread)."""
        renewed = time.monotonic()  # when the last renewal that held was sent
        while not self._stop.wait(self.lease.timeout / RENEWALS_PER_TIMEOUT):
            sent = time.monotonic()
            try:
                held = self.lease.renew()
            except SQLAlchemyError as err:
                log.warning("cannot renew the controller's role: %s", _short(err))
                if time.monotonic() - renewed >= self.lease.timeout:
                    self._lose(f"not renewed for {self.lease.timeout:g} s (SlurmctldTimeout)")
                    return
                continue
            if not held:
                self._lose("another controller took over")
                return
            renewed = sent

    def _lose(self, why: str) -> None:
        if self._loop is None or self.lost.is_set():
            return
        self.why = why
        self._loop.call_soon_threadsafe(self.lost.set)


def _short(err: Exception) -> str:
    return str(err).splitlines()[0] if str(err) else type(err).__name__
