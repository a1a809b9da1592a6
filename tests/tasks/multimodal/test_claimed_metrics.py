"""multimodal: every claimed metric is computed by score from the returned model run on the problem (issue 23).

A method returns its trained model (tasks.multimodal.Aligner) and `score` runs it itself: Recall@k and the zero-shot
accuracy come from the similarities it computes on the test pairs and class prompts against their keys and labels;
`trainable_params` is counted on the returned model (a torch module's parameters that require gradients, through
torch's own `Module.parameters`; a closed-form model's fitted arrays); the gate metrics (gate_direction_tv,
shared_experts, specific_experts) come from the gate's logits, read with a forward hook while the model retrieves.
What a method still reports about itself (`trainable_params`, `expert_usage`) is checked: every registered method's
report equals score's count bit for bit, a rewritten one is refused (Misreport; through bench.execute the run fails),
and a result without the reports scores the same.
"""

import dataclasses

import numpy as np
import pytest

from bench.observe import Misreport
from tasks.multimodal import count_trainable, observe
from tasks.multimodal.paired_retrieval import SMALLEST
from tests.tasks._claimed import (
    OBSERVED,
    OUTPUT,
    assert_unmoved,
    claimed_metrics,
    claimed_scores,
    liar_runner,
    pairs,
    solved,
)

FAMILY = "multimodal"
GATE = ("gate_direction_tv", "shared_experts", "specific_experts")
HOW = {"mean_recall": OUTPUT, "recall_i2t_at_1": OUTPUT, "recall_t2i_at_1": OUTPUT, "class_accuracy": OUTPUT,
       "trainable_params": OBSERVED, **{m: OBSERVED for m in GATE}}
DROPPED = {"trainable_params": lambda n: None, "expert_usage": lambda u: None}
LIES = {"trainable_params": lambda n: n // 2,
        "expert_usage": lambda u: np.ones_like(u) / u.shape[-1]}   # a flat gate: every expert alike


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_every_method_reports_exactly_what_score_counts(method, task):
    problem, result = solved(method, task)
    _, usage = observe(problem, result.model)
    assert result.trainable_params == count_trainable(result.model) > 0
    assert (usage is None) == (result.expert_usage is None)
    if usage is not None:
        assert usage.dtype == result.expert_usage.dtype and np.array_equal(usage, result.expert_usage)


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_a_result_without_reports_scores_the_same(method, task):
    assert_unmoved(FAMILY, method, task, DROPPED)


@pytest.mark.parametrize("field", list(LIES))
def test_a_method_halving_its_parameter_count_or_flattening_its_gate_is_refused(field):
    problem, result = solved("m3_jepa", "paired_retrieval")
    lying = dataclasses.replace(result, **{field: LIES[field](getattr(result, field))})
    with pytest.raises(Misreport, match="trainable parameters" if field == "trainable_params" else "expert usage"):
        claimed_scores(FAMILY, problem, lying)
    honest = claimed_scores(FAMILY, problem, dataclasses.replace(result, **{f: None for f in LIES}))
    assert honest == claimed_scores(FAMILY, problem, result)
    assert honest["trainable_params"] == result.trainable_params and all(m in honest for m in GATE)


def test_a_model_that_hides_its_parameters_or_freezes_them_is_counted_by_torch():
    """Overriding `parameters()` hides nothing; freezing a part (requires_grad off) removes it from the count."""
    problem, result = solved("m3_jepa", "paired_retrieval")
    model = result.model
    model.parameters = lambda: iter(())
    assert claimed_scores(FAMILY, problem, result)["trainable_params"] == result.trainable_params == 67332
    targets = model.predictor.cl_target.requires_grad_(False)
    frozen = sum(p.numel() for p in targets.parameters())
    assert frozen == (64 * 64 + 64) * 2
    with pytest.raises(Misreport, match=f"observed {67332 - frozen}"):
        claimed_scores(FAMILY, problem, result)


def test_bench_execute_refuses_a_liar_and_scores_its_honest_twin():
    """End to end through bench.execute: the liar (tests/tasks/multimodal/_liar.py) fails with the Misreport."""
    run = liar_runner(FAMILY, "paired_retrieval", SMALLEST, "tests.tasks.multimodal._liar")
    for config in ({}, {"factor": 1.0, "flat_gate": True}):
        lying = run("liar", config)
        assert lying.status == "failed" and "Misreport" in lying.error and lying.metrics == {}
    honest = run("liar", {"factor": 1.0})
    assert honest.status == "done" and honest.metrics["trainable_params"] == 67332
    assert all(m in honest.metrics for m in GATE)
