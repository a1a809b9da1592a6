import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from bench.cells import Entry, make_cell
from bench.errors import BenchError
from bench.registry import Registry
from bench.spec import RunRecord
from leaderboard.claims import evaluate_paper, load_paper, paper_cells

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
    fragile: flipped under AVX512 kernels
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


def with_claims(tmp_path, toy_registry, text: str) -> Registry:
    """The toy registry reading `text` as the claims file of toy-paper (written under tmp_path)."""
    (tmp_path / "toy-paper.yaml").write_text(text)
    return replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded)


@pytest.fixture
def toy_paper(tmp_path, toy_registry):
    return with_claims(tmp_path, toy_registry, CLAIMS)


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
    # mean 2.1 inside the band [1.89, 2.31], but its interval 2.1 ± 4.303·0.1 = [1.67, 2.53] is not
    assert verdicts["value-ok"].verdict == "underpowered"
    assert verdicts["value-ok"].ours == [pytest.approx(2.1)]
    assert "80 % power needs" in verdicts["value-ok"].detail
    assert verdicts["bound-fails"].verdict == "not reproduced"  # noise 0.5: 4.0 in every seed, surely > 2.5
    assert verdicts["ordering-holds-values-off"].verdict == "partially"  # 0.6 vs paper 0.1: off by 6x
    # per seed, the log-log slope of error against norm across the three settings: their mean and t interval
    norms = np.log([SETTINGS[k][1] for k in (0.01, 0.1, 0.5)])
    slopes = [np.polyfit(norms, np.log([SETTINGS[k][0][s] for k in (0.01, 0.1, 0.5)]), 1)[0] for s in range(3)]
    rate = verdicts["rate-across-cells"]
    assert rate.ours == [pytest.approx(np.mean(slopes))] and rate.evidence.high - rate.evidence.low == pytest.approx(
        2 * T_975_2 * np.std(slopes, ddof=1) / math.sqrt(3))
    assert rate.verdict == "underpowered"  # [-2.45, -1.57] straddles the band -2 ± 0.05
    assert verdicts["rate-of-curve"].ours == [pytest.approx(-1.0)]
    assert verdicts["rate-of-curve"].verdict == "reproduced"  # -1 exactly in every seed
    assert verdicts["never-run"].verdict == "not run"
    assert verdicts["too-few-seeds"].verdict == "insufficient seeds"
    assert "3 of 5 seeds" in verdicts["too-few-seeds"].detail
    assert all("measured at cpu-full" in v.detail for v in verdicts.values() if v.verdict != "not run")
    assert verdicts["value-ok"].detail.endswith("; fragile: flipped under AVX512 kernels")  # said with the verdict
    assert not any("fragile" in v.detail for cid, v in verdicts.items() if cid != "value-ok")


def test_runs_of_an_older_task_version_are_not_judged(toy_paper, store):
    """toy_target declares version 2: runs stored under version 1 (before its world or scoring changed) are stale,
    so the claim is "not run", not judged on what the task no longer computes."""
    _fill(store, toy_paper)
    with store.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE runs SET task_version = 1")
    paper = load_paper(toy_paper, "toy-paper")
    verdicts = {v.claim.id: v for v in evaluate_paper(paper, store, toy_paper)}
    assert {v.verdict for v in verdicts.values()} == {"not run"}
    assert all(v.runs_found == 0 for v in verdicts.values())


def test_a_claim_whose_cells_failed_says_why_it_is_not_run(toy_paper, store):
    cell = make_cell(toy_paper, Entry("toy_noisy"), Entry("toy_target", {"dim": 7}), 0)  # never-run's first cell
    error = "Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: the world did not build"
    store.save(RunRecord(cell, "failed", 2, error=error), runner="local")
    paper = load_paper(toy_paper, "toy-paper")
    verdict = next(v for v in evaluate_paper(paper, store, toy_paper) if v.claim.id == "never-run")
    assert verdict.verdict == "not run"
    assert "1 of its runs did not finish (failed: RuntimeError: the world did not build)" in verdict.detail


def test_a_paper_scale_claim_not_run_names_what_it_needs(registry, store):
    paper = load_paper(registry, "label-smoothing-calibration")
    (verdict,) = [v for v in evaluate_paper(paper, store, registry) if v.claim.scale == "paper-scale"]
    assert verdict.verdict == "not run"
    assert verdict.detail.startswith("paper-scale: needs a GPU and meta-llama/Llama-3.1-8B; run it on such a machine "
                                     "with `bench reproduce label-smoothing-calibration --scale paper`")


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
    ("method: toy_noisy, task: toy_target, method_config: {nois: 1}}\n    paper_value: 2.1",
     "unknown config key 'nois'"),
])
def test_claims_file_typos_are_caught(tmp_path, toy_registry, typo, message):
    text = CLAIMS.replace("method: toy_noisy, task: toy_target}\n    paper_value: 2.1", typo)
    registry = with_claims(tmp_path, toy_registry, text.replace("metric: error\n    cells: {method: toy_noisy, "
                                                                "task: toy_target, task_config: {dim: 7}}",
                                                                "metric: eror\n    cells: {method: toy_noisy, "
                                                                "task: toy_target, task_config: {dim: 7}}")
                                                   if message is None else text)
    with pytest.raises(BenchError, match=message or "unknown metric 'eror'"):
        load_paper(registry, "toy-paper")


TOY_HEADER = """
paper: toy-paper
title: A toy paper
methods:
  toy_noisy: {fidelity: reconstructed, deviations: none}
"""

PER_SEED = TOY_HEADER + """defaults: {seeds: 3, scale: cpu-full, kind: ordering, metric: error}
up: &up [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target}]
down: &down [{method: toy_noisy, task: toy_target}, {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
claims:
  - {id: seeds-all, cells: *up, expect: {order: increasing, seeds_holding: 3}}
  - {id: beats, cells: *up, expect: {order: increasing}}
  - {id: reversed, cells: *down, expect: {order: decreasing}}
  - {id: reversed-non-inferior, cells: *down, expect: {order: decreasing, min_gap: -1.0}}
  - {id: min-gap-one, cells: *up, expect: {order: increasing, min_gap: 1.0}}
  - {id: min-gap-two, cells: *up, expect: {order: increasing, min_gap: 2.0}}
  - {id: min-gap-every-seed, cells: *up, expect: {order: increasing, min_gap: 1.45, seeds_holding: 3}}
  - {id: non-inferior-by-two, cells: *down, expect: {order: decreasing, min_gap: -2.0}}
  - {id: means-reverse-but-seed-wins, cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}, {method: toy_noisy, task: toy_target, method_config: {noise: 0.2}}], expect: {order: decreasing, seeds_holding: 1}}
"""  # noqa: E501

