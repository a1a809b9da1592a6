"""length_generalization: every claimed metric, and the curve, is measured by score and trace themselves (issue 23).

On the §3 case studies a method returns its predictions at each evaluation length (RegressionResult holds nothing
else); score and trace compute their MSE and accuracy against the problem's targets. On the LM task it returns its
next-token predictor and checkpoints of it (LMResult); score runs them on the problem's held-out documents (the NLL,
accuracy and perplexity at each length, the Long-Short Misalignment on the suffixes, the correlations over the
checkpoints) and trace runs the predictor for the curve `loss_at_length` a rate claim reads (the harness stores
trace's curves over any of the same name the method logs: bench/execute.py). The one self-description a Result
carries, the training step of each checkpoint, reaches neither, and both read the problem as the task built it.
"""

import dataclasses

import pytest

from tasks.length_generalization import LMProblem, LMResult, RegressionResult, score, trace
from tests.tasks._claimed import OUTPUT, assert_unmoved, built, claimed_metrics, lie, pairs, same, solved_or_skip

FAMILY = "length_generalization"
# train_length_loss: the baseline a tracking claim compares with (`expect: {against: ...}`)
HOW = {"long_length_loss": OUTPUT, "long_length_accuracy": OUTPUT, "long_length_perplexity": OUTPUT,
       "loss_ratio": OUTPUT, "misalignment": OUTPUT, "train_length_loss": OUTPUT, "curve:loss_at_length": OUTPUT}
SELF_REPORTED = {"checkpoints": lambda saved: tuple((7 * step + 1, predict) for step, predict in saved)}


def read(problem, result) -> dict[str, float]:
    """The scores of every metric in HOW (the claimed ones and the tracking claim's baseline)."""
    return {k: v for k, v in score(problem, result).items() if k in HOW}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"
    assert [f.name for f in dataclasses.fields(RegressionResult)] == ["predictions"]
    assert [f.name for f in dataclasses.fields(LMResult)] == ["log_probs", "checkpoints"]


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED)


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_the_claimed_metrics_and_curve_are_measured_on_the_problem_as_the_task_built_it(method, task):
    problem, result = solved_or_skip(method, task)
    fresh = built(task)
    scores = read(problem, result)
    assert same(read(fresh, result), scores) and same(read(problem, lie(result, SELF_REPORTED)), scores)
    curve = trace(problem, result)["loss_at_length"]
    lengths = problem.eval_tokens if isinstance(problem, LMProblem) else problem.eval_targets
    assert [length for length, _ in curve] == sorted(lengths)       # every evaluation length, from the predictions
    assert trace(fresh, result)["loss_at_length"] == curve
    assert trace(problem, lie(result, SELF_REPORTED))["loss_at_length"] == curve
