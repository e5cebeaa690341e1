"""The controller's role as a lease in PostgreSQL (ctld.leadership), on a real server."""

from __future__ import annotations

import threading

import pytest
from helpers import wait_until
from sqlalchemy import Engine, create_engine, text

from ctld.leadership import Deposed, Lease

pytestmark = pytest.mark.timeout(60)


def lease(url: str, name: str, timeout: float = 5.0) -> Lease:
    made = Lease(url, name, timeout)
    made.prepare()
    return made


def waiting_for_a_lock(engine: Engine) -> bool:
    """Whether some session of the database waits for a row lock."""
    with engine.connect() as conn:
        found = conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        ).scalar()
    return bool(found)


def test_one_holds_the_role_until_another_takes_it_over(pg_url: str) -> None:
    first, second = lease(pg_url, "ctl1"), lease(pg_url, "ctl2")
    assert first.take()
    assert not second.take()  # held, and not lapsed
    assert (second.holder().name, second.holder().epoch) == ("ctl1", first.epoch)
    assert first.renew()

    assert second.take(force=True)  # scontrol takeover
    assert second.epoch == first.epoch + 1
    assert not first.renew()
    engine = create_engine(pg_url)
    with engine.begin() as conn, pytest.raises(Deposed):
        first.fence(conn)
    with engine.begin() as conn:
        second.fence(conn)
    engine.dispose()


def test_a_role_not_renewed_lapses_and_another_takes_it(pg_url: str) -> None:
    first, second = lease(pg_url, "ctl1", timeout=1.0), lease(pg_url, "ctl2", timeout=1.0)
    assert first.take()
    wait_until(second.take, 10, "the role to lapse")
    assert second.holder().name == "ctl2"


def test_a_restarted_controller_takes_its_own_role_back_at_once(pg_url: str) -> None:
    before = lease(pg_url, "ctl1")
    assert before.take()
    after = lease(pg_url, "ctl1")  # the same controller, started again
    assert after.take()
    assert after.epoch == before.epoch + 1
    assert not before.renew()  # whatever of the old process lingers is fenced


def test_a_takeover_waits_for_the_holder_s_transaction_in_flight(pg_url: str) -> None:
    """The new holder loads what the old one committed last; the old one writes no more."""
    engine = create_engine(pg_url)
    # A long SlurmctldTimeout: the taker's lock timeout (a fifth of it) outlasts the test.
    first, second = lease(pg_url, "ctl1", timeout=60.0), lease(pg_url, "ctl2", timeout=60.0)
    assert first.take()
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x int)"))
    taken: list[bool] = []
    conn = engine.connect()
    transaction = conn.begin()
    first.fence(conn)
    conn.execute(text("INSERT INTO t VALUES (1)"))
    taker = threading.Thread(target=lambda: taken.append(second.take(force=True)))
    taker.start()
    wait_until(lambda: waiting_for_a_lock(engine), 10, "the takeover to wait")
    assert taken == []
    transaction.commit()
    taker.join(timeout=10)
    assert taken == [True]
    with pytest.raises(Deposed):
        with conn.begin():
            first.fence(conn)
            conn.execute(text("INSERT INTO t VALUES (2)"))
    conn.close()
    with engine.connect() as check:
        assert check.execute(text("SELECT x FROM t")).scalars().all() == [1]
    engine.dispose()