# (noise) -> errors for seeds 0, 1, 2. Paired gaps (increasing) 0.01 -> 0.1: 1.5, 1.4, 1.6: mean 1.5, sd 0.1,
# SE 0.0577, t(0.975, 2) = 4.3027: the 95 % interval [1.2516, 1.7484]. 0.1 -> 0.5 (decreasing, as claimed): -2.0,
# -2.0, -1.7: mean -1.9, SE 0.1, interval [-2.3303, -1.4697]. 0.5 -> 0.2 (decreasing): -0.5, +0.5, -0.6: mean -0.2,
# SE 0.3512, interval [-1.711, 1.311]: holds in seed 1 only.
PER_SEED_VALUES = {0.01: [0.5, 0.6, 0.7], 0.1: [2.0, 2.0, 2.3], 0.5: [4.0, 4.0, 4.0], 0.2: [4.5, 3.5, 4.6]}
T_975_2 = 4.302652729911275


def _fill_values(store, registry, table):
    for noise, errors in table.items():
        for seed, error in enumerate(errors):
            cell = make_cell(registry, Entry("toy_noisy", {"noise": noise}), Entry("toy_target"), seed)
            store.save(RunRecord(cell, "done", 2, {"error": error, "norm": 1.0}, {}), runner="local")  # toy_target v2


def _per_seed_verdicts(tmp_path, toy_registry, store, table, text=PER_SEED, seeds=None):
    registry = with_claims(tmp_path, toy_registry, text)
    _fill_values(store, registry, table)
    return {v.claim.id: v for v in evaluate_paper(load_paper(registry, "toy-paper"), store, registry, seeds=seeds)}


def _alone(tmp_path, toy_registry, store, table, claim: str, seeds=None):
    """The verdict of a paper holding this one claim (a Holm family of one: its raw p decides)."""
    text = PER_SEED.split("claims:")[0] + "claims:\n  - " + claim + "\n"
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, table, text=text, seeds=seeds)
    (verdict,) = verdicts.values()
    return verdict


def test_a_claim_is_reproduced_when_the_paired_interval_clears_its_margin(tmp_path, toy_registry, store):
    v = _alone(tmp_path, toy_registry, store, PER_SEED_VALUES, "{id: c, cells: *up, expect: {order: increasing}}")
    half = T_975_2 * 0.1 / math.sqrt(3)
    assert v.verdict == "reproduced"
    assert (v.evidence.estimate, v.evidence.low, v.evidence.high) == pytest.approx((1.5, 1.5 - half, 1.5 + half))
    assert v.evidence.n == 3 and v.evidence.method == "t" and v.evidence.threshold == 0.0
    assert "95 % t interval [1.25, 1.75], n=3" in v.detail
    # p: twice the one-sided t tail of 1.5 / 0.0577 = 25.98 on 2 degrees of freedom
    assert v.evidence.p == pytest.approx(2 * stats.t.sf(1.5 / (0.1 / math.sqrt(3)), 2))


@pytest.mark.parametrize("expect, verdict", [
    ("{order: increasing, min_gap: 1.0}", "reproduced"),         # [1.25, 1.75] above 1
    ("{order: increasing, min_gap: 2.0}", "not reproduced"),     # [1.25, 1.75] below 2
    ("{order: increasing, min_gap: 1.45}", "underpowered"),      # [1.25, 1.75] straddles 1.45
    ("{order: decreasing}", "not reproduced"),                   # the gap as claimed, [-1.75, -1.25], below 0
    ("{order: increasing, seeds_holding: 3}", "reproduced"),     # 3 of 3 seeds, and the interval above 0
    ("{order: increasing, min_gap: 1.2, seeds_holding: 3}", "reproduced"),
])
def test_the_interval_decides_against_the_margin(tmp_path, toy_registry, store, expect, verdict):
    v = _alone(tmp_path, toy_registry, store, PER_SEED_VALUES, f"{{id: c, cells: *up, expect: {expect}}}")
    assert v.verdict == verdict, v.detail


def test_an_undecided_claim_is_underpowered_and_names_the_seeds_that_would_decide_it(tmp_path, toy_registry, store):
    # decreasing 0.1 -> 0.5, non-inferiority at -2: gaps -2.0, -2.0, -1.7 (mean -1.9, sd 0.1732): the interval
    # [-2.33, -1.47] straddles -2. Effect 0.1, sd 0.1732: d = 0.577, and a two-sided t-test at 0.05 needs 26 seeds
    # for 80 % power (noncentral t; Cohen's table gives 26 for d = 0.58)
    v = _alone(tmp_path, toy_registry, store, PER_SEED_VALUES,
               "{id: c, cells: *down, expect: {order: decreasing, min_gap: -2.0}}")
    assert v.verdict == "underpowered"
    assert v.evidence.seeds_needed == 26
    assert "80 % power needs 26 seeds" in v.detail


def test_seeds_holding_stays_an_additional_condition(tmp_path, toy_registry, store):
    # per-seed gaps 1.5, 1.4, 1.6 against min_gap 1.45: seed 1 misses it; the interval [1.25, 1.75] straddles 1.45
    v = _alone(tmp_path, toy_registry, store, PER_SEED_VALUES,
               "{id: c, cells: *up, expect: {order: increasing, min_gap: 1.45, seeds_holding: 3}}")
    assert v.verdict == "underpowered" and "holds in 2 of 3 seeds (needs ≥ 3)" in v.detail
    # 5 seeds, gaps 1, 1, 1, 1, -0.01: mean 0.798, sd 0.4517, interval [0.237, 1.359] above 0, yet one seed loses:
    # the share asked is not met, so the claim is not reproduced whatever the interval says
    store2 = type(store).open(f"sqlite:///{tmp_path}/second.db")
    table = {0.01: [0.0] * 5, 0.1: [1.0, 1.0, 1.0, 1.0, -0.01]}
    v = _alone(tmp_path, toy_registry, store2, table,
               "{id: c, seeds: 5, cells: *up, expect: {order: increasing, seeds_holding: 5}}")
    assert v.evidence.low == pytest.approx(0.798 - stats.t.ppf(0.975, 4) * 0.45171 / math.sqrt(5), abs=1e-4)
    assert v.evidence.low > 0 and v.verdict == "not reproduced" and "holds in 4 of 5 seeds (needs ≥ 5)" in v.detail


