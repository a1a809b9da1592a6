"""RunContext's cache root: a property of the machine that runs a cell, never of the cell (issue 19)."""

from pathlib import Path

import pytest

from bench.context import RunContext, default_cache_root
from bench.execute import execute
from bench.spec import Cell


def test_cache_dir_is_the_family_folder_under_the_root(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCH_CACHE_DIR", raising=False)
    assert default_cache_root() == Path.home() / ".cache" / "icml2025-bench"
    assert RunContext(0).cache_dir("safety") == Path.home() / ".cache" / "icml2025-bench" / "safety"
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path))
    assert default_cache_root() == tmp_path and RunContext(0).cache_dir("erasure") == tmp_path / "erasure"
    monkeypatch.setenv("BENCH_CACHE_DIR", "")  # empty: the default, not the working directory
    assert default_cache_root() == Path.home() / ".cache" / "icml2025-bench"
    ctx = RunContext(3, cache_root="~/elsewhere")
    assert ctx.cache_root == Path.home() / "elsewhere" and ctx.for_task().cache_root == ctx.cache_root
    for bad in ("", "a/b", ".."):
        with pytest.raises(ValueError, match="one folder name"):
            ctx.cache_dir(bad)


def test_execute_hands_the_task_and_the_method_this_machines_cache_root(toy_registry, monkeypatch, tmp_path):
    """execute reads $BENCH_CACHE_DIR in the process that runs the cell; the cell (and its run_key) holds no path."""
    seen: list[RunContext] = []
    for_task = RunContext.for_task

    def spy(self):
        seen.extend([self, for_task(self)])
        return seen[-1]

    monkeypatch.setattr(RunContext, "for_task", spy)
    cell = Cell("toy_noisy", "toy_target", 0, {}, {"dim": 3, "scale": 1.0})
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "caches"))
    first = execute(cell, toy_registry)
    method_ctx, task_ctx = seen
    assert method_ctx.cache_root == task_ctx.cache_root == tmp_path / "caches"
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "other"))
    second = execute(cell, toy_registry)
    assert seen[-1].cache_root == tmp_path / "other" and first.metrics == second.metrics
