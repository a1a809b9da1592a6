"""Exact best-of-n: the closed-form PMF π_n = F^n − F⁻^n (Beirami et al., ICML 2025, §2 Lemma).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. The policy
is the quantile transform of the maximum of n uniforms; on a finite reference its PMF is
π_n(y) = F(y)^n − F⁻(y)^n along the reward order (ties broken by index, after Assumption 2.1). Returns the PMF,
KL(π_n‖π) = Σ π_n log(π_n/π) and the win rate Σ π_n·(F⁻ + ½π) (paper §5). On the continuous
reference these are log n − (n−1)/n and n/(n+1).

Fidelity: faithful (closed form; evaluated without cancellation, see tasks/best_of_n).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.best_of_n import (
    BestOfNProblem,
    BestOfNResult,
    bon_pmf,
    kl_divergence,
    kl_formula,
    win_rate_bound,
    win_rate_of,
)

SWITCHED_OFF = ("a reference (the exact best-of-n distribution, the paper's Lemma in closed form): the paper's "
                "theorems are about what it computes, there is no mechanism to switch off")


@dataclass(frozen=True)
class Config:
    pass


@method(family="best_of_n", config=Config,
        reference="the exact best-of-n distribution: the errors of the other methods are measured against it")
def solve(problem: BestOfNProblem, config: Config, ctx: RunContext) -> BestOfNResult:
    if problem.continuous:
        return BestOfNResult(kl=kl_formula(problem.n), win_rate=win_rate_bound(problem.n))
    pmf = bon_pmf(problem)
    return BestOfNResult(kl=kl_divergence(pmf, problem), win_rate=win_rate_of(pmf, problem), policy=pmf)
