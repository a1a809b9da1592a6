"""urban: every claimed metric is computed by score from the predictions against the target city's labels.

A method returns nothing but its predictions (TwoCityResult has no other field), so no claimed metric can rest on
what it says about itself (issue 23); the claimed errors are those of the released evaluator on the hidden labels.
"""

import dataclasses

import numpy as np
import pytest

from tasks.urban import INDICATORS, TwoCityResult, regression_metrics
from tests.tasks._claimed import OUTPUT, claimed_metrics, claimed_scores, pairs, solved_or_skip

FAMILY = "urban"
HOW = {"mae": OUTPUT, "r2": OUTPUT, **{f"mae_{i}": OUTPUT for i in INDICATORS}}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"
    assert [f.name for f in dataclasses.fields(TwoCityResult)] == ["predictions"]


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_the_claimed_metrics_are_the_predictions_errors_on_the_hidden_labels(method, task):
    problem, result = solved_or_skip(method, task)  # the latent oracle skips the real cities: no latent truth
    scores = claimed_scores(FAMILY, problem, result)
    per = [regression_metrics(problem.target.labels[:, k], np.asarray(result.predictions)[:, k])
           for k in range(len(INDICATORS))]
    for name in ("mae", "r2"):
        if name in scores:
            assert scores[name] == float(np.mean([p[name] for p in per]))
    for k, ind in enumerate(INDICATORS):
        if f"mae_{ind}" in scores:
            assert scores[f"mae_{ind}"] == per[k]["mae"]
