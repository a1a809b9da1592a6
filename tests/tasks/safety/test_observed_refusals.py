"""The safety refusals the claims read are measured by the judge, not reported by the method (issue 23).

The ablation and attack claims (ablation_refusal_drop, ablation_benign_change, attack_success, attack_refusal_drop)
rest on the fine-tuned model's refusals under the method's ablation and on its rewritten prompts. The method
returns the ablation (`Ablation`) and the prompts; `score` runs the model on them itself (tasks.safety.refusals)
and refuses a result whose reported refusals differ (Misreport). The per-layer accuracies come from the returned
projections against the task's labels. (probe_gap, effective_rank_fraction and secondary_effect are still the
method's analysis numbers: docs/metrics-audit.md.)
"""

import dataclasses

import numpy as np
import pytest

from bench.context import RunContext
from bench.observe import Misreport
from methods.safety import multi_direction, single_direction
from tasks.safety import measured_refusals, refusals, score
from tests.tasks._claimed import OBSERVED, OUTPUT, PROBLEM, REPORTED, claimed_metrics
from tests.helpers import smallest_refusal_problem

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
       "jailbreak_refusal_rate": PROBLEM, **{m: REPORTED for m in ANALYSES}}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics("safety") <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.xfail(strict=True, reason="the probe's accuracy, the effective rank and the secondary directions' effect "
                                       "are the method's analysis numbers (docs/metrics-audit.md, open item)")
def test_a_method_misreporting_its_analyses_is_not_believed(problem):
    result = multi_direction.solve(problem, multi_direction.Config(secondary=3), RunContext(0))
    lie = dataclasses.replace(result, probe_accuracy=np.zeros_like(result.probe_accuracy),
                              effective_rank=np.ones_like(result.effective_rank),
                              secondary_effect=np.zeros_like(result.secondary_effect))
    honest, lying = score(problem, result), score(problem, lie)
    assert [lying[m] for m in ANALYSES] == [honest[m] for m in ANALYSES]
