"""Migration 0007 (issue 23, item 4): the preference methods lose `model`, stored runs take the keys the code computes.

A store at revision 0006 holds runs written by the former code (method configs with `"model": ""`, on each
preference task and the bandit world), with metrics, curves and a lease; upgrading gives each the run_key and
setting_key of the cell the runner now builds, so the runner resumes it. A run with a non-empty method `model` (another
experiment: the baseline came from the task's π_SFT) and a run of another family's `model` (reward_model) stay as they
are; a new key some stored run already holds stays with it; the downgrade restores the former keys.
"""

import importlib
from datetime import datetime

from alembic import command

from bench.cells import Entry, make_cell
from bench.models import CurvePoint, Lease, MetricValue, Run
from bench.spec import Cell, RunRecord
from bench.store import SCHEMA_HEAD, Store, _alembic_config, make_engine, schema_state, upgrade
from runners.base import pending_cells
from tests.bench._migrated import by_id as _by_id
from tests.pg import pg_server_url, pg_url, sqlite_or_pg_url  # noqa: F401 - fixtures (url)

# (method, task): one run of each as the former code stored it (method config with "model": "")
FORMER = [("simplemix", "preference_world"), ("dpo", "preference_bandit"), ("epa", "alpacaeval"),
          ("logo", "long_context_alignment"), ("sft", "preference_world")]
HUB = "Qwen/Qwen2.5-1.5B-Instruct"


def _former(cell: Cell, model: str = "") -> Cell:
    """The cell as the former code built it: `model` first in the method config, as its Config declared it."""
    return Cell(cell.method, cell.task, cell.seed, {"model": model, **cell.method_config}, cell.task_config,
                cell.hardware)


def _row(cell: Cell, status="done", version=1) -> dict:
    return {"run_key": cell.run_key, "setting_key": cell.setting_key, "method": cell.method,
            "method_config": dict(cell.method_config), "task": cell.task, "task_version": version,
            "task_config": dict(cell.task_config), "seed": cell.seed, "hardware": cell.hardware, "status": status,
            "runner": "local", "wall_s": 1.5, "log": f"log of {cell.method}", "code_version": "0.1.0+gabc",
            "started_at": datetime(2026, 12, 12, 10, 0, 0, 123456), "finished_at": datetime(2026, 12, 12, 10, 0, 2)}