def test_holm_adjusts_the_papers_claims_together(tmp_path, toy_registry, store):
    """min-gap-one alone: t = 0.5 / 0.0577 = 8.66 on 2 df, p = 0.0131: reproduced. In the paper's family of nine
    claims (two decided exactly at p = 0 and the rest ranked by p), Holm multiplies its p by the claims not yet
    rejected, which takes it above 0.05: underpowered, with the adjusted level shown."""
    alone = _alone(tmp_path, toy_registry, store, PER_SEED_VALUES,
                   "{id: c, cells: *up, expect: {order: increasing, min_gap: 1.0}}")
    p = 2 * stats.t.sf(0.5 / (0.1 / math.sqrt(3)), 2)
    assert alone.verdict == "reproduced" and alone.evidence.p == pytest.approx(p)
    store2 = type(store).open(f"sqlite:///{tmp_path}/second.db")
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store2, PER_SEED_VALUES)
    family = verdicts["min-gap-one"].evidence
    assert family.family == 9 and family.p == pytest.approx(p) and family.p_adjusted > 0.05
    assert verdicts["min-gap-one"].verdict == "underpowered"
    assert f"Holm-adjusted {family.p_adjusted:.2g} over 9 claims" in verdicts["min-gap-one"].detail
    assert verdicts["min-gap-two"].verdict == "underpowered"     # t = -8.66: the same p, on the other side
    assert verdicts["beats"].verdict == "reproduced"             # t = 26: p = 0.0015, ×9 still below 0.05


def test_a_seed_override_keeps_the_share_of_seeds_and_one_seed_gives_no_interval(tmp_path, toy_registry, store):
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, PER_SEED_VALUES, seeds=2)
    assert "holds in 2 of 2 seeds (needs ≥ 2)" in verdicts["seeds-all"].detail  # 3 of 3 -> 2 of 2
    assert "holds in 1 of 2 seeds (needs ≥ 1)" in verdicts["means-reverse-but-seed-wins"].detail  # 1 of 3 -> ceil(2/3)
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, PER_SEED_VALUES, seeds=1)
    assert verdicts["beats"].verdict == "underpowered"
    assert "no interval from 1 value(s)" in verdicts["beats"].detail and "needs ≥ 2 seeds" in verdicts["beats"].detail


TRACKING = TOY_HEADER + """defaults: {seeds: 3, scale: cpu-full, kind: tracking, metric: error}
settings: &settings [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}},
                     {method: toy_noisy, task: toy_target, method_config: {noise: 0.1}},
                     {method: toy_noisy, task: toy_target, method_config: {noise: 0.2}},
                     {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
claims:
  - {id: norm-tracks-better, cells: *settings, x_metric: norm, expect: {against: spread, min_advantage: 0.5}}
  - {id: spread-tracks-better, cells: *settings, x_metric: spread, expect: {against: norm, min_advantage: 0.05}}
  - {id: norm-tracks-perfectly, cells: *settings, x_metric: norm, expect: {against: spread, min_advantage: 1.0}}
"""


def test_tracking_is_the_gap_between_two_absolute_correlations_across_every_run(tmp_path, toy_registry, store):
    """12 runs (4 settings x 3 seeds), run i: error -3, -1, 1, 3 in turn; norm = 2 error + 1 (|r| = 1 exactly);
    spread 1, -1, -1, 1 in turn (Σ error·spread = -3 + 1 - 1 + 3 = 0 and both are centred: r = 0 exactly)."""
    registry = with_claims(tmp_path, toy_registry, TRACKING)
    for g, noise in enumerate((0.01, 0.1, 0.2, 0.5)):
        for seed in range(3):
            i = 3 * g + seed
            error, spread = (-3.0, -1.0, 1.0, 3.0)[i % 4], (1.0, -1.0, -1.0, 1.0)[i % 4]
            cell = make_cell(registry, Entry("toy_noisy", {"noise": noise}), Entry("toy_target"), seed)
            store.save(RunRecord(cell, "done", 2, {"error": error, "norm": 2 * error + 1, "spread": spread}, {}),
                       runner="local")
    verdicts = {v.claim.id: v for v in evaluate_paper(load_paper(registry, "toy-paper"), store, registry)}
    better = verdicts["norm-tracks-better"]
    assert better.ours == [pytest.approx(1.0), pytest.approx(0.0, abs=1e-12)]
    assert "over 12 runs" in better.ours_text and "advantage 1 (needs ≥ 0.5) across 4 settings" in better.detail
    # the advantage is 1 on these 12 runs, but resampling the runs (spread's ±1 pattern is easily correlated with
    # error in a resample) gives a 95 % bootstrap interval [0.11, 1]: twelve runs cannot show it beyond 0.5
    assert better.verdict == "underpowered" and better.evidence.method == "bootstrap"
    assert better.evidence.high == pytest.approx(1.0) and 0 < better.evidence.low < 0.5
    assert verdicts["spread-tracks-better"].verdict == "not reproduced"       # advantage −1, at most −0.11 resampled
    assert verdicts["norm-tracks-perfectly"].verdict == "underpowered"        # 1 ≥ 1 inclusive, resamples below


SETTING = "\n                     {method: toy_noisy, task: toy_target, method_config: {noise: %s}}"
TWO_SETTINGS = "{noise: 0.1}}," + SETTING % 0.2 + "," + SETTING % 0.5 + "]"


@pytest.mark.parametrize("old, new, message", [
    ("expect: {against: spread, min_advantage: 0.5}", "expect: {min_advantage: 0.5}", "needs x_metric"),
    (TWO_SETTINGS, "{noise: 0.1}}]", ">= 3 settings"),
])
def test_a_tracking_claim_needs_its_metrics_and_three_settings(tmp_path, toy_registry, old, new, message):
    assert old in TRACKING
    registry = with_claims(tmp_path, toy_registry, TRACKING.replace(old, new, 1))
    with pytest.raises(BenchError, match=message):
        load_paper(registry, "toy-paper")

TIES = PER_SEED + """
  - {id: beats-by-zero, cells: *up, expect: {order: increasing, min_gap: 0}}
  - {id: within-slack, cells: *up, expect: {order: increasing, slack: 0.1}}
  - {id: not-worse-by-one, cells: *up, expect: {order: increasing, min_gap: -1.0}}
"""


