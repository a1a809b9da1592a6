"""reward_learning: the claimed accuracies and clone shifts are computed by score from the learned rewards and
labels against the hidden truth (issue 23).

kkt_residual, which one check reads (weighted-win-rate-identity), is the first-order residual of the learned rewards
in the objective the method states: its λ is configuration, declared by the result (`ClonesResult.declared`, the
Config field `lam`) and checked by bench.execute against the cell's config (bench.observe.check_declared), so a
misstated λ is a Misreport. Its weights (`weights`, `clone_weights`) are still the method's word (docs/metrics-audit.md,
open item): they are not configuration, and score cannot recompute them from the problem and the config. The weighted
MLE's are Monte-Carlo Voronoi volumes of points drawn from the run's rng (ctx.rng, which score never sees), the clone
oracle's are its clone groups (drawn from ctx.rng under `shuffle`), the MLE's are 1: no problem field or config value
says which objective a ClonesResult solved. The number of rules a labeller says it used (`rules_used`) reaches no
claim. Rewriting any of them moves no other claimed metric.
"""

import pytest

from bench.configs import build_config
from bench.observe import Misreport, check_declared
from tests.tasks._claimed import (
    OUTPUT,
    REGISTRY,
    REPORTED,
    assert_unmoved,
    claimed_metrics,
    claimed_scores,
    lie,
    pairs,
    solved,
)

FAMILY = "reward_learning"
HOW = {"pairwise_accuracy": OUTPUT, "clone_gap": OUTPUT, "clone_shift": OUTPUT, "clone_shift_centred": OUTPUT,
       "top_theme_flip": OUTPUT, "label_accuracy": OUTPUT, "label_mutual_information": OUTPUT, "safety": OUTPUT,
       "kkt_residual": REPORTED}
MISWEIGHTED = {"weights": lambda w: 2.0 * w, "clone_weights": lambda w: 2.0 * w}
MISDECLARED = {"lam": lambda lam: 3.0 * lam + 1.0}
SELF_REPORTED = {**MISWEIGHTED, **MISDECLARED, "rules_used": lambda r: r + 5.0}
CLONES = [(m, t) for m, t in pairs(FAMILY) if t == "clones"]


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_other_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED, reported=("kkt_residual",))


@pytest.mark.parametrize("method, task", CLONES)
def test_a_misdeclared_lam_is_refused(method, task):
    problem, result = solved(method, task)
    m = REGISTRY.method(method)
    config = build_config(m.Config, dict(m.spec.smoke), method)
    check_declared(result, config)                          # the honest λ is the config's
    with pytest.raises(Misreport, match="declares lam=1.03"):
        check_declared(lie(result, MISDECLARED), config)


@pytest.mark.xfail(strict=True, reason="kkt_residual is checked against the weights the method states: computed by "
                                       "the method (Voronoi volumes from the run's rng, clone groups, or 1), neither "
                                       "configuration nor recomputable by score (docs/metrics-audit.md, open item)")
def test_a_method_misstating_its_weights_is_not_believed():
    problem, result = solved("weighted_mle", "clones")
    honest, lying = (claimed_scores(FAMILY, problem, r)["kkt_residual"] for r in (result, lie(result, MISWEIGHTED)))
    assert lying == honest
