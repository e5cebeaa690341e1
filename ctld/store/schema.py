"""The state database's schema version, and its upgrade by Alembic migrations.

The migrations live in ``ctld/store/migrations/versions/``, one file per
change of the models, and the version a database is at is kept in it
(Alembic's ``alembic_version`` table). On start the controller upgrades its
database to the newest version it knows, in place, and refuses one that a
newer release has upgraded beyond that.

Alembic is imported only when a database is not at :data:`HEAD`: it costs
a controller's start 130-180 ms, and an up-to-date database needs none of it.

Imports SQLAlchemy, and alembic and ctld.store.models (through the migrations) on upgrade.
"""

from __future__ import annotations

import os

from sqlalchemy import Engine, inspect, text

MIGRATIONS = os.path.join(os.path.dirname(__file__), "migrations")
HEAD = "0001"  # the newest migration's revision (tests/unit/test_schema_upgrade.py checks it)
VERSION_TABLE = "alembic_version"  # where Alembic records a database's version


class SchemaTooNew(Exception):
    """The database was upgraded by a newer release than this one."""


def version(engine: Engine) -> str | None:
    """The schema version ``engine``'s database is at (None: none recorded).

    Args:
        engine: the database.
    """
    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        found = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
        return None if found is None else str(found)


def upgrade(engine: Engine) -> None:
    """Bring the database to :data:`HEAD`, in one transaction where the engine allows.

    A database of a release before versioned migrations has tables and no
    version: the first migration completes its tables and records it.

    Args:
        engine: the database.

    Raises:
        SchemaTooNew: the database is at a version this release does not know.
    """
    current = version(engine)
    if current == HEAD:
        return
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    if current is not None:
        try:
            ScriptDirectory.from_config(config).get_revision(current)
        except CommandError:
            raise SchemaTooNew(
                f"the state database is at schema version {current}, which this slurmctld"
                f" does not know (its newest is {HEAD}): it was upgraded by a newer release;"
                " run that release's slurmctld"
            ) from None
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