def _at_0006(url: str):
    engine = make_engine(url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0006_run_identity")
    return engine


def _insert(engine, rows: list[dict], lease: str | None = None) -> None:
    """The rows, each with 2 metrics and 3 curve points, and a lease on `lease`."""
    with engine.begin() as connection:
        connection.execute(Run.__table__.insert(), rows)
        for row in rows:
            connection.execute(MetricValue.__table__.insert(), [{"run_key": row["run_key"], "name": n, "value": v}
                                                                for n, v in (("win_rate", 0.5), ("b", 2.0))])
            connection.execute(CurvePoint.__table__.insert(), [{"run_key": row["run_key"], "name": "loss",
                                                                "step": s, "value": 1.0 / s} for s in (1, 2, 3)])
        if lease is not None:
            connection.execute(Lease.__table__.insert(), [{"run_key": lease, "owner": "h:1:x", "heartbeat": 1.0,
                                                           "acquired": 1.0}])


def test_0007_rekeys_former_preference_runs_to_the_cells_the_runner_builds(url, registry):
    engine = _at_0006(url)
    current = {(m, t): make_cell(registry, Entry(m), Entry(t), 0) for m, t in FORMER}
    assert all("model" not in cell.method_config for cell in current.values())   # the code's cells have none
    former = {pair: _former(cell) for pair, cell in current.items()}
    versions = {pair: registry.task_version(pair[1]) for pair in current}
    hub = _former(current[("simplemix", "preference_world")], HUB)               # another experiment: kept
    failed = _former(Cell("dpo", "preference_world", 1, current[("simplemix", "preference_world")].method_config,
                          current[("simplemix", "preference_world")].task_config))
    other_family = Cell("reward_model", "rewardbench", 0, {"model": "", "batch_size": 8}, {"limit": 4})
    rows = [_row(cell, version=versions[pair]) for pair, cell in former.items()]
    rows += [_row(hub), _row(failed, status="failed", version=0), _row(other_family)]
    _insert(engine, rows, lease=former[("dpo", "preference_bandit")].run_key)
    before, _, _, _ = _by_id(engine)
    assert schema_state(engine) == "old:0006_run_identity"

    assert upgrade(engine) == SCHEMA_HEAD and schema_state(engine) == "current"
    runs, metrics, curves, leases = _by_id(engine)
    assert set(runs) == set(before)                                             # every run kept, under its id
    keys = {run.run_key: run for run in runs.values()}
    for pair, cell in current.items():  # the key, setting and config bench.spec computes for the current cell
        run = keys[cell.run_key]
        assert run.id == next(i for i, r in before.items() if r.run_key == former[pair].run_key)
        assert run.setting_key == cell.setting_key and run.method_config == dict(cell.method_config)
        old = before[run.id]._asdict()
        keyed = ("run_key", "setting_key", "method_config")
        assert {k: v for k, v in run._asdict().items() if k not in keyed} == \
            {k: v for k, v in old.items() if k not in keyed}                     # all else kept
        assert metrics[cell.run_key] == 2 and curves[cell.run_key] == 3          # its metrics and curves moved
        assert former[pair].run_key not in metrics and former[pair].run_key not in curves
    assert current[("dpo", "preference_bandit")].run_key in leases
    assert former[("dpo", "preference_bandit")].run_key not in leases
    # a non-empty method model: another experiment, untouched under its old key; another family's model: untouched
    assert keys[hub.run_key].method_config["model"] == HUB and metrics[hub.run_key] == 2
    assert keys[other_family.run_key].method_config == {"model": "", "batch_size": 8}
    moved_failed = Cell(failed.method, failed.task, 1, current[("simplemix", "preference_world")].method_config,
                        failed.task_config)
    assert keys[moved_failed.run_key].status == "failed" and metrics[moved_failed.run_key] == 2
    assert sum(metrics.values()) == 2 * len(before) and sum(curves.values()) == 3 * len(before)

    store = Store.open(url)  # the runner finds every migrated cell done: resumed, not rerun
    cells = list(current.values())
    assert pending_cells(cells, store, False, registry) == ([], len(cells))
    rerun = RunRecord(cells[0], "done", task_version=registry.task_version(cells[0].task), metrics={"win_rate": 0.9})
    assert store.save(rerun, runner="local") is False and store.count() == len(before)  # the same run, kept
    assert store.metrics([cells[0].run_key])[cells[0].run_key]["win_rate"] == 0.5

    with engine.begin() as connection:  # downgrade: the former keys and configs again
        command.downgrade(_alembic_config(connection), "0006_run_identity")
    runs, metrics, curves, leases = _by_id(engine)
    assert {r.id: r.run_key for r in runs.values()} == {i: r.run_key for i, r in before.items()}
    assert {r.id: r.setting_key for r in runs.values()} == {i: r.setting_key for i, r in before.items()}
    assert {r.id: r.method_config for r in runs.values()} == {i: r.method_config for i, r in before.items()}
    assert former[("dpo", "preference_bandit")].run_key in leases
    assert sum(metrics.values()) == 2 * len(before) and sum(curves.values()) == 3 * len(before)


def test_0007_leaves_a_former_run_whose_new_key_is_taken(tmp_path, registry):
    """A stored run already under the new key (its config without `model`) keeps it; the former run that would take
    the same key stays as it was, with its metrics."""
    url = f"sqlite:///{tmp_path / 'bench.db'}"
    engine = _at_0006(url)
    cell = make_cell(registry, Entry("dpo"), Entry("preference_bandit"), 2)
    _insert(engine, [_row(cell), _row(_former(cell), status="failed")])
    upgrade(engine)
    runs, metrics, _, _ = _by_id(engine)
    assert {r.run_key: r.status for r in runs.values()} == {cell.run_key: "done", _former(cell).run_key: "failed"}
    assert metrics == {cell.run_key: 2, _former(cell).run_key: 2}


def test_the_frozen_methods_are_the_preference_family_and_no_claim_names_their_model(registry):
    """0007's frozen list is the preference family's methods of its time (each had `model` through TrainingSettings);
    no method of the family has it now, and no claims file names it for them (π_SFT is the task's `model`: a method
    `model` is an unknown key)."""
    from leaderboard.claims import load_paper

    frozen = importlib.import_module("bench.migrations.versions.0007_preference_sft_model").METHODS
    family = {n for n in registry.names("method") if registry.listing("method", n).family == "preference"}
    assert set(frozen) <= family
    assert all("model" not in registry.config_fields("method", n) for n in family)
    for slug in registry.papers():
        for claim in load_paper(registry, slug).claims:
            for group in claim.groups:
                if group.method in family:
                    assert "model" not in group.method_config, (slug, claim.id)
