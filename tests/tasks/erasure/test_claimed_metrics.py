"""erasure: every claimed metric is measured by score, which samples the edited model and judges it (issue 23).

A method returns nothing but its edited transformer (ErasureResult has no other field), so no claimed metric can rest
on what it says about itself: score samples the returned transformer from the problem's fixed noise with the
backbone's sampler, and the problem's frozen judge labels the decoded images (the concept, synonym and shuffled rates,
the preserved concepts' accuracy) and gives the features whose Fréchet distance to the original model's generations
is feature_fd (tasks/erasure/__init__.py). There is no reported field to rewrite (an assert_unmoved over an empty map
would only re-score); what remains is that score reads the problem as the task built it (its judge, prompts, noise
and reference features), which a fresh build of the task checks for every registered method.
"""

import dataclasses

import pytest

from tasks.erasure import ErasureResult
from tests.tasks._claimed import OUTPUT, built, claimed_metrics, claimed_scores, pairs, same, solved_or_skip

FAMILY = "erasure"
HOW = {"concept_rate": OUTPUT, "synonym_rate": OUTPUT, "shuffled_rate": OUTPUT, "preserve_accuracy": OUTPUT,
       "feature_fd": OUTPUT}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"
    assert [f.name for f in dataclasses.fields(ErasureResult)] == ["transformer"]


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_the_claimed_metrics_are_the_judges_on_the_problem_as_the_task_built_it(method, task):
    problem, result = solved_or_skip(method, task)
    scores = claimed_scores(FAMILY, problem, result)
    assert scores.keys() == claimed_metrics(FAMILY)
    assert same(claimed_scores(FAMILY, built(task), result), scores)
