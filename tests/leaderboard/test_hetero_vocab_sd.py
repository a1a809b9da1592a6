"""Heterogeneous-vocabulary speculative decoding (Timor et al., ICML 2025): the claims file, `bench run`."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import group_cells, load_paper
from tests.leaderboard.paper_cli import bench

PAPER = "hetero-vocab-sd"

SMALL_TASK = ["--set", "task.prompts_per_kind=1", "--set", "task.max_new_tokens=12", "--set", "task.documents=600",
              "--set", "task.train_steps=150", "--set", "task.target_layers=1", "--set", "task.target_width=32",
              "--set", "task.drafter_width=16"]


def _cpu_cells(paper, registry, seeds):
    cells = [c for claim in paper.claims if claim.scale != "paper-scale" for g in claim.groups
             for c in group_cells(g, registry, seeds or claim.seeds)]
    return list(dict.fromkeys(cells))


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    # greedy losslessness holds by construction of the verification, SLRS's acceptance edge by min(p, ψ) ≥ p·ψ
    checks = ["slem-greedy-lossless", "tli-greedy-lossless", "speculative-greedy-lossless",
              "slrs-accepts-more-than-slem-sampling"]
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert all(c.control and c.control_why for c in paper.claims if c.role == "claim" and c.scale != "paper-scale")
    assert set(paper.methods) == {"slem", "tli", "slrs", "speculative", "autoregressive"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    paper_scale = [c for c in paper.claims if c.scale == "paper-scale"]
    assert len(paper_scale) == 5 and all(c.paper_value and c.differences for c in paper_scale)
    assert len(_cpu_cells(paper, registry, 1)) == 10  # with the positive control's self-drafting target


@pytest.mark.integration
def test_bench_run_stores_the_slem_metrics(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "slem", "--task", "hetero_vocab_pairs", *SMALL_TASK, db=db, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="slem", task="hetero_vocab_pairs")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done" and metrics["greedy_exact_match"] == 1.0
    assert 0 < metrics["target_calls_per_token"] <= 1.0 and 0 <= metrics["acceptance_rate"] <= 1.0
    assert "target_calls_per_token = " in run.stdout
