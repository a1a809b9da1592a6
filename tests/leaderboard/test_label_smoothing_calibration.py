"""Label smoothing and calibration (Huang, Lu & Zeng, ICML 2025): the claims file, its verdicts, `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench, cpu_scale_verdicts

PAPER = "label-smoothing-calibration"

# Regression pin (commit "calibration family"; verdicts at 3 seeds). Seed 0 on the default world (V = 1024, d = 64):
# ECE before 0.030, after CE SFT 0.457, after LS β = 0.1 0.412, β = 0.2 0.391; accuracy 0.52 for all (Bayes 0.529).
EXPECTED = {
    "pretrained-model-is-calibrated": "reproduced",
    "sft-degrades-calibration": "reproduced",
    "label-smoothing-reduces-ece": "reproduced",
    "label-smoothing-reduces-rms-ce": "reproduced",
    "label-smoothing-keeps-accuracy": "reproduced",
    "llama3-8b-tulu3-ls-lowers-ece": "not run",
}
# Claims added after the pin above (verdicts not pinned yet): the large-vocabulary limit (V = 4,096, d = 16).
ADDED = ("label-smoothing-helps-less-at-large-vocabulary",)


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert [c.id for c in paper.claims if c.id not in ADDED] == list(EXPECTED)
    assert {c.id for c in paper.claims} == {*EXPECTED, *ADDED}
    assert all(c.control and c.control_why for c in paper.claims if c.scale != "paper-scale")
    assert set(paper.methods) == {"sft_ce", "sft_label_smoothing"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert [c.scale for c in paper.claims].count("paper-scale") == 1
    assert all(c.differences for c in paper.claims)


@pytest.mark.slow
def test_reproduce_gives_expected_verdicts(tmp_path):
    assert cpu_scale_verdicts(PAPER, tmp_path, judge_all=True) == EXPECTED


SMALL_WORLD = ("task.entities=8", "task.per_entity=40", "task.vocab_size=64", "task.hidden_size=16",
               "task.pretrain_steps=150", "task.eval_questions=300", "task.sft_copies=8")


def test_bench_run_stores_the_label_smoothing_metrics(tmp_path):
    db = tmp_path / "cli.db"
    sets = [a for s in (*SMALL_WORLD, f"task.cache_dir={tmp_path / 'cache'}") for a in ("--set", s)]
    run = bench("run", "--method", "sft_label_smoothing", "--task", "sft_calibration", *sets, db=db, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="sft_label_smoothing", task="sft_calibration")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done"
    assert {"ece_before", "ece_after", "rms_ce_after", "accuracy_before", "accuracy_after"} <= set(metrics)
    assert 0.0 <= metrics["ece_after"] <= 1.0 and metrics["rms_ce_after"] >= metrics["ece_after"] - 1e-12
    # β = 0.1 over V = 64 tokens: the smoothed objective's minimum is the entropy of the soft target, ≥ 0.5 nats
    assert metrics["sft_final_loss"] > 0.5
    assert "ece_after = " in run.stdout
