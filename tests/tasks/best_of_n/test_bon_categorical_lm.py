"""Categorical-LM sequences: exact probabilities, lengths, rewards, and the spec-§8 checks."""

import math

import numpy as np
import pytest

from bench.context import RunContext
from tasks.best_of_n import bon_kl, bon_pmf, expected_estimator, kl_formula
from tasks.best_of_n.bon_categorical_lm import Config, _dirichlet, build, enumerate_sequences, num_sequences


def make(**kw):
    return build(Config(**kw), RunContext(seed=0).for_task())


def test_enumeration_matches_a_hand_computed_probability():
    first = np.array([0.1, 0.6, 0.3])                       # EOS, a, b
    trans = np.array([[1.0, 0.0, 0.0], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
    tokens, logp = enumerate_sequences(first, trans, max_len=2)
    seqs = {tuple(int(t) for t in row if t >= 0): math.exp(lp) for row, lp in zip(tokens, logp, strict=True)}
    assert len(seqs) == num_sequences(3, 2) == 1 + 2 + 4
    assert seqs[()] == pytest.approx(0.1)
    assert seqs[(1,)] == pytest.approx(0.6 * 0.2)           # a, then EOS
    assert seqs[(1, 2)] == pytest.approx(0.6 * 0.3)         # a b, truncated at max_len
    assert seqs[(2, 2)] == pytest.approx(0.3 * 0.2)
    assert sum(seqs.values()) == pytest.approx(1.0, abs=1e-15)
    # min_len = 1: no empty sequence; the first token is renormalised over a, b
    tokens, logp = enumerate_sequences(first, trans, max_len=2, min_len=1)
    seqs = {tuple(int(t) for t in row if t >= 0): math.exp(lp) for row, lp in zip(tokens, logp, strict=True)}
    assert () not in seqs and seqs[(1,)] == pytest.approx(0.6 / 0.9 * 0.2)
    assert sum(seqs.values()) == pytest.approx(1.0, abs=1e-15)


def test_default_instance():
    problem = make()
    assert problem.size == num_sequences(10, 5) == 66_430
    assert problem.probs.sum() == pytest.approx(1.0, abs=1e-12)
    lengths = np.sum(problem.outcomes >= 0, axis=1)
    assert lengths.min() == 0 and lengths.max() == 5
    assert np.all(problem.outcomes[problem.outcomes >= 0] >= 1)   # EOS is never stored as a token
    np.testing.assert_allclose(problem.rewards, np.log(problem.probs), rtol=1e-12)
    assert len({tuple(row) for row in problem.outcomes.tolist()}) == problem.size


def test_neg_length_reward_ties_and_its_order():
    problem = make(reward="neg_length")
    lengths = np.sum(problem.outcomes >= 0, axis=1)
    np.testing.assert_array_equal(problem.rewards, -lengths)
    top = problem.order[-1]
    assert lengths[top] == 0                       # the empty sequence ranks highest
    assert bon_pmf(problem).sum() == pytest.approx(1.0, abs=1e-12)


def test_world_seed_fixes_the_model_and_none_uses_the_run_seed():
    a = build(Config(), RunContext(seed=0).for_task()).probs
    b = build(Config(), RunContext(seed=3).for_task()).probs
    np.testing.assert_array_equal(a, b)
    c = build(Config(world_seed=None), RunContext(seed=3).for_task()).probs
    d = build(Config(world_seed=None), RunContext(seed=4).for_task()).probs
    assert not np.array_equal(c, d)


def test_low_entropy_prompt_formula_far_off_estimator_close():
    """Spec §8: on a low-entropy prompt the estimator error is smaller than the formula's."""
    for n in (16, 64):
        problem = make(alpha=0.1, n=n)
        kl = bon_kl(problem)
        assert abs(expected_estimator(problem) - kl) < abs(kl_formula(n) - kl)
        assert kl_formula(n) - kl > 0.2


def test_high_entropy_prompt_all_agree():
    problem = make(alpha=1.0, min_len=5, n=16)
    kl = bon_kl(problem)
    assert abs(kl_formula(16) - kl) < 1e-2 and abs(expected_estimator(problem) - kl) < 1e-2


def test_dirichlet_floor_keeps_log_likelihoods_finite():
    draws = _dirichlet(np.random.default_rng(0), 1e-3, (50, 10))
    assert np.all(draws > 0) and np.allclose(draws.sum(axis=1), 1.0)
    assert np.all(np.isfinite(make(alpha=0.001, min_len=2).rewards))


@pytest.mark.parametrize("kw", [dict(vocab=1), dict(max_len=0), dict(min_len=6), dict(alpha=0.0),
                                dict(reward="length"), dict(n=0), dict(vocab=40, max_len=6)])
def test_config_validation(kw):
    with pytest.raises(ValueError):
        Config(**kw)
