"""performative: the claimed gaps are computed by score from the iterates against θ_PS (issue 23).

final_gap is ‖θ_T − θ_PS‖² of the returned last iterate; shifted_modulus is the instance's. Two claims still rest
on what the method declares (docs/metrics-audit.md, open items): limit_rel_error compares the gap with the bias
theory predicts for the clip threshold the method says it used (`clip_threshold`), and the rate claim's curve
`gap` puts the returned iterates at the iteration numbers the method says they were taken at (`steps`).
Rewriting those moves no other claimed metric.
"""

import numpy as np
import pytest

from tasks.performative import trace
from tests.tasks._claimed import (OUTPUT, PROBLEM, REPORTED, assert_unmoved, claimed_metrics, claimed_scores, lie,
                                  pairs, solved)

FAMILY = "performative"
HOW = {"final_gap": OUTPUT, "shifted_modulus": PROBLEM, "limit_rel_error": REPORTED, "curve:gap": REPORTED}
SELF_REPORTED = {"clip_threshold": lambda c: 1.0 if c is None else 10.0 * c, "steps": lambda s: 2 * s}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_other_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED, reported=("limit_rel_error",))


@pytest.mark.xfail(strict=True, reason="the clip threshold and the step labels are the method's declaration "
                                       "(docs/metrics-audit.md, open item)")
def test_a_method_misdeclaring_its_clip_threshold_or_steps_is_not_believed():
    problem, result = solved("pcsgd", "performative")
    honest, lying = result, lie(result, SELF_REPORTED)
    assert claimed_scores(FAMILY, problem, lying).get("limit_rel_error") == \
        claimed_scores(FAMILY, problem, honest).get("limit_rel_error")
    assert np.array_equal([s for s, _ in trace(problem, lying)["gap"]], [s for s, _ in trace(problem, honest)["gap"]])
