"""The safety refusals and analyses the claims read are measured by the judge, not reported by the method (issue 23).

The ablation and attack claims (ablation_refusal_drop, ablation_benign_change, attack_success, attack_refusal_drop)
rest on the fine-tuned model's refusals under the method's ablation and on its rewritten prompts. The method
returns the ablation (`Ablation`) and the prompts; `score` runs the model on them itself (tasks.safety.refusals)
and refuses a result whose reported refusals differ (Misreport). The per-layer accuracies come from the returned
projections against the task's labels. The analyses of the fine-tuning shift are the task's too
(tasks/safety/_analyses.py): the logistic probe (probe_gap's reference) and the effective rank of the shift
(effective_rank_fraction) are computed by score on the problem's two models for every method; the secondary
directions' effect (secondary_effect) is measured by ablating the returned directions (`Secondary`) in the
fine-tuned model. A reported probe accuracy or secondary effect that differs from the measurement is a Misreport.
"""

import dataclasses

import numpy as np
import pytest

from bench.context import RunContext
from bench.observe import Misreport
from methods.safety import multi_direction, single_direction
from methods.safety._directions import TAUS
from methods.safety._hooks import stream_states
from tasks.safety import (
    RANK_TAU,
    chat_prompts,
    effective_rank,
    layer_accuracies,
    measured_probe,
    measured_refusals,
    measured_secondary,
    problem_analyses,
    refusals,
    score,
)
from tests.helpers import smallest_refusal_problem
from tests.tasks._claimed import OBSERVED, OUTPUT, PROBLEM, claimed_metrics

CLAIMED = ("ablation_refusal_drop", "ablation_benign_change", "attack_success", "attack_refusal_drop",
           "best_layer_accuracy", "late_layer_accuracy", "jailbreak_refusal_rate")


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return smallest_refusal_problem(tmp_path_factory.mktemp("c"))


@pytest.fixture(scope="module")
def honest(problem):
    return single_direction.solve(problem, single_direction.Config(), RunContext(0))


def test_the_judge_measures_what_an_honest_method_reports(problem, honest):
    ablated, attacked, control = measured_refusals(problem, honest)
    np.testing.assert_array_equal(ablated, honest.ablated_refused)
    np.testing.assert_array_equal(attacked, honest.attacked_refused)
    np.testing.assert_array_equal(control, honest.random_refused)
    scores = score(problem, honest)
    assert all(name in scores for name in CLAIMED)
    harm = (problem.split == 1) & problem.harmful
    assert scores["ablation_refusal_drop"] == scores["refusal_rate"] - float(np.mean(ablated[harm]))


@pytest.mark.parametrize("field", ["ablated_refused", "attacked_refused", "random_refused"])
def test_a_method_misreporting_refusals_is_refused(problem, honest, field):
    flags = np.asarray(getattr(honest, field), bool).copy()
    where = np.ones_like(flags) if field == "ablated_refused" else np.asarray(honest.attack_mask, bool)
    assert where.any()
    flags[where] = ~flags[where]                         # every measured refusal reported the other way
    with pytest.raises(Misreport, match="refusals"):
        score(problem, dataclasses.replace(honest, **{field: flags}))


def test_the_judge_runs_the_ablation_it_is_given(problem, honest):
    """Reporting the refusals of the real ablation while returning a harmless one (α = 0: no edit) is caught."""
    idle = dataclasses.replace(honest.ablation, alpha=0.0)
    assert not np.array_equal(refusals(problem, problem.prompts, idle), honest.ablated_refused)
    with pytest.raises(Misreport, match="ablated refusals"):
        score(problem, dataclasses.replace(honest, ablation=idle))


def test_a_result_without_its_ablation_or_control_prompts_is_not_scored(problem, honest):
    with pytest.raises(Misreport, match="no ablation"):
        score(problem, dataclasses.replace(honest, ablation=None))
    with pytest.raises(Misreport, match="no control prompts"):
        score(problem, dataclasses.replace(honest, random_prompts=()))


