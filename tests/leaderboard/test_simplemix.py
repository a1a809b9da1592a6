"""SimpleMix (Li & Khashabi, ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench

PAPER = "simplemix"
CATEGORIES = ("math", "coding", "creative_writing", "recommendations")
PAPER_SCALE = ("abstract-simplemix-vs-on-and-off-policy", "abstract-simplemix-vs-off-policy",
               "abstract-simplemix-vs-hybrid-baselines")


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"simplemix", "dpo", "hypo", "dpo_mix_p"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == list(PAPER_SCALE)
    assert all(g.task == "alpacaeval" for c in paper.claims if c.scale == "paper-scale" for g in c.groups)
    assert all(c.differences and c.scale == "cpu-reduced" for c in paper.claims if c.id not in PAPER_SCALE)


@pytest.mark.integration
def test_bench_run_simplemix_stores_per_category_results(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "simplemix", "--task", "preference_world", db=db, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="simplemix", task="preference_world")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done"
    for c in CATEGORIES:
        assert 0 <= metrics[f"win_rate_{c}"] <= 1 and f"gold_reward_{c}" in metrics
    assert abs(metrics["on_policy_fraction"] - 0.5) < 0.02 and metrics["kl_to_reference"] > 0
    assert 0 <= metrics["lc_win_rate"] <= 1


@pytest.mark.integration
def test_paper_scale_path_with_a_local_model_directory(tmp_path):
    """`--set task.model=<dir>` loads π_SFT (policy, reference, baseline) through from_pretrained (the hub-id path);
    `--hardware cuda` is accepted by the method and refused by this CPU machine in one line."""
    from bench.context import RunContext
    from tasks.preference.preference_world import Config, sft_policy

    path, _ = sft_policy(Config(world_seed=0), RunContext(0).cache_dir("preference"))
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "simplemix", "--task", "preference_world", "--set", f"task.model={path}",
                "--set", "lr=1e-3", db=db, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="simplemix", task="preference_world")
    assert row.status == "done" and "win_rate_math" in store.metrics([row.run_key])[row.run_key]
    gpu = bench("run", "--method", "simplemix", "--task", "preference_world", "--hardware", "cuda", db=db, timeout=300)
    assert gpu.returncode != 0 and "no CUDA GPU" in gpu.stdout + gpu.stderr
