"""`bench db upgrade`: the store's schema created or migrated (Alembic)."""

import typer

from app.console import out
from app.options import DbOption

db_app = typer.Typer(no_args_is_help=True, help="Database maintenance.")


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Create or migrate the store's schema to the newest revision (Alembic)."""
    from bench.store import make_engine, mask_url, resolve_url, upgrade

    engine = make_engine(resolve_url(db))
    out.print(f"{mask_url(engine.url.render_as_string(hide_password=True))}: schema at {upgrade(engine)}",
              highlight=False, markup=False)
