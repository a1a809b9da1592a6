"""M3-JEPA (Lei et al., ICML 2025): the claims file and `bench run` end to end."""

import pytest
import torch

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper, paper_cells
from methods.multimodal._moe import M3Predictor
from tests.leaderboard.paper_cli import bench

PAPER = "m3-jepa"

PAPER_SCALE = {"coco-i2t-r1", "coco-t2i-r1"}


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    checks = ["contrastive-baseline-matches-param-budget",
              "larger-contrastive-twice-the-params"]  # fixed by the configs
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert set(paper.methods) == {"m3_jepa", "contrastive", "linear_predictor"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert {c.id for c in paper.claims if c.scale == "paper-scale"} == PAPER_SCALE
    assert all(c.differences for c in paper.claims)
    assert len(set(paper_cells(paper, registry, seeds=1, controls=False))) == 8  # with the shared-latent oracle
    # + its null (keys permuted) and the negative controls' untrained and λ_cl = 0 cells (12); + m3_jepa switched
    # off (λ_pred = 0; E = 1, k = 1) at the defaults (2), λ_pred = 0 in the gate claims' E = 12, k = 4 setting (E = 1
    # there is the defaults' switched cell), and the paper-scale COCO setting under each switch (2);
    # contrastive-loss-needed names no switch (its own cells ablate λ_cl), so its λ_cl = 0 setting adds none
    assert len(set(paper_cells(paper, registry, seeds=1))) == 12 + 2 + 1 + 2


def test_paper_predictor_size_is_the_reported_140m_trainable_parameters():
    """H = 2048, E = 12, k = 4 between DINOv2-L (1024) and LLaMA-3-8B (4096) features: 140.6M (paper: ~140M, LoRA
    aside)."""
    with torch.device("meta"):
        model = M3Predictor(1024, 4096, 2048, 12, 4, 0.1)
    assert sum(p.numel() for p in model.parameters()) == 140_617_740


def _stored_metrics(db, *extra):
    run = bench("run", "--method", "m3_jepa", "--task", "paired_retrieval", *extra, db=db, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="m3_jepa", task="paired_retrieval")
    assert row.status == "done" and "mean_recall = " in run.stdout
    return store.metrics([row.run_key])[row.run_key]


@pytest.mark.integration
def test_bench_run_stores_m3_jepa_metrics(tmp_path):
    metrics = _stored_metrics(tmp_path / "cli.db", "--set", "epochs=10")
    assert metrics["trainable_params"] == 67332 and 0.1 < metrics["mean_recall"] <= 1.0
    assert {"recall_i2t_at_1", "recall_t2i_at_5", "class_accuracy", "gate_direction_tv"} <= set(metrics)


@pytest.mark.slow
def test_bench_run_at_the_defaults(tmp_path):
    metrics = _stored_metrics(tmp_path / "cli.db")
    assert metrics["mean_recall"] > 0.5 and metrics["class_accuracy"] > 0.8