def test_a_tie_fails_a_beats_claim_and_holds_a_non_inferiority_one(tmp_path, toy_registry, store):
    table = {0.01: [2.0, 3.0, 4.0], 0.1: [2.0, 3.0, 4.0]}  # equal in every seed: gap 0 exactly, no spread
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, table, text=TIES)
    for claim in ("beats", "beats-by-zero", "seeds-all", "min-gap-one"):
        assert verdicts[claim].verdict == "not reproduced", claim
    assert "holds in 0 of 3 seeds" in verdicts["seeds-all"].detail
    assert verdicts["within-slack"].verdict == "reproduced"      # a tolerance: gap 0 ≥ −10 % of 3.0
    assert verdicts["not-worse-by-one"].verdict == "reproduced"  # non-inferiority: gap 0 ≥ −1


def test_a_strict_win_by_the_smallest_margin_still_counts(tmp_path, toy_registry, store):
    table = {0.01: [2.0, 3.0, 4.0], 0.1: [2.001, 3.001, 4.001]}  # the same gap in every seed: no spread
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, table, text=TIES)
    for claim in ("beats", "beats-by-zero", "seeds-all"):
        assert verdicts[claim].verdict == "reproduced", claim


@pytest.mark.parametrize("expect,message", [
    ("{order: increasing, seeds_holding: 4}", "seeds_holding must be an integer in 1..3"),
    ("{order: increasing, seeds_holding: 0.5}", "seeds_holding must be an integer"),
    ("{order: increasing, margin_se: 1}", "margin_se is retired"),
    ("{order: increasing, min_gap: 0.1, slack: 0.1}", "one of slack, min_gap, min_ratio"),
    ("{order: increasing, min_ratio: 2, min_gap: 0.1}", "one of slack, min_gap, min_ratio"),
    ("{order: increasing, min_ratio: 0.5}", "min_ratio must be a number above 1"),
    ("{order: increasing, seeds: 4}", "unknown expect key"),
    ("{order: upwards}", "order must be increasing or decreasing"),
])
def test_bad_per_seed_criteria_are_caught(tmp_path, toy_registry, expect, message):
    text = PER_SEED.replace("{order: increasing, seeds_holding: 3}", expect)
    registry = with_claims(tmp_path, toy_registry, text)
    with pytest.raises(BenchError, match=message):
        load_paper(registry, "toy-paper")


CONTROLLED = PER_SEED + """
controls:
  - id: world-shows-it
    cells: *up
    expect: {order: increasing, min_gap: 1.0}
    gates: [seeds-all, reversed]
  - id: world-is-null
    cells: *down
    expect: {order: increasing}
    gates: [beats]
"""


def test_a_failed_positive_control_makes_its_claims_inconclusive(tmp_path, toy_registry, store):
    # world-shows-it: gap interval [1.25, 1.75] above 1 passes; world-is-null: 2.1 -> 4.0 increasing, passes too
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, PER_SEED_VALUES, text=CONTROLLED)
    assert verdicts["world-shows-it"].verdict == "reproduced" and verdicts["world-shows-it"].claim.role == "control"
    assert verdicts["seeds-all"].verdict == "reproduced" and verdicts["reversed"].verdict == "not reproduced"
    # the control fails when its ordering is reversed: 4.0 -> 2.1 is not increasing
    flipped = CONTROLLED.replace("cells: *down\n    expect: {order: increasing}",
                                 "cells: *down\n    expect: {order: decreasing, min_gap: 3}")
    store2 = type(store).open(f"sqlite:///{tmp_path}/second.db")
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store2, PER_SEED_VALUES, text=flipped)
    assert verdicts["world-is-null"].verdict == "not reproduced"   # gap interval [-2.33, -1.47] below 3
    gated = verdicts["beats"]
    assert gated.verdict == "inconclusive"
    assert "positive control world-is-null failed" in gated.detail and "own criterion gave reproduced" in gated.detail
    assert verdicts["seeds-all"].verdict == "reproduced"            # gated by the control that passed


def test_a_positive_control_whose_null_also_passes_makes_its_claims_inconclusive(tmp_path, toy_registry, store):
    """world-shows-it separates *up (0.6 -> 2.1, gap 1.5 >= 1); its null *down separates too (2.1 -> 4.0, gap 1.9):
    the metric does not tell the planted effect from its absence, so the world cannot show the effect."""
    nulled = CONTROLLED.replace("    gates: [seeds-all, reversed]\n",
                                "    gates: [seeds-all, reversed]\n"
                                "    control: {why: the effect removed, cells: *down}\n")
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, PER_SEED_VALUES, text=nulled)
    assert verdicts["world-shows-it"].verdict == "uninformative" and verdicts["world-shows-it"].control == "passes"
    gated = verdicts["seeds-all"]
    assert gated.verdict == "inconclusive" and "positive control world-shows-it failed" in gated.detail
    # a null that fails as it must keeps the control, and its claims, as they were
    failing = nulled.replace("{why: the effect removed, cells: *down}", "{why: the effect removed, cells: *up2}")
    failing = failing.replace("claims:", "_up2: &up2 [{method: toy_noisy, task: toy_target}, "
                              "{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}]\nclaims:", 1)
    store2 = type(store).open(f"sqlite:///{tmp_path}/second.db")
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store2, PER_SEED_VALUES, text=failing)
    assert (verdicts["world-shows-it"].verdict, verdicts["world-shows-it"].control) == ("reproduced", "fails")
    assert verdicts["seeds-all"].verdict == "reproduced"


def test_a_control_not_run_leaves_the_verdict_and_says_so(tmp_path, toy_registry, store):
    table = {k: v for k, v in PER_SEED_VALUES.items() if k != 0.5}  # the *down cells' second group never ran
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, table, text=CONTROLLED)
    assert verdicts["world-is-null"].verdict == "not run"
    assert verdicts["beats"].verdict == "reproduced"
    assert verdicts["beats"].detail.startswith("positive control world-is-null not run yet")