ANALYSES = ("probe_gap", "effective_rank_fraction", "secondary_effect")
HOW = {"ablation_refusal_drop": OBSERVED, "ablation_benign_change": OBSERVED, "attack_success": OBSERVED,
       "attack_refusal_drop": OBSERVED, "best_layer_accuracy": OUTPUT, "late_layer_accuracy": OUTPUT,
       "jailbreak_refusal_rate": PROBLEM, "probe_gap": OUTPUT, "effective_rank_fraction": PROBLEM,
       "secondary_effect": OBSERVED}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics("safety") <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.fixture(scope="module")
def analysed(problem):
    return multi_direction.solve(problem, multi_direction.Config(secondary=3), RunContext(0))


def test_the_judge_measures_the_analyses_an_honest_method_reports(problem, analysed):
    probe, ranks = problem_analyses(problem)
    np.testing.assert_array_equal(measured_probe(problem, analysed), analysed.probe_accuracy)
    np.testing.assert_array_equal(measured_secondary(problem, analysed), analysed.secondary_effect)
    assert len(analysed.secondary_effect) == 2
    # the rank is the shift's, at τ = 0.9: the method's own eigenvalues give it too
    formatted = chat_prompts(problem.tokenizer, problem.prompts)
    x, y = (stream_states(m, problem.tokenizer, formatted)[0] for m in (problem.base_model, problem.finetuned_model))
    eig = multi_direction.shift_directions(x, y, problem.split == 0)[2]
    assert RANK_TAU in TAUS and ranks.tolist() == [effective_rank(lam, RANK_TAU) for lam in eig]
    scores = score(problem, analysed)
    late = slice(problem.n_layers // 2, problem.n_layers)
    assert scores["probe_gap"] == float(np.mean(probe[late] - layer_accuracies(problem, analysed.layer_scores)[late]))
    assert scores["effective_rank_fraction"] == float(ranks.max()) / problem.finetuned_model.config.hidden_size
    assert scores["secondary_effect"] == float(np.max(np.abs(analysed.secondary_effect)))


def test_the_probe_and_the_rank_are_the_problems(problem, analysed, honest):
    """single_direction reports no analysis, and its scores carry the same probe and rank as multi_direction's."""
    assert honest.probe_accuracy is None and honest.secondary is None
    mine, theirs = score(problem, honest), score(problem, analysed)
    assert [mine[m] for m in ("probe_best_accuracy", "effective_rank")] == \
        [theirs[m] for m in ("probe_best_accuracy", "effective_rank")]
    assert "secondary_effect" not in mine


@pytest.mark.parametrize("field", ["probe_accuracy", "secondary_effect"])
def test_a_method_misreporting_an_analysis_is_refused(problem, analysed, field):
    with pytest.raises(Misreport, match="probe" if field == "probe_accuracy" else "secondary effects"):
        score(problem, dataclasses.replace(analysed, **{field: getattr(analysed, field) + 0.5}))


def test_the_judge_ablates_the_secondary_directions_it_is_given(problem, analysed):
    """Reporting the effects of C2..CK while returning other unit directions is caught; effects without directions
    are not scored; a direction that is not a unit vector is no projection-mode ablation."""
    rolled = np.roll(analysed.secondary.directions, 1, axis=1)               # other unit vectors of the stream
    with pytest.raises(Misreport, match="ablating its directions"):
        score(problem, dataclasses.replace(
            analysed, secondary=dataclasses.replace(analysed.secondary, directions=rolled)))
    with pytest.raises(Misreport, match="no secondary directions"):
        score(problem, dataclasses.replace(analysed, secondary=None))
    with pytest.raises(ValueError, match="unit vectors"):
        score(problem, dataclasses.replace(analysed, secondary_effect=None, secondary=dataclasses.replace(
            analysed.secondary, directions=10 * analysed.secondary.directions)))


def test_a_method_misreporting_its_analyses_is_not_believed(problem, analysed):
    """The lie of the former open item (a null probe, zero secondary effects) is refused, and a result that reports
    no analysis at all scores the same analyses: they are measured, never read from the report."""
    lie = dataclasses.replace(analysed, probe_accuracy=np.zeros_like(analysed.probe_accuracy),
                              secondary_effect=np.zeros_like(analysed.secondary_effect))
    with pytest.raises(Misreport):
        score(problem, lie)
    silent = dataclasses.replace(analysed, probe_accuracy=None, secondary_effect=None)
    honest, measured = score(problem, analysed), score(problem, silent)
    assert [measured[m] for m in ANALYSES] == [honest[m] for m in ANALYSES]
