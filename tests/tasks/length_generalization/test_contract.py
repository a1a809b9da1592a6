"""The family's judge: SCE and the Long-Short Misalignment on hand-built distributions, the exact Bayes
predictive of the topic-Markov corpus, the corpus sampler, and the regression scores."""

import itertools

import numpy as np
import pytest

from bench.context import RunContext
from tasks.length_generalization import (
    LMProblem,
    LMResult,
    RegressionProblem,
    RegressionResult,
    length_prediction,
    mean_prediction,
    misalignment,
    sce,
    score,
    topic_lm,
    trace,
)


def _log(p):
    return np.log(np.asarray(p, float))


def test_sce_by_hand():
    p, q = [0.5, 0.5], [0.9, 0.1]
    by_hand = -(0.5 * np.log(0.9) + 0.5 * np.log(0.1)) - (0.9 * np.log(0.5) + 0.1 * np.log(0.5))
    assert sce(_log(p), _log(q)) == pytest.approx(by_hand, abs=1e-12)
    assert sce(_log(p), _log(q)) == pytest.approx(sce(_log(q), _log(p)), abs=1e-12)  # symmetric
    assert sce(_log(p), _log(p)) == pytest.approx(2 * np.log(2), abs=1e-12)  # SCE(P, P) = 2H(P), not 0


def test_sce_minus_entropies_is_the_symmetric_kl():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(6), size=2)
    h = lambda r: -np.sum(r * np.log(r))  # noqa: E731
    jeffreys = np.sum(p * np.log(p / q)) + np.sum(q * np.log(q / p))
    assert sce(_log(p), _log(q)) - h(p) - h(q) == pytest.approx(jeffreys, abs=1e-12)
    assert jeffreys > 0


def _length_dependent_predictor(vocab=2):
    """g(x[−l:]) = (σ(l/4), 1 − σ(l/4)) at the final position, whatever the tokens."""

    def log_probs(tokens):
        n, length = tokens.shape
        p1 = 1 / (1 + np.exp(-np.arange(1, length + 1) / 4))  # position t sees t+1 tokens
        probs = np.stack([p1, 1 - p1], axis=-1)
        return np.broadcast_to(np.log(probs), (n, length, vocab)).copy()

    return log_probs


def test_misalignment_is_the_exact_mean_over_suffix_length_pairs():
    """l_train = 8: l1, l2 uniform on {4..8}; the 25 pairs' SCEs averaged by hand."""
    tokens = np.zeros((3, 8), dtype=np.int64)
    dist = {l: np.array([1 / (1 + np.exp(-l / 4)), 1 - 1 / (1 + np.exp(-l / 4))]) for l in range(4, 9)}
    by_hand = np.mean([sce(np.log(dist[a]), np.log(dist[b])) for a, b in itertools.product(range(4, 9), repeat=2)])
    assert misalignment(_length_dependent_predictor(), tokens, 8) == pytest.approx(by_hand, abs=1e-12)


def test_misalignment_of_a_length_invariant_predictor_is_twice_its_entropy():
    p = np.array([0.7, 0.2, 0.1])
    const = lambda t: np.broadcast_to(np.log(p), (*t.shape, 3)).copy()  # noqa: E731
    assert misalignment(const, np.zeros((2, 10), dtype=np.int64), 10) == pytest.approx(-2 * np.sum(p * np.log(p)))


@pytest.fixture(scope="module")
def lm():
    config = topic_lm.Config(vocab=5, topics=3, switch=0.2, train_length=6, eval_lengths=(6, 12), eval_sequences=8)
    return topic_lm.build(config, RunContext(0).for_task())


def _brute_force_predictive(lm, x, t):
    """Σ over topic paths z_1..z_{t+1} of p(path | x_{≤t}) T_{z_{t+1}}[x_t, ·], by enumeration."""
    k, rho = 3, lm.switch
    total, mass = np.zeros(5), 0.0
    for path in itertools.product(range(k), repeat=t + 1):
        prior = np.prod([(1 - rho) * (a == b) + rho / k for a, b in zip(path, path[1:], strict=False)]) / k
        like = np.prod([lm.transitions[path[s], x[s], x[s + 1]] for s in range(t)])
        total += prior * like * lm.transitions[path[t], x[t]]
        mass += prior * like
    return total / mass


def test_bayes_predictive_matches_a_brute_force_sum_over_topic_paths(lm):
    tokens = lm.eval_tokens[6][:2]
    got = np.exp(lm.bayes_log_probs(tokens))
    for i, t in itertools.product(range(2), range(6)):
        np.testing.assert_allclose(got[i, t], _brute_force_predictive(lm, tokens[i], t), atol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-12)


