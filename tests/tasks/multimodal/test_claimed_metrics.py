"""multimodal: the claimed recalls and accuracy are computed by score from the similarity matrices (issue 23).

Recall@k and the zero-shot accuracy come from the returned similarities against the test pairs' keys and labels.
The parameter count and the gate's expert usage are the method's report (`trainable_params`, `expert_usage`): the
claims on the parameter budget and on the gate's routing (trainable_params, gate_direction_tv, shared_experts,
specific_experts) still rest on them; observing them needs the judge to run the returned model itself
(docs/metrics-audit.md, open item). Rewriting them moves no other claimed metric.
"""

import numpy as np
import pytest

from tests.tasks._claimed import OUTPUT, REPORTED, assert_unmoved, claimed_metrics, claimed_scores, lie, pairs, solved

FAMILY = "multimodal"
GATE = ("gate_direction_tv", "shared_experts", "specific_experts")
HOW = {"mean_recall": OUTPUT, "recall_i2t_at_1": OUTPUT, "recall_t2i_at_1": OUTPUT, "class_accuracy": OUTPUT,
       "trainable_params": REPORTED, **{m: REPORTED for m in GATE}}
SELF_REPORTED = {"trainable_params": lambda n: n // 2,
                 "expert_usage": lambda u: None if u is None else np.ones_like(u) / u.shape[-1]}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_other_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED, reported=("trainable_params", *GATE))


@pytest.mark.xfail(strict=True, reason="trainable_params and the gate's usage are the method's report "
                                       "(docs/metrics-audit.md, open item)")
def test_a_method_halving_its_parameter_count_or_flattening_its_gate_is_not_believed():
    problem, result = solved("m3_jepa", "paired_retrieval")
    honest, lying = (claimed_scores(FAMILY, problem, r) for r in (result, lie(result, SELF_REPORTED)))
    assert [lying.get(m) for m in ("trainable_params", *GATE)] == [honest.get(m) for m in ("trainable_params", *GATE)]
