"""Alembic's environment: runs the migrations on the connection the controller hands it.

``ctld.store.schema.upgrade`` is the only caller; it puts the connection in
``config.attributes["connection"]``.
"""

from __future__ import annotations

from alembic import context

from ctld.store.models import Base

context.configure(connection=context.config.attributes["connection"], target_metadata=Base.metadata)
with context.begin_transaction():
    context.run_migrations()