def test_sampled_topic_runs_have_the_switching_law():
    """K = 2 topics with disjoint supports reveal z_t; P(z_{t+1} ≠ z_t) = ρ (K−1)/K."""
    t = np.zeros((2, 4, 4))
    t[0, :, :2] = 0.5
    t[1, :, 2:] = 0.5
    problem = LMProblem(transitions=t, switch=0.3, train_length=4, eval_tokens={}, misalign_tokens=np.zeros((0, 4)))
    x = problem.sample(20_000, 6, np.random.default_rng(0))
    topic = x[:, 1:] >= 2  # the topic of each transition
    assert np.mean(topic[:, 1:] != topic[:, :-1]) == pytest.approx(0.15, abs=0.01)
    assert np.mean(topic[:, 0]) == pytest.approx(0.5, abs=0.02)


def test_the_bayes_predictor_has_zero_excess_and_uniform_has_log_v(lm):
    bayes = score(lm, LMResult(lm.bayes_log_probs))
    assert bayes["long_length_excess_loss"] == 0.0
    uniform = score(lm, LMResult(lambda t: np.full((*t.shape, 5), -np.log(5))))
    assert uniform["train_length_loss"] == pytest.approx(np.log(5))
    assert uniform["long_length_perplexity"] == pytest.approx(5)
    assert uniform["misalignment"] == pytest.approx(2 * np.log(5))
    assert bayes["long_length_loss"] < uniform["long_length_loss"]


def test_checkpoint_correlations_are_pearson_over_checkpoints(lm):
    """Mixtures (1−w)·uniform + w·Bayes: every loss falls with w, so both correlations are computed."""
    def mix(w):
        return lambda t: np.log((1 - w) / 5 + w * np.exp(lm.bayes_log_probs(t)))
    weights = (0.0, 0.3, 0.6, 0.9)
    got = score(lm, LMResult(mix(1.0), checkpoints=tuple((i, mix(w)) for i, w in enumerate(weights))))
    each = [score(lm, LMResult(mix(w))) for w in weights]  # every checkpoint scored as a final model
    column = {k: [e[k] for e in each] for k in ("misalignment", "train_length_loss", "long_length_loss")}
    assert got["corr_misalignment_long_loss"] == pytest.approx(
        np.corrcoef(column["misalignment"], column["long_length_loss"])[0, 1], abs=1e-12)
    assert got["corr_train_loss_long_loss"] == pytest.approx(
        np.corrcoef(column["train_length_loss"], column["long_length_loss"])[0, 1], abs=1e-12)
    assert got["corr_train_loss_long_loss"] > 0.99  # both losses fall monotonically with w
    assert got["corr_advantage"] == pytest.approx(
        abs(got["corr_misalignment_long_loss"]) - abs(got["corr_train_loss_long_loss"]), abs=1e-15)


def test_sampler_follows_the_transition_matrix():
    problem = topic_lm.build(topic_lm.Config(vocab=4, topics=1, train_length=4, eval_lengths=(4,), eval_sequences=1),
                             RunContext(1).for_task())
    x = problem.sample(4000, 20, np.random.default_rng(0))
    counts = np.zeros((4, 4))
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    np.testing.assert_allclose(counts / counts.sum(1, keepdims=True), problem.transitions[0], atol=0.02)


def test_regression_scores_by_hand():
    ctx = RunContext(0).for_task()
    lp = length_prediction.build(length_prediction.Config(eval_lengths=(10, 20, 50), eval_sequences=4), ctx)
    exact = score(lp, RegressionResult({L: np.full(4, float(L)) for L in (10, 20, 50)}))
    assert exact["long_length_loss"] == 0.0 and exact["long_length_accuracy"] == 1.0
    stuck = score(lp, RegressionResult({L: np.full(4, 10.0) for L in (10, 20, 50)}))  # saturates at the training range
    assert stuck["train_length_loss"] == 0.0 and stuck["long_length_loss"] == 1600.0
    assert stuck["long_length_accuracy"] == 0
    assert trace(lp, RegressionResult({L: np.full(4, 10.0) for L in (10, 20, 50)}))["loss_at_length"] == [
        (10, 0.0), (20, 100.0), (50, 1600.0)]
    mp = mean_prediction.build(mean_prediction.Config(eval_lengths=(10, 50), eval_sequences=200), ctx)
    half = score(mp, RegressionResult({L: np.full(200, 0.5) for L in (10, 50)}))
    assert half["long_length_loss"] == pytest.approx(0.25 / 50, rel=0.3)  # Var(mean of 50 bits) = 1/200


def test_configs_reject_bad_values():
    with pytest.raises(ValueError, match="train_length"):
        topic_lm.Config(train_length=16, eval_lengths=(32, 64))
    with pytest.raises(ValueError, match="eval_lengths"):
        mean_prediction.Config(eval_lengths=(20, 50))
    with pytest.raises(ValueError, match="target"):
        RegressionProblem("sum", (1, 10), {}, {}, 0.1)
