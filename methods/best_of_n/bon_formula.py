"""The analytical formula KL = log n − (n−1)/n and win rate n/(n+1) (Beirami et al., ICML 2025, §3).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. The
"folklore" KL of best-of-n, used in the alignment literature as if exact; the paper proves it is
only an upper bound (Theorem 3.1), attained when every outcome has vanishing probability, and that
it can be arbitrarily far off (two equiprobable outcomes: KL → log 2). Likewise n/(n+1) is the
continuous-reference win rate, an upper bound in general (Theorem 5.3). This is the baseline
estimator the paper refutes; it ignores the reference entirely.

Fidelity: faithful.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.best_of_n import BestOfNProblem, BestOfNResult, kl_formula, win_rate_bound

SWITCHED_OFF = ("a baseline of the paper (the folklore formula log n − (n−1)/n and n/(n+1) that it refutes): there "
                "is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    pass


@method(family="best_of_n", config=Config)
def solve(problem: BestOfNProblem, config: Config, ctx: RunContext) -> BestOfNResult:
    return BestOfNResult(kl=kl_formula(problem.n), win_rate=win_rate_bound(problem.n))
