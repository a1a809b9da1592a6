"""Migration 0006 (issue 19): stored runs lose `cache_dir` and take `world_seed`, under the keys the code now computes.

A store at revision 0005 holds runs written by the former code (task configs with cache_dir, data_seed or
instance_seed), with metrics, curves and a lease; upgrading gives each the run_key and setting_key of the cell the
runner now builds, so the runner resumes it; a collision keeps both runs; the downgrade restores the former keys.
The store is upgraded to the head, so a preference run also passes through 0007 (the former code's method config
held `"model": ""`, tests/bench/test_migration_0007.py).
"""

from datetime import datetime

from bench.cells import Entry, make_cell
from bench.models import CurvePoint, Lease, MetricValue, Run
from bench.spec import Cell, RunRecord
from bench.store import SCHEMA_HEAD, Store, _alembic_config, make_engine, schema_state, upgrade
from runners.base import pending_cells
from tests.bench._migrated import by_id as _by_id
from tests.pg import pg_server_url, pg_url, sqlite_or_pg_url  # noqa: F401 - fixtures (url)

CALIBRATION_DIR = "~/.cache/icml2025-bench/calibration"
# (method, task, the former code's config beside the current defaults)
FORMER = [
    ("sgd", "performative", {"data_seed": 0}),
    ("cmdp_primal_dual", "cmdp_stochastic", {"instance_seed": 0}),
    ("bon_exact", "bon_random_reference", {"data_seed": None}),
    ("sft_ce", "sft_calibration", {"cache_dir": CALIBRATION_DIR}),
    ("dpo", "preference_world", {"cache_dir": "~/.cache/icml2025-bench/preference"}),
]
RENAMED = {"data_seed": "world_seed", "instance_seed": "world_seed"}
FORMER_METHOD = {"dpo": {"model": ""}}  # the former code's method config beside the current one (0007 drops it)


def _former(cell: Cell, extra: dict) -> Cell:
    """The cell as the former code built it: the same defaults, with cache_dir and the seed under its former name
    (and a preference method's `model`)."""
    renamed = {RENAMED[name] for name in extra if name in RENAMED}
    config = {k: v for k, v in cell.task_config.items() if k not in renamed}
    method_config = {**FORMER_METHOD.get(cell.method, {}), **cell.method_config}
    return Cell(cell.method, cell.task, cell.seed, method_config, {**config, **extra}, cell.hardware)


def _row(cell: Cell, status="done", version=1) -> dict:
    return {"run_key": cell.run_key, "setting_key": cell.setting_key, "method": cell.method,
            "method_config": dict(cell.method_config), "task": cell.task, "task_version": version,
            "task_config": dict(cell.task_config), "seed": cell.seed, "hardware": cell.hardware, "status": status,
            "runner": "local", "wall_s": 1.5, "log": f"log of {cell.task}", "code_version": "0.1.0+gabc",
            "started_at": datetime(2026, 12, 5, 10, 0, 0, 123456), "finished_at": datetime(2026, 12, 5, 10, 0, 2)}


def _store_at_0005(url: str, registry):
    """A 0005 store holding the former code's runs, each with 2 metrics and 3 curve points: (engine, {task: the
    cell the code builds now}, {task: the former code's cell}, the colliding former cell, a run left as it is)."""
    engine = make_engine(url)
    with engine.begin() as connection:
        from alembic import command

        command.upgrade(_alembic_config(connection), "0005_run_log")
    current = {task: make_cell(registry, Entry(method), Entry(task), 0) for method, task, _ in FORMER}
    former = {task: _former(current[task], extra) for _, task, extra in FORMER}
    versions = {task: registry.task_version(task) for task in current}
    # the same calibration cell run earlier on a machine whose cache lived elsewhere: one key once cache_dir goes
    elsewhere = Cell("sft_ce", "sft_calibration", 0, former["sft_calibration"].method_config,
                     {**former["sft_calibration"].task_config, "cache_dir": "/scratch/calibration"})
    rows = [_row(elsewhere, version=versions["sft_calibration"])]
    rows += [_row(cell, version=versions[task]) for task, cell in former.items()]
    rows.append(_row(Cell("sgd", "performative", 1, {}, {"data_seed": 0}), status="failed", version=0))
    untouched = Cell("dicesgd", "performative", 5, {"c": 1.0}, {"beta": 0.01})  # no former field: kept as it is
    rows.append(_row(untouched))
    with engine.begin() as connection:
        connection.execute(Run.__table__.insert(), rows)
        for row in rows:
            connection.execute(MetricValue.__table__.insert(), [{"run_key": row["run_key"], "name": n, "value": v}
                                                                for n, v in (("a", 1.0), ("b", 2.0))])
            connection.execute(CurvePoint.__table__.insert(), [{"run_key": row["run_key"], "name": "loss",
                                                                "step": s, "value": 1.0 / s} for s in (1, 2, 3)])
        connection.execute(Lease.__table__.insert(), [{"run_key": former["performative"].run_key, "owner": "h:1:x",
                                                       "heartbeat": 1.0, "acquired": 1.0}])
    return engine, current, former, elsewhere, untouched


