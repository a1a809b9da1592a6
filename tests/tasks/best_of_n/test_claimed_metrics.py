"""best_of_n: every claimed metric is computed by score from the method's outputs against the exact law (issue 23).

The method's outputs are its value of KL(π_n‖π) and its win rate (an estimate is the answer the claims judge
against the closed form), or the PMF of its policy, which score measures itself. What it reports about itself
(the strength it ran at, its Monte-Carlo sample count and standard error) reaches no claimed metric.
"""

import pytest

from tests.tasks._claimed import OUTPUT, PROBLEM, assert_unmoved, claimed_metrics, pairs

FAMILY = "best_of_n"
HOW = {"abs_error_to_exact": OUTPUT, "error_to_exact": OUTPUT, "kl_estimate": OUTPUT, "win_rate": OUTPUT,
       "win_rate_advantage": OUTPUT, "kl_exact": PROBLEM, "gap_to_formula_bound": PROBLEM, "win_rate_exact": PROBLEM,
       "win_rate_gap_to_bound": PROBLEM}
SELF_REPORTED = {"strength": lambda v: None if v is None else 7.0 * v + 1.0, "samples": lambda n: 10 * n + 1,
                 "kl_std_error": lambda e: 123.0}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED)
