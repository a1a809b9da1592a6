"""reward_learning: the claimed accuracies and clone shifts are computed by score from the learned rewards and
labels against the hidden truth (issue 23).

kkt_residual, which one claim reads, checks the learned reward against the first-order condition of the objective
the method declares (`weights`, `clone_weights`, `lam`): a declaration, not a measurement, so a method could
declare the objective its reward happens to satisfy (docs/metrics-audit.md, open item). The number of rules a
labeller says it used (`rules_used`) reaches no claim. Rewriting either moves no other claimed metric.
"""

import pytest

from tests.tasks._claimed import OUTPUT, REPORTED, assert_unmoved, claimed_metrics, claimed_scores, lie, pairs, solved

FAMILY = "reward_learning"
HOW = {"pairwise_accuracy": OUTPUT, "clone_gap": OUTPUT, "clone_shift": OUTPUT, "clone_shift_centred": OUTPUT,
       "top_theme_flip": OUTPUT, "label_accuracy": OUTPUT, "label_mutual_information": OUTPUT, "safety": OUTPUT,
       "kkt_residual": REPORTED}
SELF_REPORTED = {"weights": lambda w: 2.0 * w, "clone_weights": lambda w: 2.0 * w, "lam": lambda lam: 3.0 * lam + 1.0,
                 "rules_used": lambda r: r + 5.0}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_other_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED, reported=("kkt_residual",))


@pytest.mark.xfail(strict=True, reason="kkt_residual is checked against the objective the method declares "
                                       "(docs/metrics-audit.md, open item)")
def test_a_method_misdeclaring_its_objective_is_not_believed():
    problem, result = solved("weighted_mle", "clones")
    honest, lying = (claimed_scores(FAMILY, problem, r)["kkt_residual"] for r in (result, lie(result, SELF_REPORTED)))
    assert lying == honest
