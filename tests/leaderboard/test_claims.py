import math
from dataclasses import replace

import pytest

from bench.errors import BenchError
from bench.spec import RunRecord
from leaderboard.claims import evaluate_paper, load_paper, paper_cells
from runners.grid import Entry, make_cell

CLAIMS = """
paper: toy-paper
title: A toy paper
venue: ICML 2025
methods:
  toy_noisy: {fidelity: reconstructed, deviations: none}
defaults: {seeds: 3, scale: cpu-full}
claims:
  - id: value-ok
    kind: value
    metric: error
    cells: {method: toy_noisy, task: toy_target}
    paper_value: 2.1
    expect: {rtol: 0.1}
  - id: bound-fails
    kind: bound
    metric: error
    cells: [{method: toy_noisy, task: toy_target}, {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
    expect: {max: 2.5}
  - id: ordering-holds-values-off
    kind: ordering
    metric: error
    cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}, paper_value: 0.1},
            {method: toy_noisy, task: toy_target, paper_value: 2.0}]
    expect: {order: increasing, tolerance: {factor: 2}}
  - id: rate-across-cells
    kind: rate
    metric: error
    x_metric: norm
    cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}},
            {method: toy_noisy, task: toy_target},
            {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
    expect: {slope: -2, tolerance: 0.05}
  - id: rate-of-curve
    kind: rate
    metric: error
    curve: loss
    x_range: [10, 1000]
    cells: {method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}
    expect: {slope: -1, tolerance: 0.01}
  - id: never-run
    kind: bound
    metric: error
    cells: {method: toy_noisy, task: toy_target, task_config: {dim: 7}}
    expect: {max: 1}
  - id: too-few-seeds
    kind: bound
    metric: error
    seeds: 5
    cells: {method: toy_noisy, task: toy_target}
    expect: {max: 10}
"""

# (noise) -> (error per seed, norm): error = norm^-2 exactly, so the cross-cell slope is -2
SETTINGS = {0.1: ([2.0, 2.0, 2.3], 1 / math.sqrt(2.1)), 0.01: ([0.5, 0.6, 0.7], 1 / math.sqrt(0.6)),
            0.5: ([4.0, 4.0, 4.0], 0.5)}


@pytest.fixture
def toy_paper(tmp_path, toy_registry):
    (tmp_path / "toy-paper.yaml").write_text(CLAIMS)
    return replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded)


def _fill(store, registry):
    for noise, (errors, norm) in SETTINGS.items():
        for seed, error in enumerate(errors):
            cell = make_cell(registry, Entry("toy_noisy", {"noise": noise}), Entry("toy_target"), seed)
            curve = [(t, 5.0 / t) for t in (1, 10, 100, 1000, 10000)]  # slope -1 in [10, 1000]
            store.save(RunRecord(cell, "done", 2, {"error": error, "norm": norm}, {"loss": curve}), runner="local")


def test_verdicts_for_each_kind(toy_paper, store):
    _fill(store, toy_paper)
    paper = load_paper(toy_paper, "toy-paper")
    verdicts = {v.claim.id: v for v in evaluate_paper(paper, store, toy_paper)}
    assert verdicts["value-ok"].verdict == "reproduced"  # mean 2.1 vs 2.1
    assert verdicts["value-ok"].ours == [pytest.approx(2.1)]
    assert verdicts["bound-fails"].verdict == "not reproduced"  # noise 0.5 has mean 4 > 2.5
    assert verdicts["ordering-holds-values-off"].verdict == "partially"  # 0.6 vs paper 0.1: off by 6x
    assert verdicts["rate-across-cells"].verdict == "reproduced"
    assert verdicts["rate-across-cells"].ours == [pytest.approx(-2.0)]
    assert verdicts["rate-of-curve"].ours == [pytest.approx(-1.0)]
    assert verdicts["never-run"].verdict == "not run"
    assert verdicts["too-few-seeds"].verdict == "insufficient seeds"
    assert "3 of 5 seeds" in verdicts["too-few-seeds"].detail
    assert all("measured at cpu-full" in v.detail for v in verdicts.values() if v.verdict != "not run")


def test_seed_override_changes_the_requirement(toy_paper, store):
    _fill(store, toy_paper)
    paper = load_paper(toy_paper, "toy-paper")
    verdicts = {v.claim.id: v.verdict for v in evaluate_paper(paper, store, toy_paper, seeds=2)}
    assert verdicts["too-few-seeds"] == "reproduced"


def test_paper_cells_are_unique(toy_paper):
    paper = load_paper(toy_paper, "toy-paper")
    cells = paper_cells(paper, toy_paper)
    assert len(cells) == len({c.run_key for c in cells}) == 3 * 3 + 3 + 2  # 3 settings x 3, dim=7 x 3, seeds 3-4


@pytest.mark.parametrize("typo,message", [
    ("method: toy_noisy, task: toy_target}\n    paper_value: 2.1", None),
    ("method: toy_nosy, task: toy_target}\n    paper_value: 2.1", "unknown method 'toy_nosy'"),
    ("method: toy_noisy, task: toy_targt}\n    paper_value: 2.1", "unknown task 'toy_targt'"),
    ("method: toy_noisy, task: toy_target, method_config: {nois: 1}}\n    paper_value: 2.1", "unknown config key 'nois'"),
])
def test_claims_file_typos_are_caught(tmp_path, toy_registry, typo, message):
    text = CLAIMS.replace("method: toy_noisy, task: toy_target}\n    paper_value: 2.1", typo)
    (tmp_path / "toy-paper.yaml").write_text(text.replace("metric: error\n    cells: {method: toy_noisy, task: toy_target, task_config: {dim: 7}}",
                                                          "metric: eror\n    cells: {method: toy_noisy, task: toy_target, task_config: {dim: 7}}") if message is None else text)
    registry = replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded)
    with pytest.raises(BenchError, match=message or "unknown metric 'eror'"):
        load_paper(registry, "toy-paper")
