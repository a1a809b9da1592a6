"""EraseAnything (Gao et al., ICML 2025): the claims file and `bench run` / `bench show` end to end."""

import dataclasses

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import load_paper, paper_cells
from tests.fixtures.erasure.tiny_flux import RESOLUTION, build_judge, build_pipeline
from tests.leaderboard.paper_cli import bench

PAPER = "eraseanything"
METHODS = ("eraseanything", "esd", "uce", "ca", "no_erasure")
# A small world for the CLI tests: a 1-block Flux trained for 150 steps in the test's own cache.
SMALL_TASK = ["task.layers=1", "task.single_layers=0", "task.train_steps=150", "task.n_eval=16",
              "task.n_preserve=6", "task.sample_steps=8"]

# with the positive controls' keyword deletions (the concept's words; 'zero'), each the other's null
DISTINCT_CELLS = 10
# Negative controls: the claims' cells plus ESD-only at 100 steps, lambda_attn = 1e-5 and lambda_rscl = 1e-3;
# + eraseanything switched off as λ2 = 0 (lambda_attn = 0) on the contrastive-term claim's lambda_rscl = 0 cell (its
# other switched-off cells, lambda_attn = 0 and L_ESD alone, are claims' cells already).
DISTINCT_CELLS_WITH_CONTROLS = 13 + 1
# FLUX.1-dev judged by CLIP: paper-scale claims, not run on CPU machines (3 distinct cells, + eraseanything switched off
# under each of its two switches).
FLUX_CELLS = 3 + 2
PAPER_SCALE = ("flux-eraseanything-erases-nudity", "flux-lower-rate-than-esd", "flux-preserves-at-least-as-well-as-esd",
               "flux-small-drift-on-unrelated-prompts")


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert [c.id for c in paper.claims if c.id in PAPER_SCALE] == list(PAPER_SCALE)
    assert set(paper.methods) == {"eraseanything"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert all(c.differences and c.scale == ("paper-scale" if c.id in PAPER_SCALE else "cpu-reduced")
               for c in paper.claims)
    cpu = dataclasses.replace(paper, claims=[c for c in paper.claims if c.id not in PAPER_SCALE])
    assert all(c.control and c.control_why for c in cpu.claims)
    assert len(set(paper_cells(cpu, registry, seeds=1, controls=False))) == DISTINCT_CELLS
    assert len(set(paper_cells(cpu, registry, seeds=1))) == DISTINCT_CELLS_WITH_CONTROLS
    flux = {cell for cell in paper_cells(paper, registry, seeds=1) if cell not in set(paper_cells(cpu, registry, 1))}
    assert len(flux) == FLUX_CELLS and all(c.task_config["pipeline"] == "black-forest-labs/FLUX.1-dev"
                                           and c.task_config["judge"] == "openai/clip-vit-large-patch14" for c in flux)


@pytest.mark.integration
def test_bench_run_stores_the_eraseanything_metrics(tmp_path):
    db = tmp_path / "cli.db"
    run = bench("run", "--method", "eraseanything", "--task", "concept_erasure", "--set", "iterations=60",
                *[x for s in SMALL_TASK for x in ("--set", s)], db=db, timeout=600,
                env={"BENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert any((tmp_path / "cache" / "erasure").iterdir())  # the cell's process cached under $BENCH_CACHE_DIR
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method="eraseanything", task="concept_erasure")
    metrics = store.metrics([row.run_key])[row.run_key]
    assert row.status == "done"
    assert set(metrics) == {"concept_rate", "synonym_rate", "shuffled_rate", "preserve_accuracy", "feature_fd"}
    assert all(0.0 <= metrics[k] <= 1.0 for k in ("concept_rate", "synonym_rate", "preserve_accuracy"))
    assert metrics["feature_fd"] >= 0.0 and "concept_rate = " in run.stdout


def _pipeline_task(tmp_path) -> list[str]:
    """--set flags of the pipeline path on a tiny FluxPipeline and a tiny CLIP judge saved under tmp_path."""
    settings = [f"task.pipeline={build_pipeline(tmp_path / 'flux')}", f"task.judge={build_judge(tmp_path / 'clip')}",
                "task.concept=cat", "task.synonyms=kitten,feline", "task.irrelevant=dog,car,tree",
                "task.preserve=dog,car",
                "task.n_eval=4", "task.n_preserve=3", "task.concept_images=4", "task.sample_steps=4",
                f"task.resolution={RESOLUTION}", "task.max_tokens=12", "task.batch_size=3"]
    return [x for s in settings for x in ("--set", s)]


def _stored_metrics(db, method: str) -> dict:
    store = Store.open(f"sqlite:///{db}")
    (row,) = store.runs(method=method, task="concept_erasure")
    assert row.status == "done"
    return store.metrics([row.run_key])[row.run_key]


@pytest.mark.integration
def test_bench_run_on_a_flux_pipeline_stores_the_metrics(tmp_path):
    """The pipeline path end to end through the CLI: FluxPipeline.from_pretrained and CLIPModel.from_pretrained on
    saved directories (the code path of "black-forest-labs/FLUX.1-dev" and "openai/clip-vit-large-patch14")."""
    db, task_flags = tmp_path / "cli.db", _pipeline_task(tmp_path)
    run = bench("run", "--method", "eraseanything", "--task", "concept_erasure", "--set", "iterations=4", *task_flags,
                db=db, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    metrics = _stored_metrics(db, "eraseanything")
    assert set(metrics) == {"concept_rate", "synonym_rate", "shuffled_rate", "preserve_accuracy", "feature_fd"}
    assert all(0.0 <= metrics[k] <= 1.0 for k in ("concept_rate", "synonym_rate", "preserve_accuracy"))
    assert metrics["feature_fd"] > 0.0 and "concept_rate = " in run.stdout


@pytest.mark.slow
def test_bench_grid_runs_the_baselines_on_a_flux_pipeline(tmp_path):
    """ESD, UCE (the real model's context_embedder), CA and the unedited model through `bench grid`, defaults
    (~15 s; the default tier runs them in-process in tests/methods/erasure/test_pipeline_methods.py)."""
    db, task_flags = tmp_path / "cli.db", _pipeline_task(tmp_path)
    grid = bench("grid", "--method", "esd", "--method", "uce", "--method", "ca", "--method", "no_erasure",
                 "--task", "concept_erasure", *task_flags, db=db, timeout=600)
    assert grid.returncode == 0, grid.stderr[-2000:]
    fd = {m: _stored_metrics(db, m)["feature_fd"] for m in ("esd", "uce", "ca", "no_erasure")}
    assert fd["no_erasure"] == pytest.approx(0.0, abs=1e-6) and min(fd["esd"], fd["uce"], fd["ca"]) > 0.0


@pytest.mark.slow
def test_bench_show_compares_all_methods(tmp_path):
    """All five methods through `bench grid`, compared by `bench show` (default base model, smaller evaluation sets)."""
    db = tmp_path / "cli.db"
    args = [x for m in METHODS for x in ("--method", m)]
    grid = bench("grid", *args, "--task", "concept_erasure", "--set", "task.n_eval=16", "--set", "task.n_preserve=6",
                 db=db, timeout=900)  # the default (cached) base model: the small one does not render the concept
    assert grid.returncode == 0, grid.stderr[-2000:]
    show = bench("show", "--task", "concept_erasure", db=db, timeout=300)
    assert show.returncode == 0, show.stderr[-2000:]
    # the rows best first; one seed each gives no interval, so their rank column reads "—" (bench show ranks only
    # settings with an interval) and the rows are read by their method column
    ranked = [words[1] for words in map(str.split, show.stdout.splitlines()) if len(words) > 1 and words[1] in METHODS]
    assert sorted(ranked) == sorted(METHODS)
    store = Store.open(f"sqlite:///{db}")
    rate = {}
    for row in store.runs(task="concept_erasure"):
        assert row.status == "done"
        rate[row.method] = store.metrics([row.run_key])[row.run_key]["concept_rate"]
    assert rate["no_erasure"] == max(rate.values()) and rate["eraseanything"] < rate["no_erasure"]
    assert ranked.index("eraseanything") < ranked.index("no_erasure")  # ranked by concept_rate, lower first