def test_controls_are_not_counted_among_the_claims(tmp_path, toy_registry, store):
    from leaderboard.claims import claims_only, overview

    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, PER_SEED_VALUES, text=CONTROLLED)
    assert ({v.claim.id for v in claims_only(list(verdicts.values()))}
            == set(verdicts) - {"world-shows-it", "world-is-null"})
    registry = replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded)
    (row,) = overview(store, registry)
    assert sum(row.counts.values()) == 9 and "inconclusive" in row.counts


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("gates: [beats]", "gates: [no-such-claim]"), "gates unknown claim"),
    (lambda t: t.replace("gates: [beats]", "gates: []"), "needs gates"),
    (lambda t: t.replace("id: world-is-null", "id: seeds-all"), "ids must be unique"),
    (lambda t: t.replace("{id: seeds-all, cells: *up,", "{id: seeds-all, gates: [beats], cells: *up,"),
     "gates belongs to a control"),
])
def test_bad_controls_are_caught(tmp_path, toy_registry, edit, message):
    registry = with_claims(tmp_path, toy_registry, edit(CONTROLLED))
    with pytest.raises(BenchError, match=message):
        load_paper(registry, "toy-paper")


def test_a_check_is_judged_shown_with_its_reason_and_not_counted(tmp_path, toy_registry, store):
    from leaderboard.claims import claims_only

    text = PER_SEED + """
checks:
  - {id: share-by-construction, why: the code sets it, kind: bound, cells: *up, expect: {max: 3.0}}
"""
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, PER_SEED_VALUES, text=text)
    check = verdicts["share-by-construction"]
    assert check.verdict == "reproduced" and check.claim.role == "check"   # means 0.6 and 2.1 are ≤ 3
    assert check.detail.startswith("sanity check, cannot fail by construction (the code sets it)")
    assert "share-by-construction" not in {v.claim.id for v in claims_only(list(verdicts.values()))}


@pytest.mark.parametrize("entry,message", [
    ("checks:\n  - {id: c, kind: bound, cells: *up, expect: {max: 3.0}}", "a check needs why"),
    ("claims:\n  - {id: c, why: because, kind: bound, cells: *up, expect: {max: 3.0}}", "why belongs to a check"),
])
def test_bad_checks_are_caught(tmp_path, toy_registry, entry, message):
    text = PER_SEED + "\n" + entry.replace("claims:\n", "") if entry.startswith("claims") else PER_SEED + "\n" + entry
    registry = with_claims(tmp_path, toy_registry, text)
    with pytest.raises(BenchError, match=message):
        load_paper(registry, "toy-paper")


NEGATIVE = PER_SEED.split("claims:")[0] + """claims:
  - id: beats-with-a-control-that-fails
    cells: *up
    expect: {order: increasing, min_gap: 1.0}
    control: {why: the noise that makes the gap is gone, cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target, method_config: {noise: 0.02}}]}
  - id: beats-with-a-control-that-passes
    cells: *up
    expect: {order: increasing, min_gap: 1.0}
    control: {why: any larger noise also wins, cells: *down}
  - id: fails-anyway
    cells: *up
    expect: {order: increasing, min_gap: 5.0}
    control: {why: any larger noise also wins, cells: *down}
  - id: control-never-run
    cells: *up
    expect: {order: increasing}
    control: {why: never run, cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.3}}, {method: toy_noisy, task: toy_target}]}
  - {id: no-control-possible, cells: *up, expect: {order: increasing}, control_none: an identity of the metric}
"""  # noqa: E501


def test_a_claim_that_also_holds_on_its_negative_control_is_uninformative(tmp_path, toy_registry, store):
    # claim: 0.6 -> 2.1 (gap 1.5 >= 1). Controls: 0.01 -> 0.02 with errors 0.6 -> 0.65 (gap 0.05 < 1: fails as it
    # must); *down: 2.1 -> 4.0 (gap 1.9 >= 1: passes, so that claim is uninformative)
    table = {**PER_SEED_VALUES, 0.02: [0.55, 0.65, 0.75]}
    verdicts = _per_seed_verdicts(tmp_path, toy_registry, store, table, text=NEGATIVE)
    good = verdicts["beats-with-a-control-that-fails"]
    assert good.verdict == "reproduced" and good.control == "fails"
    assert good.detail.startswith("negative control fails as it must (toy_noisy(noise=0.01): 0.6 , "
                                  "toy_noisy(noise=0.02)")
    assert "(increasing) ≥ 1: 0.05, 95 % t interval [0.05, 0.05]" in good.detail
    bad = verdicts["beats-with-a-control-that-passes"]
    assert bad.verdict == "uninformative" and bad.control == "passes"
    assert "also holds on its negative control" in bad.detail and ": 1.9, 95 % t interval [1.47, 2.33]" in bad.detail
    assert "own criterion gave reproduced" in bad.detail
    # a claim that fails on its own stays not reproduced whatever its control gives
    assert verdicts["fails-anyway"].verdict == "not reproduced" and verdicts["fails-anyway"].control == "fails"
    pending = verdicts["control-never-run"]
    assert pending.verdict == "reproduced" and pending.control == "not run"
    assert "`bench reproduce --controls` runs it" in pending.detail
    assert verdicts["no-control-possible"].control == "none" and verdicts["no-control-possible"].claim.control_none


def test_negative_control_cells_are_run_with_the_claims_seeds(tmp_path, toy_registry):
    registry = with_claims(tmp_path, toy_registry, NEGATIVE)
    paper = load_paper(registry, "toy-paper")
    def noises(cells):
        return {c.method_config["noise"] for c in cells}
    assert noises(paper_cells(paper, registry, controls=False)) == {0.01, 0.1}
    with_controls = paper_cells(paper, registry)
    assert noises(with_controls) == {0.01, 0.1, 0.5, 0.02, 0.3}
    assert {c.seed for c in with_controls if c.method_config["noise"] == 0.3} == {0, 1, 2}


@pytest.mark.parametrize("expect, verdict", [
    ("{order: increasing, min_ratio: 3}", "reproduced"),       # log ratios 1.2528, 1.2809, 1.2238 above log 3
    ("{order: increasing, min_ratio: 4}", "not reproduced"),   # ... below log 4 = 1.386
    ("{order: increasing, min_ratio: 3.4}", "underpowered"),   # log 3.4 = 1.2238 inside [1.182, 1.323]
])
def test_min_ratio_on_the_per_seed_log_ratios(tmp_path, toy_registry, store, expect, verdict):
    table = {0.01: [1.0, 1.0, 1.0], 0.1: [3.5, 3.6, 3.4]}
    v = _alone(tmp_path, toy_registry, store, table, f"{{id: c, cells: *up, expect: {expect}}}")
    logs = np.log([3.5, 3.6, 3.4])
    half = T_975_2 * np.std(logs, ddof=1) / math.sqrt(3)
    assert (v.evidence.low, v.evidence.high) == pytest.approx((logs.mean() - half, logs.mean() + half))
    assert v.verdict == verdict, v.detail


