"""`bench reproduce` on a machine without a task's data: the cells it cannot build are left out and said so, and a
lock, which records every claim, refuses."""

import pytest

from app.commands.reproduce import _buildable
from bench.errors import BenchError
from bench.registry import Registry
from bench.spec import Cell
from tasks.urban import urban_cities


def _cells():
    return [Cell("released_core", "urban_cities", 0, {}, {"source": "bj", "target": "xa"}, "cpu"),
            Cell("source_mean", "two_city", 0, {}, {}, "cpu")]


def test_cells_without_their_data_are_left_out_and_a_lock_refuses(monkeypatch, tmp_path, capsys):
    registry = Registry.discover()
    monkeypatch.setattr(urban_cities, "data_places", lambda: [tmp_path])
    assert [c.task for c in _buildable(_cells(), registry, lock=False)] == ["two_city"]
    assert "1 cells left out (urban_cities): the released cities are not on this machine" in capsys.readouterr().err
    with pytest.raises(BenchError, match="--lock records every claim, but 1 cells cannot be built on this machine"):
        _buildable(_cells(), registry, lock=True)


def test_with_the_data_every_cell_stays(monkeypatch):
    monkeypatch.setattr(urban_cities, "data_places", lambda: [urban_cities.ROOT / "tests/tasks/urban/fixture_cities"])
    assert _buildable(_cells(), Registry.discover(), lock=True) == _cells()
