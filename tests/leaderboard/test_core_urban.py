"""CoRE (Chen et al., ICML 2025): the claims file and `bench run` end to end."""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import bench

PAPER = "core-urban"


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"core", "direct_transfer", "procrustes", "source_mean", "released_core"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert all(c.differences for c in paper.claims)
    release = [c for c in paper.claims if c.scale == "paper-scale"]
    assert len(release) == 4 and all(g.task == "urban_cities" for c in release for g in c.groups)


def test_each_released_pair_is_judged_on_the_real_cities_behind_the_authors_embeddings():
    """bj→xa, cd→bj, cd→xa: CoRE's two claims on the real cities, gated by the world's positive control, the authors'
    own embeddings scored by our evaluator (released_core), whose null shuffles them."""
    paper = load_paper(Registry.discover(), PAPER)
    by_id = {c.id: c for c in paper.claims}
    for source, target in (("bj", "xa"), ("cd", "bj"), ("cd", "xa")):
        pair = f"{source}-{target}"
        control = by_id[f"released-embeddings-transfer-{pair}"]
        assert control.role == "control" and control.groups[0].method == "released_core"
        assert control.control[0].method_config == {"shuffle": True}
        assert set(control.gates) == {f"real-core-beats-source-mean-{pair}", f"real-core-beats-direct-transfer-{pair}"}
        for cid in control.gates:
            assert all(g.task == "urban_cities" and g.task_config == {"source": source, "target": target}
                       for g in by_id[cid].groups + by_id[cid].control)


@pytest.mark.integration
def test_bench_run_stores_core_metrics(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "core", "--task", "two_city", "--set", "epochs=50", "--set", "dim=32",
                "--set", "probes=100", "--set", "task.n_source=100", "--set", "task.n_target=80", db=db, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="core", task="two_city")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done"
    assert {"mae", "rmse", "r2", "mape", "mae_population", "r2_co2"} <= set(metrics)
    assert metrics["rmse"] >= metrics["mae"] > 0 and metrics["r2"] <= 1.0
    assert "mae = " in run.stdout


@pytest.mark.slow
def test_bench_run_with_the_release_model(tmp_path):
    """The release's model (d 128, 8 heads, 1000 probes) on the default 300/250-region cities, for 60 of its 600
    epochs: the epochs repeat one step, and the lock's CoRE cells run all 600 (at d 32, 100 probes)."""
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "core", "--task", "two_city", "--set", "epochs=60", db=db, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="core", task="two_city")
    assert row.status == "done" and store.metrics([row.run_key])[row.run_key]["mae"] > 0
