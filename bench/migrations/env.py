"""Alembic environment: the connection comes from bench.store (config.attributes["connection"])."""

from alembic import context

from bench.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
