"""Helpers shared by the best-of-n method tests."""

import numpy as np

from bench.context import RunContext
from tasks.best_of_n import BestOfNProblem, score


def problem(probs, n, rewards=None):
    probs = np.asarray(probs, dtype=float)
    rewards = np.arange(float(probs.size)) if rewards is None else np.asarray(rewards, dtype=float)
    return BestOfNProblem(n=n, probs=probs / probs.sum(), rewards=rewards)


def continuous(n):
    return BestOfNProblem(n=n, probs=None, rewards=None)


def run(module, prob, seed=0, **config):
    """(BestOfNResult, scores) of a method module on a problem."""
    ctx = RunContext(seed=seed)
    result = module.solve(prob, module.Config(**config), ctx)
    return result, score(prob, result), ctx


def random_references(count, seed=0, ties=True):
    rng = np.random.default_rng(seed)
    for i in range(count):
        L = int(rng.integers(2, 80))
        probs = rng.dirichlet(np.full(L, float(rng.choice([0.1, 0.5, 1.0, 5.0]))))
        rewards = rng.integers(0, 4, size=L) if ties and i % 2 == 0 else rng.standard_normal(L)
        yield probs, rewards