def test_0006_rekeys_former_runs_to_the_cells_the_runner_builds(url, registry):
    engine, current, former, elsewhere, untouched = _store_at_0005(url, registry)
    before, _, _, _ = _by_id(engine)
    assert schema_state(engine) == "old:0005_run_log"
    assert upgrade(engine) == SCHEMA_HEAD and schema_state(engine) == "current"
    runs, metrics, curves, leases = _by_id(engine)
    assert set(runs) == set(before)  # every run kept, under its id
    keys = {run.run_key: run for run in runs.values()}
    for task, cell in current.items():  # the key, setting and config bench.spec computes for the current cell
        run = keys[cell.run_key]
        assert run.id == next(i for i, r in before.items() if r.run_key == former[task].run_key)
        assert run.setting_key == cell.setting_key and run.task_config == dict(cell.task_config)
        assert run.method_config == dict(cell.method_config)
        assert "cache_dir" not in run.task_config and "data_seed" not in run.task_config
        old = before[run.id]._asdict()
        keyed = ("run_key", "setting_key", "task_config", "method_config")
        assert {k: v for k, v in run._asdict().items() if k not in keyed} == \
            {k: v for k, v in old.items() if k not in keyed}                                   # all else kept
        assert metrics[cell.run_key] == 2 and curves[cell.run_key] == 3  # its metrics and curves moved with it
        assert former[task].run_key not in metrics and former[task].run_key not in curves
    assert current["performative"].run_key in leases and former["performative"].run_key not in leases
    # the collision: the run of the former default cache_dir took the key, the other stays as it was
    assert keys[elsewhere.run_key].task_config["cache_dir"] == "/scratch/calibration"
    assert metrics[elsewhere.run_key] == 2 and curves[elsewhere.run_key] == 3
    assert keys[untouched.run_key].task_config == {"beta": 0.01}
    failed = Cell("sgd", "performative", 1, {}, {"world_seed": 0})
    assert keys[failed.run_key].status == "failed" and metrics[failed.run_key] == 2
    assert sum(metrics.values()) == 2 * len(before) and sum(curves.values()) == 3 * len(before)

    store = Store.open(url)  # the runner finds every migrated cell done: resumed, not rerun
    cells = list(current.values())
    assert pending_cells(cells, store, False, registry) == ([], len(cells))
    record = RunRecord(current["sft_calibration"], "done", task_version=registry.task_version("sft_calibration"),
                       metrics={"a": 9.0})
    assert store.save(record, runner="local") is False and store.count() == len(before)  # the same run, kept

    with engine.begin() as connection:  # downgrade: the former keys again
        from alembic import command

        command.downgrade(_alembic_config(connection), "0005_run_log")
    runs, metrics, curves, _ = _by_id(engine)
    assert {r.id: r.run_key for r in runs.values()} == {i: r.run_key for i, r in before.items()}
    assert {r.id: r.setting_key for r in runs.values()} == {i: r.setting_key for i, r in before.items()}
    assert sum(metrics.values()) == 2 * len(before) and sum(curves.values()) == 3 * len(before)


def test_0006_collision_prefers_a_done_run_and_keeps_the_other(tmp_path, registry):
    url = f"sqlite:///{tmp_path / 'bench.db'}"
    engine = make_engine(url)
    with engine.begin() as connection:
        from alembic import command

        command.upgrade(_alembic_config(connection), "0005_run_log")
    cell = make_cell(registry, Entry("sft_ce"), Entry("sft_calibration"), 3)
    done = Cell(cell.method, cell.task, 3, cell.method_config, {**cell.task_config, "cache_dir": "/a"})
    failed = Cell(cell.method, cell.task, 3, cell.method_config, {**cell.task_config, "cache_dir": CALIBRATION_DIR})
    with engine.begin() as connection:
        connection.execute(Run.__table__.insert(), [_row(done), _row(failed, status="failed")])
    upgrade(engine)
    runs, _, _, _ = _by_id(engine)
    assert {r.run_key: r.status for r in runs.values()} == {cell.run_key: "done", failed.run_key: "failed"}