def test_a_decreasing_ratio_reads_the_first_over_the_second(tmp_path, toy_registry, store):
    table = {0.01: [1.0, 1.0, 1.0], 0.1: [3.5, 3.6, 3.4]}
    v = _alone(tmp_path, toy_registry, store, table, "{id: c, cells: [{method: toy_noisy, task: toy_target}, "
               "{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}], "
               "expect: {order: decreasing, min_ratio: 3}}")
    assert v.verdict == "reproduced"


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("control_none: an identity of the metric", "control_none: ''"), "control_none must say why"),
    (lambda t: t.replace("    control: {why: never run,", "    control_none: x\n    control: {why: never run,"),
     "not both"),
    (lambda t: t.replace("control: {why: never run, cells:", "control: {cells:"), "control needs exactly why"),
    (lambda t: t.replace("method_config: {noise: 0.3}", "method_config: {nois: 0.3}"), "unknown config key 'nois'"),
    (lambda t: t + "checks:\n  - {id: chk, why: code, cells: *up, expect: {order: increasing}, control_none: x}\n",
     "control_none belongs to a claim, and a check has no control"),
])
def test_bad_negative_controls_are_caught(tmp_path, toy_registry, edit, message):
    registry = with_claims(tmp_path, toy_registry, edit(NEGATIVE))
    with pytest.raises(BenchError, match=message):
        paper_cells(load_paper(registry, "toy-paper"), registry, 1)


def test_a_rate_across_settings_fails_when_a_setting_reports_no_value(tmp_path, toy_registry, store):
    """A run that stops short (a budget spent) reports no count; the slope must not quietly use the other settings."""
    text = PER_SEED + """
  - id: slope-with-a-hole
    kind: rate
    x_metric: norm
    cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target},
            {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
    expect: {slope: 0, tolerance: 10}
"""
    registry = with_claims(tmp_path, toy_registry, text)
    for noise, errors in PER_SEED_VALUES.items():
        for seed, error in enumerate(errors):
            cell = make_cell(registry, Entry("toy_noisy", {"noise": noise}), Entry("toy_target"), seed)
            metrics = {"norm": 1.0 + noise} if noise == 0.5 else {"error": error, "norm": 1.0 + noise}
            store.save(RunRecord(cell, "done", 2, metrics, {}), runner="local")  # toy_target v2
    verdict = next(v for v in evaluate_paper(load_paper(registry, "toy-paper"), store, registry)
                   if v.claim.id == "slope-with-a-hole")
    assert verdict.verdict == "not reproduced"  # the two other settings alone would fit some slope within ±10
    assert "no error / norm for toy_noisy(noise=0.5)" in verdict.detail


# Worlds whose positive control is still to be written (none now: every paper with CPU claims has one); an entry says
# why, and fails the test once the paper's claims file declares one.
WITHOUT_POSITIVE_CONTROL: dict[str, str] = {}
# A positive control whose null is the control's own cells with its one factor removed needs no cells of its own;
# these say why they have none.
WITHOUT_NULL = {
    "long-context-training-shows-a-gain": "its null would be SFT at 4 chunks against itself (the factor, the training "
                                          "length, removed): a tie by construction, so no cells are declared",
    "in-range-training-repairs-length-prediction": "its null would be plain on lengths 1-10 against itself (the "
                                                   "factor, the training range, removed): a tie by construction",
    **{control: "its null would be its own baseline (random-label DPO, or π_ref) against itself: a tie by "
                "construction" for control in ("learned-reward-correlates-with-r-star",
                                                "bandit-learned-reward-correlates-with-r-star",
                                                "bandit-preferences-raise-the-frontier")},
}


@pytest.mark.parametrize("slug", Registry.discover().papers())
def test_every_cpu_world_has_a_positive_control_with_a_null(slug):
    """A "not reproduced" measured in a world that could not show the effect says nothing about the paper: every
    paper with CPU-scale claims declares a positive control, each with a null that must fail, gating the claims
    measured in its world."""
    from leaderboard.claims import CPU_SCALES

    registry = Registry.discover()
    paper = load_paper(registry, slug)
    controls = [c for c in paper.claims if c.role == "control"]
    cpu_claims = [c for c in paper.claims if c.role == "claim" and c.scale in CPU_SCALES]
    if slug in WITHOUT_POSITIVE_CONTROL:
        if controls:
            pytest.fail(f"{slug} declares a positive control now: remove it from WITHOUT_POSITIVE_CONTROL")
        pytest.xfail(WITHOUT_POSITIVE_CONTROL[slug])
    assert not cpu_claims or controls, f"{slug}: CPU-scale claims without a positive control of their world"
    for control in controls:
        assert control.control or control.id in WITHOUT_NULL, f"{control.id}: a positive control needs its null"
        assert set(control.gates) <= {c.id for c in cpu_claims}




SWITCHED = """
paper: toy-paper
title: A toy paper
methods:
  toy_shrunk: {fidelity: reconstructed, deviations: none}
  toy_noisy: {fidelity: reconstructed, deviations: none}
defaults: {seeds: 3, scale: cpu-full, kind: ordering, metric: error}
claims:
  - id: shrinking-helps
    cells: [{method: toy_noisy, task: toy_target}, {method: toy_shrunk, task: toy_target}]
    expect: {order: decreasing}
    control_none: the switched-off run is its control
  - id: shrinking-keeps-the-norm
    metric: norm
    no_harm: true
    cells: [{method: toy_noisy, task: toy_target}, {method: toy_shrunk, task: toy_target}]
    expect: {order: decreasing, min_gap: -0.5}
    control_none: a side effect
"""


def _fill_switched(store, registry, shrunk_off):
    """toy_noisy errors 2.0, 2.1, 2.2; toy_shrunk (shrink 0.9) 0.2, 0.25, 0.2; toy_shrunk at shrink 0 `shrunk_off`
    (None: never run); the norm 1.0 everywhere."""
    rows = [(Entry("toy_noisy"), [2.0, 2.1, 2.2]), (Entry("toy_shrunk"), [0.2, 0.25, 0.2])]
    if shrunk_off is not None:
        rows.append((Entry("toy_shrunk", {"shrink": 0.0}), shrunk_off))
    for entry, errors in rows:
        for seed, error in enumerate(errors):
            cell = make_cell(registry, entry, Entry("toy_target"), seed)
            store.save(RunRecord(cell, "done", 2, {"error": error, "norm": 1.0}, {}), runner="local")


