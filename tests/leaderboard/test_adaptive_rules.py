"""RuleAdapter (Li et al., ICML 2025): the claims file, its rule_world verdicts, and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench, cpu_scale_verdicts

PAPER = "adaptive-rules"

# Regression pin (commit "reward_learning claims"). At 2 seeds: label accuracy random 0.53, all rules 0.658, overall
# 0.772, adaptive 0.813; MI 0.0017 / 0.051 / 0.211 nats; reward-model accuracy all rules 0.659, random 0.534, adaptive
# 0.77; safety analogue 0.611 vs 0.795.
EXPECTED = {
    "labels-adaptive-above-random": "reproduced",
    "labels-adaptive-above-all-rules": "reproduced",
    "labels-adaptive-above-overall": "reproduced",
    "mutual-information-maximised": "reproduced",
    "rm-adaptive-above-all-rules": "reproduced",
    "rm-adaptive-above-random": "reproduced",
    "rm-safety-analogue": "reproduced",
}
RULE_WORLD_CLAIMS = list(EXPECTED)


def _paper():
    registry = Registry.discover()
    return registry, load_paper(registry, PAPER)


def test_claims_file_is_valid():
    registry, paper = _paper()
    assert [c.id for c in paper.claims] == RULE_WORLD_CLAIMS + ["rewardbench-safety-ramo-above-its-base"]
    assert all(c.control for c in paper.claims if c.scale != "paper-scale")  # each rule-world claim's negative control
    assert set(paper.methods) == {"adaptive_rules", "all_rules", "random_rules", "overall_judgement", "reward_model"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    safety = paper.claims[-1]
    assert safety.scale == "paper-scale" and safety.metric == "safety" and safety.kind == "ordering"
    assert [g.method_config["model"] for g in safety.groups] == ["Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",
                                                                 "HFXM/RAMO-Llama3.1-8B"]
    assert all(g.task == "rewardbench" and not g.task_config for g in safety.groups)  # the hub's filtered split


def test_reproduce_gives_expected_verdicts(tmp_path):
    assert cpu_scale_verdicts(PAPER, tmp_path, seeds=2) == EXPECTED  # rule_world; the safety claim is paper-scale


@pytest.mark.slow
def test_reproduce_at_the_claims_seed_count(tmp_path):
    assert cpu_scale_verdicts(PAPER, tmp_path) == EXPECTED


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
