"""RuleAdapter (Li et al., ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench

PAPER = "adaptive-rules"


def _paper():
    registry = Registry.discover()
    return registry, load_paper(registry, PAPER)


def test_claims_file_is_valid():
    registry, paper = _paper()
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == ["rewardbench-safety-ramo-above-its-base"]
    assert all(c.control for c in paper.claims if c.scale != "paper-scale")  # each rule-world claim's negative control
    assert set(paper.methods) == {"adaptive_rules", "all_rules", "random_rules", "overall_judgement", "reward_model"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    safety = paper.claims[-1]
    assert safety.scale == "paper-scale" and safety.metric == "safety" and safety.kind == "ordering"
    assert [g.method_config["model"] for g in safety.groups] == ["Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",
                                                                 "HFXM/RAMO-Llama3.1-8B"]
    assert all(g.task == "rewardbench" and not g.task_config for g in safety.groups)  # the hub's filtered split


@pytest.mark.integration
def test_bench_run_stores_the_adaptive_rules_metrics(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "adaptive_rules", "--task", "rule_world", db=db, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="adaptive_rules", task="rule_world")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done" and metrics["rules_used"] == 5.0
    assert {"pairwise_accuracy", "label_accuracy", "label_mutual_information", "chat", "chat_hard", "safety",
            "reasoning"} <= set(metrics)
    assert 0.75 < metrics["label_accuracy"] < 0.9 and metrics["pairwise_accuracy"] > 0.7
