"""Label smoothing and calibration (Huang, Lu & Zeng, ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench

PAPER = "label-smoothing-calibration"


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert all(c.control and c.control_why for c in paper.claims if c.scale != "paper-scale")
    assert set(paper.methods) == {"sft_ce", "sft_label_smoothing"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert [c.scale for c in paper.claims].count("paper-scale") == 1
    assert all(c.differences for c in paper.claims)


SMALL_WORLD = ("task.entities=8", "task.per_entity=40", "task.vocab_size=64", "task.hidden_size=16",
               "task.pretrain_steps=150", "task.eval_questions=300", "task.sft_copies=8")


@pytest.mark.integration
def test_bench_run_stores_the_label_smoothing_metrics(tmp_path):
    db = tmp_path / "cli.db"
    sets = [a for s in SMALL_WORLD for a in ("--set", s)]
    run = bench("run", "--method", "sft_label_smoothing", "--task", "sft_calibration", *sets, db=db, timeout=300,
                env={"BENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert any((tmp_path / "cache" / "calibration").iterdir())  # the cell's process cached under $BENCH_CACHE_DIR
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="sft_label_smoothing", task="sft_calibration")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done"
    assert {"ece_before", "ece_after", "rms_ce_after", "accuracy_before", "accuracy_after"} <= set(metrics)
    assert 0.0 <= metrics["ece_after"] <= 1.0 and metrics["rms_ce_after"] >= metrics["ece_after"] - 1e-12
    # β = 0.1 over V = 64 tokens: the smoothed objective's minimum is the entropy of the soft target, ≥ 0.5 nats
    assert metrics["sft_final_loss"] > 0.5
    assert "ece_after = " in run.stdout
