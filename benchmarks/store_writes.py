"""Insert rate of finished runs: one transaction per run (the old path) against batches (prints).

    .venv/bin/python benchmarks/store_writes.py [--runs 10000] [--old-runs 1000] [--pg postgresql+psycopg://...]

Each run carries 5 metrics and a 10-point curve. The old path is the store's save as it was
before batching (an upsert, deletes and inserts in one transaction per run); the new one is
bench.writes.Writer as the runners use it (at most one commit per 0.5 s or per 200 runs; the metrics and curves
through the driver's own executemany, or COPY on PostgreSQL). The old path is timed on --old-runs runs (it is
slow) and its rate printed beside the batched one.
Targets (issue "Reliability"): 10,000 runs under 2 s on SQLite and under 5 s on PostgreSQL.
PostgreSQL: --pg URL, or the machine's cluster through tests/pg.py; skipped, saying why, if none.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import delete

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.models import CurvePoint, MetricValue, Run  # noqa: E402
from bench.spec import Cell, RunRecord  # noqa: E402
from bench.sql import dialect_insert, run_row  # noqa: E402
from bench.store import Store  # noqa: E402
from bench.writes import Writer  # noqa: E402

TARGETS = {"sqlite": 2.0, "postgresql": 5.0}


def records(n: int, tag: str) -> list[RunRecord]:
    out = []
    for seed in range(n):
        cell = Cell("bench_method", "bench_task", seed, {"c": 1.0, "tag": tag}, {"beta": 0.01})
        out.append(RunRecord(cell, "done", task_version=1, metrics={f"m{i}": seed + i / 10 for i in range(5)},
                             curves={"gap": [(step, 1.0 / (step + 1)) for step in range(10)]},
                             started_at=1.7e9, wall_s=0.01, peak_mem_mb=50.0))
    return out


def save_one_old(store: Store, record: RunRecord) -> None:
    """The store's save before batching: one transaction per run."""
    key = record.cell.run_key
    values = run_row(record, "local", store.environment_id(), store._code_version)
    with store.engine.begin() as connection:
        insert = dialect_insert(connection)(Run.__table__).values(**values)
        connection.execute(insert.on_conflict_do_update(index_elements=["run_key"],
                                                        set_={k: v for k, v in values.items() if k != "run_key"}))
        connection.execute(delete(MetricValue).where(MetricValue.run_key == key))
        connection.execute(delete(CurvePoint).where(CurvePoint.run_key == key))
        connection.execute(MetricValue.__table__.insert(), [{"run_key": key, "name": k, "value": v}
                                                             for k, v in record.metrics.items()])
        connection.execute(CurvePoint.__table__.insert(), [{"run_key": key, "name": name, "step": s, "value": v}
                                                            for name, curve in record.curves.items() for s, v in curve])


def measure(url: str, n: int, n_old: int) -> tuple[float, float, float]:
    """(seconds per run, one transaction each; seconds for the n runs, batched; this process's CPU seconds for
    them, which a loaded machine inflates less than the wall time)."""
    store = Store.open(url)
    store.environment_id()  # provenance is once per driver, not per run
    old = records(n_old, "old")
    start = time.perf_counter()
    for record in old:
        save_one_old(store, record)
    old_s = (time.perf_counter() - start) / max(n_old, 1)
    new = records(n, "new")
    start, cpu = time.perf_counter(), time.process_time()
    writer = Writer(store, "local")
    for record in new:
        writer.add(record)
    writer.close()
    new_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    assert store.count() == n_old + n and writer.saved == n
    store.engine.dispose()
    return old_s, new_s, cpu_s


def report(backend: str, n: int, old_per_run: float, new_s: float, cpu_s: float) -> None:
    target = TARGETS[backend]
    print(f"{backend:10s} {n} runs batched {new_s:6.2f} s ({n / new_s:7.0f} runs/s; driver CPU {cpu_s:.2f} s); "
          f"one transaction per run "
          f"{1 / old_per_run:5.0f} runs/s; speed-up x{old_per_run * n / new_s:.1f}; "
          f"target < {target:g} s: {'met' if new_s < target else 'missed'} (ratio {new_s / target:.2f}); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--old-runs", type=int, default=1_000, help="runs saved one transaction each (the rate)")
    parser.add_argument("--pg", help="PostgreSQL server URL whose database may be used (default: tests/pg.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report("sqlite", args.runs, *measure(f"sqlite:///{tmp}/writes.db", args.runs, args.old_runs))
    drop = None
    try:
        if args.pg:
            url = args.pg
        else:
            from tests.pg import create_database, postgres_server

            url, drop = create_database(postgres_server())
        report("postgresql", args.runs, *measure(url, args.runs, args.old_runs))
    except Exception as exc:  # noqa: BLE001 - no server: say so, keep the SQLite figure
        print(f"postgresql skipped: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    finally:
        if drop:
            drop()


if __name__ == "__main__":
    main()
