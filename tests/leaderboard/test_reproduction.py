import json
from dataclasses import replace

import pytest

from bench.errors import BenchError
from bench.spec import Cell, RunRecord
from leaderboard.claims import load_paper
from leaderboard.reproduction import cache_build_seconds, cache_first, claim_cells, expected_costs
from tests.helpers import run_bench

SCALED = """
paper: scaled-paper
title: A paper with claims at two scales
venue: ICML 2025
methods: {}
defaults: {seeds: 2, scale: cpu-full}
claims:
  - id: small
    kind: bound
    metric: error
    cells: [{method: toy_noisy, task: toy_target}, {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
    expect: {max: 5}
  - id: reduced
    kind: bound
    metric: error
    scale: cpu-reduced
    seeds: 3
    cells: {method: toy_noisy, task: toy_target}
    expect: {max: 5}
  - id: big
    kind: bound
    metric: error
    scale: paper-scale
    seeds: 1
    cells: {method: toy_noisy, task: toy_target, task_config: {dim: 7}}
    expect: {max: 5}
"""


@pytest.fixture
def scaled(tmp_path, toy_registry):
    (tmp_path / "scaled-paper.yaml").write_text(SCALED)
    registry = replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded)
    return registry, load_paper(registry, "scaled-paper")


def test_claim_cells_select_the_scale_and_share_cells(scaled):
    registry, paper = scaled
    cpu = claim_cells([paper], registry, "cpu")
    # small: 2 settings x seeds 0-1; reduced: the default setting at seeds 0-2, of which 0-1 are small's
    assert [(c.method_config["noise"], c.seed) for c in cpu] == [(0.1, 0), (0.1, 1), (0.5, 0), (0.5, 1), (0.1, 2)]
    assert [c.task_config["dim"] for c in claim_cells([paper], registry, "paper")] == [7]
    assert len(claim_cells([paper, paper], registry, "all")) == 6  # a paper twice adds no cell
    assert len(claim_cells([paper], registry, "cpu", seeds=1)) == 2
    with pytest.raises(BenchError, match="allowed: cpu, paper, all"):
        claim_cells([paper], registry, "gpu")


def _cell(task_config: dict, seed: int, method: str = "m") -> Cell:
    return Cell(method, "t", seed, {}, task_config)


def test_cache_first_builds_each_setting_once_before_its_readers():
    a, b = {"x": 1}, {"x": 2}
    cells = [_cell(a, 0, "m1"), _cell(a, 0, "m2"), _cell(a, 1, "m1"), _cell(a, 1, "m2"),
             _cell(b, 0, "m1"), _cell(b, 1, "m1")]
    ordered = cache_first(cells)
    assert ordered == [cells[0], cells[4],  # one per task setting
                       cells[2], cells[5],  # one per setting and seed
                       cells[1], cells[3]]  # readers only


def test_expected_costs_use_the_closest_stored_runs(store):
    def save(cell, wall, status="done"):
        store.save(RunRecord(cell, status, 1, {"e": 1.0}, wall_s=wall), runner="local")

    stored = [_cell({"x": 1}, s) for s in range(3)]
    for cell, wall in zip(stored, (2.0, 4.0, 9.0), strict=True):
        save(cell, wall)
    save(_cell({"x": 1}, 5), 1000.0, status="failed")  # a failure says nothing about the cost
    save(Cell("m", "t", 0, {}, {"x": 3}), 20.0)  # the same method and task in another setting
    wanted = [stored[0], _cell({"x": 1}, 7), _cell({"x": 2}, 0), Cell("other", "u", 0)]
    costs = expected_costs(store, wanted)
    assert costs[stored[0].run_key] == 2.0  # its own run
    assert costs[wanted[1].run_key] == 4.0  # the median of its setting: 2, 4, 9
    assert costs[wanted[2].run_key] == 6.5  # setting unseen: the median of m on t, 2, 4, 9 and 20
    assert costs[wanted[3].run_key] == 4.0  # nothing matching: the median of the estimates 2, 4 and 6.5


def test_cache_build_seconds_counts_builds_of_this_run(tmp_path):
    for name, seconds, finished in (("old", 50.0, 100.0), ("new1", 3.0, 200.0), ("new2", 4.5, 300.0)):
        (tmp_path / "family" / name).mkdir(parents=True)
        (tmp_path / "family" / name / "build.json").write_text(json.dumps({"seconds": seconds,
                                                                           "finished_at": finished}))
    assert cache_build_seconds(150.0, tmp_path) == (2, 7.5)
    assert cache_build_seconds(0.0, tmp_path / "missing") == (0, 0.0)


def _bench(*args, tmp_path):
    return run_bench(*args, db=tmp_path / "b.db")


def test_reproduce_all_dry_run_lists_every_cpu_cell_once(tmp_path, registry):
    from bench.cells import unavailable

    papers = [load_paper(registry, slug) for slug in registry.papers()]
    # every cell this machine can build: a task whose data is not here (urban_cities) is left out, and said so
    expected = [c for c in claim_cells(papers, registry, "cpu") if not unavailable(registry, c.task, c.task_config)]
    run = _bench("reproduce", "--all", "--dry-run", tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith(f"{len(expected)} cells (settings shown where they differ")
    listed = {line.split()[0] for line in run.stdout.splitlines()[:-1] if not line.startswith(" ")}
    assert listed == {c.run_key[:12] for c in expected}
    assert not (tmp_path / "b.db").exists()


@pytest.mark.parametrize("args", [(), ("clipped-sgd-performative", "--all")])
def test_reproduce_needs_one_paper_or_all(tmp_path, args):
    run = _bench("reproduce", *args, tmp_path=tmp_path)
    assert run.returncode == 2 and run.stderr.strip() == "error: give one paper slug or --all (bench list papers)"


def test_one_paper_runs_its_cpu_scale_cells_unless_asked(tmp_path, registry):
    """Paper-scale cells (a GPU and hub models) are never attempted by default: the default scale is cpu."""
    paper = load_paper(registry, "label-smoothing-calibration")
    run = _bench("reproduce", "label-smoothing-calibration", "--dry-run", tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith(f"{len(claim_cells([paper], registry, 'cpu'))} cells ")
    assert "meta-llama" not in run.stdout
    asked = _bench("reproduce", "label-smoothing-calibration", "--scale", "paper", "--dry-run", tmp_path=tmp_path)
    assert "meta-llama/Llama-3.1-8B" in asked.stdout


def test_paper_scale_hub_cells_are_refused_on_cpu_hardware(tmp_path):
    """Claims name no GPU yet, so paper-scale cells run on hardware cpu: those naming hub models need --allow-cpu."""
    run = _bench("reproduce", "label-smoothing-calibration", "--scale", "paper", tmp_path=tmp_path)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "cells on hardware cpu name hub models (meta-llama/Llama-3.1-8B)" in run.stderr
    assert "--allow-cpu" in run.stderr and not (tmp_path / "b.db").exists()
