"""Orthogonal safety directions (Pan et al., ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tasks.safety.refusal_finetune import SMALLEST
from tests.leaderboard.paper_cli import bench

PAPER = "safety-directions"


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"multi_direction", "single_direction"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert [c.scale for c in paper.claims].count("paper-scale") == 2


@pytest.mark.integration
def test_bench_run_stores_the_multi_direction_metrics(tmp_path):
    db = tmp_path / "cli.db"
    sets = [a for k, v in SMALLEST.items() for a in ("--set", f"task.{k}={v}")]
    run = bench("run", "--method", "multi_direction", "--task", "refusal_finetune", *sets,
                db=db, timeout=300, env={"BENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert any((tmp_path / "cache" / "safety").iterdir())  # the cell's process cached under $BENCH_CACHE_DIR
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="multi_direction", task="refusal_finetune")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done" and metrics["refusal_rate"] >= 0.5 and metrics["base_jailbreak_refusal_rate"] == 0.0
    assert metrics["ablated_refusal_rate"] < metrics["refusal_rate"] and 1 <= metrics["effective_rank"] <= 32
    assert "best_layer_accuracy" in metrics and "best_layer_accuracy = " in run.stdout
