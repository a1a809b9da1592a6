"""The paper's KL estimator D̂(ε, n) averaged over best-of-n outputs (Beirami et al., ICML 2025, §4).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. For an
observed best-of-n output y with reference probability ε = π(y):

    D̂(ε, n) = (1−ε)^n·[log n + (n−1)·log(1−ε) − (n−1)/n] + (1 − (1−ε)^n)·log((1 − (1−ε)^n)/ε)

and KL̂_n = (1/M) Σ_j D̂(π(y_j), n), y_j ~ π_n. It needs only the probabilities of the outputs
best-of-n produced (no ranking of the whole outcome set). `samples = 0` returns its expectation
Σ_y π_n(y)·D̂(π(y), n) exactly (the "expected estimator" column of docs/papers/best-of-n-kl.md); `samples = M` draws M
outputs from π_n by inverse CDF, reports the mean, its standard error, and the running mean as the
curve `kl_estimate` at log-spaced M. Conjecture 4.4: the expectation upper-bounds the true KL.

Fidelity: faithful for the formula (re-derived in our report as the exact KL of a one-atom-plus-
continuum reference); M = O(log n·log(1/δ)) is the paper's sample count (secondary source).
The estimator gives no win rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.best_of_n import _common
from tasks.best_of_n import BestOfNProblem, BestOfNResult, bon_pmf_ranked, estimator_term, expected_estimator, ranked

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"samples": 100}


# The estimator's correction off: D̂(ε, n) with ε ≡ 0 (no output's reference probability taken into account) is
# D̂(0, n) = log n − (n−1)/n (§4; tasks.best_of_n.estimator_term), the formula bon_formula reports; on the
# continuous reference, where every output has ε = 0, the two KLs are equal bit for bit
# (tests/methods/best_of_n/test_switched_off.py)
SWITCHED_OFF = {"ε ≡ 0 (the formula log n − (n−1)/n)": ("bon_formula", {})}


@dataclass(frozen=True)
class Config:
    samples: int = 0   # M, best-of-n outputs averaged; 0: the exact expectation over π_n

    def __post_init__(self) -> None:
        if self.samples < 0:
            raise ValueError(f"samples must be >= 0 (0 = exact expectation), got {self.samples}")


@method(family="best_of_n", config=Config, smoke=SMOKE)
def solve(problem: BestOfNProblem, config: Config, ctx: RunContext) -> BestOfNResult:
    if config.samples == 0:
        return BestOfNResult(kl=expected_estimator(problem))
    if problem.continuous:  # every output has ε = 0: D̂(0, n) = log n − (n−1)/n, no spread
        values = np.full(config.samples, float(estimator_term(0.0, problem.n)))
    else:
        p, _, cdf = ranked(problem)
        pmf = bon_pmf_ranked(p, cdf, problem.n)
        positions = _common.sample_ranks(np.cumsum(pmf), config.samples, ctx.rng)
        values = estimator_term(p[positions], problem.n)
    _common.log_running_mean(values, ctx, "kl_estimate")
    return BestOfNResult(kl=float(values.mean()), samples=config.samples, kl_std_error=_common.std_error(values))
