import math

import pytest

from bench.spec import Cell, RunRecord
from leaderboard.export import render
from leaderboard.queries import config_label, leaderboard_rows, status_counts, summarize


def test_summary_matches_the_student_t_interval():
    s = summarize([1.0, 2.0, 3.0])
    half = 4.302652729749464 / math.sqrt(3)  # t_{0.975, 2} · s / √n with s = 1
    assert (s.n, s.mean, s.std) == (3, 2.0, 1.0)
    assert s.ci_low == pytest.approx(2 - half) and s.ci_high == pytest.approx(2 + half)
    one = summarize([5.0])
    assert (one.n, one.std, one.ci_low, one.ci_high) == (1, 0.0, 5.0, 5.0)


def test_config_label_lists_only_changes():
    assert config_label({"c": 1.0, "T": 5}, {"c": 1.0, "T": 10}) == "T=5"
    assert config_label({"c": 1.0}, {"c": 1.0}) == ""


def _save(store, method, seed, error, status="done", noise=0.1):
    cell = Cell(method, "toy_target", seed, {"noise": noise} if method == "toy_noisy" else {}, {"dim": 3, "scale": 1.0})
    store.save(RunRecord(cell, status, 2, {"error": error, "norm": 1.0} if status == "done" else {},
                         error=None if status == "done" else "Traceback\nValueError: bad"), runner="local")


@pytest.fixture
def filled(store):
    for seed, value in enumerate([1.0, 2.0, 3.0]):
        _save(store, "toy_noisy", seed, value)
    for seed, value in enumerate([0.5, 0.7]):
        _save(store, "toy_noisy", seed, value, noise=0.01)
    _save(store, "toy_raise", 0, 0.0, status="failed")
    return store


def test_leaderboard_ranks_by_primary_metric(filled, toy_registry):
    board = leaderboard_rows(filled, toy_registry)
    assert list(board) == [("toy_target", "error")]
    rows = board[("toy_target", "error")]
    assert [(r.config_label, r.n, r.mean) for r in rows] == [("noise=0.01", 2, pytest.approx(0.6)), ("", 3, 2.0)]
    assert rows[1].std == 1.0


def test_status_counts_and_failures(filled):
    rows, failures = status_counts(filled)
    assert {(r.method, r.status, r.n) for r in rows} == {("toy_noisy", "done", 5), ("toy_raise", "failed", 1)}
    assert [f.method for f in failures] == ["toy_raise"]


def test_exports(filled, toy_registry):
    csv_text = render(filled, toy_registry, "csv")
    assert csv_text.splitlines()[0].startswith("task,task_label,method,config_label")
    assert len(csv_text.splitlines()) == 3
    import json

    data = json.loads(render(filled, toy_registry, "json"))
    assert data[0]["mean"] == pytest.approx(0.6) and data[1]["n"] == 3
    md = render(filled, toy_registry, "md")
    assert "| toy_target | toy_noisy | noise=0.01 | error | 2 | 0.6 |" in md
    tex = render(filled, toy_registry, "latex")
    assert r"toy\_noisy (noise=0.01)" in tex and tex.strip().endswith(r"\end{tabular}")
