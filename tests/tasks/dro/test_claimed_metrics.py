"""dro: every claimed metric is computed by score from the method's estimate on the task's test sample (issue 23).

The claims read test accuracy and out-of-sample R² of β̂ on the held-out sample; the tuning value a method says
it selected reaches no claimed metric.
"""

import pytest

from tests.tasks._claimed import OUTPUT, assert_unmoved, claimed_metrics, pairs

FAMILY = "dro"
HOW = {"test_accuracy": OUTPUT, "test_r2": OUTPUT}
SELF_REPORTED = {"tuning": lambda v: 1e6 if v is None else -10.0 * v - 1.0}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED)