@pytest.mark.parametrize("shrunk_off, verdict, switched", [
    ([2.0, 2.1, 2.2], "reproduced", "fails"),     # switched off it is toy_noisy again: no gap, the claim fails
    ([1.0, 1.1, 1.0], "uninformative", "holds"),  # still lower switched off: the shrinking is not what wins
    (None, "reproduced", "not run"),
])
def test_a_claim_is_judged_again_with_the_credited_method_switched_off(tmp_path, toy_registry, store, shrunk_off,
                                                                       verdict, switched):
    registry = with_claims(tmp_path, toy_registry, SWITCHED)
    _fill_switched(store, registry, shrunk_off)
    verdicts = {v.claim.id: v for v in evaluate_paper(load_paper(registry, "toy-paper"), store, registry)}
    v = verdicts["shrinking-helps"]
    assert (v.verdict, v.switched) == (verdict, switched), v.detail
    if switched == "holds":
        assert "still holds with the method switched off (shrink = 0: toy_shrunk(shrink=0.0)" in v.detail
    if switched == "not run":
        assert "switched off not run yet (shrink = 0: toy_shrunk(shrink=0.0))" in v.detail


def test_a_no_harm_claim_is_its_own_section_and_never_switched(tmp_path, toy_registry, store):
    from leaderboard.claims import overview

    registry = with_claims(tmp_path, toy_registry, SWITCHED)
    _fill_switched(store, registry, [1.0, 1.1, 1.0])
    verdicts = {v.claim.id: v for v in evaluate_paper(load_paper(registry, "toy-paper"), store, registry)}
    kept = verdicts["shrinking-keeps-the-norm"]
    assert kept.verdict == "no-harm holds" and kept.switched == "none"  # gap 0 ≥ −0.5 exactly, nothing switched
    (row,) = overview(store, replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded))
    assert row.counts["no-harm holds"] == 1 and row.counts["reproduced"] == 0 and row.counts["uninformative"] == 1


def test_the_switched_off_cells_are_among_the_controls(tmp_path, toy_registry):
    registry = with_claims(tmp_path, toy_registry, SWITCHED)
    paper = load_paper(registry, "toy-paper")
    plain = {(c.method, c.method_config.get("shrink")) for c in paper_cells(paper, registry, controls=False)}
    controls = {(c.method, c.method_config.get("shrink")) for c in paper_cells(paper, registry)}
    assert controls - plain == {("toy_shrunk", 0.0)}  # the no-harm claim adds none


# A per-iteration (semi-log) rate: each seed's curve is c·ρ_s^t, so log value = log c + t·log ρ_s, a straight line in
# t of slope log ρ_s exactly, whatever c. With ρ_s = 0.9·e^{d_s}, d = (−0.01, 0, +0.01): the per-seed slopes are
# log 0.9 + d_s, mean log 0.9 = −0.10536, sd 0.01, SE 0.01/√3, and the 95 % t interval
# log 0.9 ± 4.3027·0.01/√3 = [−0.13020, −0.08052].
RHO, SPREAD, STEPS = 0.9, (-0.01, 0.0, 0.01), range(0, 51)
SEMILOG = TOY_HEADER + """defaults: {seeds: 3, scale: cpu-full}
claims:
  - id: linear-convergence
    kind: rate
    metric: error
    curve: loss
    x_range: [0, 50]
    axis: semilog
    cells: {method: toy_noisy, task: toy_target}
    expect: {slope: SLOPE, tolerance: 0.05}
"""


def _geometric(store, registry, rhos, scales=(1.0, 3.0, 0.2)):
    for seed, (rho, c) in enumerate(zip(rhos, scales, strict=True)):
        cell = make_cell(registry, Entry("toy_noisy", {}), Entry("toy_target"), seed)
        curve = [(t, c * rho**t) for t in STEPS]
        store.save(RunRecord(cell, "done", 2, {"error": 1.0, "norm": 1.0}, {"loss": curve}), runner="local")


def _semilog(tmp_path, toy_registry, store, slope, rhos, text=SEMILOG):
    registry = with_claims(tmp_path, toy_registry, text.replace("SLOPE", repr(slope)))
    _geometric(store, registry, rhos)
    (verdict,) = evaluate_paper(load_paper(registry, "toy-paper"), store, registry)
    return verdict


def test_a_semilog_rate_of_a_geometric_sequence_is_log_rho_exactly(tmp_path, toy_registry, store):
    """ρ the same in every seed (c differs): every seed's slope is log ρ, so the interval is that one value."""
    v = _semilog(tmp_path, toy_registry, store, math.log(RHO), [RHO] * 3)
    assert v.verdict == "reproduced", v.detail
    assert v.ours == [pytest.approx(math.log(RHO), abs=1e-12)]
    assert (v.evidence.low, v.evidence.high) == (pytest.approx(math.log(RHO), abs=1e-12),) * 2
    assert "semi-log (log value per step: log ρ) slope of loss over steps (0.0, 50.0)" in v.detail
    assert v.paper_text == f"slope {math.log(RHO)} (semi-log: log ρ per step)"


@pytest.mark.parametrize("shift, verdict", [(0.0, "reproduced"), (0.06, "underpowered"), (0.2, "not reproduced"),
                                            (-0.2, "not reproduced")])
def test_a_semilog_rate_is_decided_by_the_interval_of_its_slopes(tmp_path, toy_registry, store, shift, verdict):
    """The expected slope moves; the data stay: band log 0.9 + shift ± 0.05 against the interval [−0.1302, −0.0805].
    shift 0: the band [−0.155, −0.055] holds it; 0.06: the band's lower edge −0.0954 cuts it (underpowered, with the
    seeds that would decide it); ±0.2: the band lies wholly above or below it."""
    v = _semilog(tmp_path, toy_registry, store, math.log(RHO) + shift, [RHO * math.exp(d) for d in SPREAD])
    half = T_975_2 * 0.01 / math.sqrt(3)
    assert v.verdict == verdict, v.detail
    assert v.ours == [pytest.approx(math.log(RHO), abs=1e-12)]
    assert (v.evidence.low, v.evidence.high) == (pytest.approx(math.log(RHO) - half, abs=1e-9),
                                                 pytest.approx(math.log(RHO) + half, abs=1e-9))
    assert ("80 % power needs" in v.detail) == (verdict == "underpowered")


