"""Long-Short Alignment (Du et al., ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench

PAPER = "long-short-alignment"

PAPER_SCALE = ["table2-redpajama-longbench", "table2-redpajama-perplexity", "table6-alpha-ablation", "babilong-16k"]


def _paper():
    registry = Registry.discover()
    return registry, load_paper(registry, PAPER)


def test_claims_file_is_valid():
    registry, paper = _paper()
    assert [c.id for c in paper.claims][-len(PAPER_SCALE):] == PAPER_SCALE
    assert set(paper.methods) == {"long_short_alignment", "plain", "output_reparam"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert all(c.scale == "paper-scale" and c.differences for c in paper.claims if c.id in PAPER_SCALE)
    assert all(c.scale == "cpu-reduced" for c in paper.claims if c.id not in PAPER_SCALE)
    big = [g for c in paper.claims if c.id in PAPER_SCALE for g in c.groups]
    assert all(g.method_config["model"] == "meta-llama/Llama-2-7b-hf" and g.task_config["train_length"] == 4096
               for g in big)


@pytest.mark.integration
def test_bench_run_stores_the_long_short_alignment_metrics(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "long_short_alignment", "--task", "topic_lm", "--set", "method.steps=40",
                "--set", "task.eval_sequences=16", db=db, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="long_short_alignment", task="topic_lm")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done"
    # 40 steps already beat the uniform predictor (log 32 = 3.47 nats) and stay above the Bayes optimum
    assert 0 < metrics["long_length_excess_loss"] and metrics["long_length_loss"] < 3.4
    assert metrics["long_length_perplexity"] > 1 and 0 < metrics["misalignment"] < 2 * 3.4658
    assert {"corr_misalignment_long_loss", "corr_train_loss_long_loss", "corr_advantage"} <= set(metrics)
    assert "long_length_loss = " in run.stdout
