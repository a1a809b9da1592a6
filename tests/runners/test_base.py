"""The runner protocol: both runners take the shared arguments, and a finished cell is recorded one way."""

import inspect

from bench.spec import Cell, RunRecord
from runners import local, ray
from runners.base import Runner, Summary, recorder


def test_both_runners_are_runners():
    shared = list(inspect.signature(Runner.__call__).parameters)[1:]          # without self
    for run_cells in (local.run_cells, ray.run_cells):
        params = inspect.signature(run_cells).parameters
        assert list(params)[:3] == shared[:3]                                  # cells, store, registry
        assert all(name in params for name in shared[3:])                       # timeout, force, on_record
        extra = [p for name, p in params.items() if name not in shared]
        assert all(p.default is not inspect.Parameter.empty for p in extra)    # their own settings have defaults


class _Writer:
    def __init__(self):
        self.records = []

    def add(self, record):
        self.records.append(record)


class _Registry:
    def task(self, name):
        return type("Task", (), {"version": 3})()


def test_a_finished_cell_is_stored_counted_and_reported_with_its_task_version():
    writer, summary, seen, counted = _Writer(), Summary(), [], []
    finish = recorder(writer, summary, _Registry(), seen.append, counted.append)
    crashed = RunRecord(Cell("m", "t", 0, {}, {}, "cpu"), "failed", error="killed")     # before execute() reported
    finish(crashed)
    assert crashed.task_version == 3
    assert writer.records == seen == counted == [crashed] and summary.counts == {"failed": 1}