def test_the_same_curve_on_the_default_loglog_axis_is_a_power_law_fit(tmp_path, toy_registry, store):
    """Without `axis`, a rate is log-log: for c·ρ^t over steps 1..50 its slope is the least-squares slope of t·log ρ
    against log t, not log ρ (step 0 has no log and is left out)."""
    text = SEMILOG.replace("    axis: semilog\n", "").replace("x_range: [0, 50]", "x_range: [1, 50]")
    v = _semilog(tmp_path, toy_registry, store, -1.0, [RHO] * 3, text)
    t = np.arange(1, 51)
    assert v.ours == [pytest.approx(np.polyfit(np.log(t), t * math.log(RHO), 1)[0], abs=1e-9)]
    assert "log-log slope of loss" in v.detail


def test_a_semilog_rate_across_settings_fits_log_metric_against_x_metric(tmp_path, toy_registry, store):
    """error = 2·0.5^norm in every seed, across three settings: the slope of log error against norm is log 0.5."""
    text = TOY_HEADER + """defaults: {seeds: 3, scale: cpu-full}
claims:
  - id: halves-per-unit
    kind: rate
    metric: error
    x_metric: norm
    axis: semilog
    cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target},
            {method: toy_noisy, task: toy_target, method_config: {noise: 0.5}}]
    expect: {slope: -0.6931, tolerance: 0.001}
"""
    registry = with_claims(tmp_path, toy_registry, text)
    for noise, norm in ((0.01, -1.0), (0.1, 0.5), (0.5, 3.0)):  # a semilog x may be negative; only values are logged
        for seed in range(3):
            cell = make_cell(registry, Entry("toy_noisy", {"noise": noise}), Entry("toy_target"), seed)
            store.save(RunRecord(cell, "done", 2, {"error": 2 * 0.5**norm, "norm": norm}, {}), runner="local")
    (v,) = evaluate_paper(load_paper(registry, "toy-paper"), store, registry)
    assert v.verdict == "reproduced" and v.ours == [pytest.approx(math.log(0.5), abs=1e-12)], v.detail
    assert "log error vs norm (per-seed slopes over 3 seeds)" in v.detail


def test_a_rate_says_which_seed_has_no_positive_values_to_take_the_log_of(tmp_path, toy_registry, store):
    registry = with_claims(tmp_path, toy_registry, SEMILOG.replace("SLOPE", "-0.1"))
    for seed, sign in enumerate((1.0, -1.0, 1.0)):
        cell = make_cell(registry, Entry("toy_noisy", {}), Entry("toy_target"), seed)
        store.save(RunRecord(cell, "done", 2, {"error": 1.0}, {"loss": [(t, sign * RHO**t) for t in STEPS]}),
                   runner="local")
    (v,) = evaluate_paper(load_paper(registry, "toy-paper"), store, registry)
    assert v.verdict == "not reproduced" and v.ours_text == "n/a"
    assert "fewer than two positive points to fit a slope (a rate takes the log of its values): loss in seed(s) 1" \
        in v.detail


@pytest.mark.parametrize("edit, message", [
    (("axis: semilog", "axis: linear"), r"axis 'linear' unknown; allowed: loglog, semilog$"),
    (("x_range: [0, 50]\n    axis: semilog\n", "x_range: [0, 50]\n"),
     r"a loglog rate takes log step, so x_range must start above 0, got \[0.0, 50.0\]; axis: semilog fits"),
    (("x_range: [0, 50]", "x_range: [50, 0]"), r"x_range must be \[first step, last step\], got \[50.0, 0.0\]"),
    (("    curve: loss\n", "    curve: loss\n    x_metric: norm\n"), "a rate fits either a curve"),
    (("expect: {slope: SLOPE, tolerance: 0.05}", "expect: {slope: -0.1, tol: 0.05}"),
     r"unknown expect key\(s\) tol; allowed: slope, tolerance$"),
    (("kind: rate", "kind: bound"), "axis belongs to a rate claim"),
    (("    axis: semilog\n", "    axis: semilog\n    tolerance: 0.05\n"),
     r"unknown key\(s\) tolerance; allowed: id, .*\(a tolerance is a key of expect\)$"),
])
def test_a_bad_rate_is_refused_in_one_line_naming_what_is_allowed(tmp_path, toy_registry, edit, message):
    text = SEMILOG.replace(*edit).replace("SLOPE", "-0.1")
    if "kind: bound" in text:
        text = text.replace("expect: {slope: -0.1, tolerance: 0.05}", "expect: {max: 1}")
    with pytest.raises(BenchError, match=message) as refused:
        load_paper(with_claims(tmp_path, toy_registry, text), "toy-paper")
    assert "\n" not in str(refused.value)


def test_a_rate_of_a_metric_that_can_be_negative_is_refused(tmp_path, toy_registry, monkeypatch):
    """The log of a value needs it positive: a metric whose family declares it may go below 0 cannot be a rate's."""
    from bench.spec import Metric

    real = Registry.declared_metrics

    def signed(self, family):
        declared = real(self, family)
        return replace(declared, metrics={**declared.metrics, "norm": Metric(True, "", False, "", bounds=(-1.0, None))})

    monkeypatch.setattr(Registry, "declared_metrics", signed)
    text = SEMILOG.replace("metric: error\n    curve: loss\n    x_range: [0, 50]", "metric: norm\n    x_metric: error")
    with pytest.raises(BenchError, match=r"a rate fits log norm, which needs positive values, but norm can be "
                                         r"negative \(declared range \(-1.0, None\)\)"):
        load_paper(with_claims(tmp_path, toy_registry, text.replace("SLOPE", "-0.1")), "toy-paper")


@pytest.mark.parametrize("expect, message", [
    ("{rtol: 0.1, atol: 1}", "a value claim's expect gives one tolerance"),
    ("{tolerance: 0.1}", r"unknown expect key\(s\) tolerance; allowed: atol, rtol, factor"),
])
def test_a_value_claims_tolerance_is_one_key_of_expect(tmp_path, toy_registry, expect, message):
    text = TOY_HEADER + f"""claims:
  - {{id: v, kind: value, scale: cpu-full, metric: error, cells: {{method: toy_noisy, task: toy_target}},
     paper_value: 2.1, expect: {expect}}}
"""
    with pytest.raises(BenchError, match=message):
        load_paper(with_claims(tmp_path, toy_registry, text), "toy-paper")
