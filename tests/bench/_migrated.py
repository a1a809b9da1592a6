"""What the re-keying migrations' tests read back from a store: its runs by id, and the metrics, curve points and
leases per run key (tests/bench/test_migration_0006.py, test_migration_0007.py)."""

from sqlalchemy import select, text

from bench.models import Lease, Run


def by_id(engine):
    """(runs by id, metric count per run_key, curve-point count per run_key, leased run_keys)."""
    with engine.connect() as connection:
        runs = {r.id: r for r in connection.execute(select(Run))}
        metrics = {k: n for k, n in connection.execute(text(
            "SELECT run_key, COUNT(*) FROM metrics GROUP BY run_key"))}
        curves = {k: n for k, n in connection.execute(text("SELECT run_key, COUNT(*) FROM curves GROUP BY run_key"))}
        leases = set(connection.execute(select(Lease.run_key)).scalars())
    return runs, metrics, curves, leases
