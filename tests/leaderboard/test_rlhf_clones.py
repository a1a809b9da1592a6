"""Clone-robust alignment (Procaccia et al., ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper, paper_cells
from tests.leaderboard.paper_cli import bench

PAPER = "rlhf-clones"

DISTINCT_CELLS = 13  # with the positive control's clone_oracle
# + its null (shuffled clones) and the negative controls' MLE ε = 0.03 / 0.01, weighted ε = 0.25 and k = 5 / 10 cells
DISTINCT_CELLS_WITH_CONTROLS = 19


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    checks = ["weighted-mle-exact-duplicates", "weighted-win-rate-identity"]  # an identity of Eq. 2; the solver's stop
                                                                              # rule
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert set(paper.methods) == {"mle", "weighted_mle"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert all(c.differences and c.scale == "cpu-reduced" for c in paper.claims)
    assert len(set(paper_cells(paper, registry, seeds=1, controls=False))) == DISTINCT_CELLS
    assert len(set(paper_cells(paper, registry, seeds=1))) == DISTINCT_CELLS_WITH_CONTROLS


@pytest.mark.integration
def test_bench_run_stores_the_weighted_mle_metrics(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "weighted_mle", "--task", "clones", "--set", "task.distance=0.001", db=db,
                timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="weighted_mle", task="clones")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done" and metrics["clone_shift"] <= 0.02 and metrics["top_theme_flip"] == 0.0
    assert metrics["pairwise_accuracy"] == 1.0 and metrics["kkt_residual"] < 1e-9
    assert "clone_shift = " in run.stdout
