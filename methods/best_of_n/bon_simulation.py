"""Best-of-n by simulation: draw n, keep the best, M times (Beirami et al., ICML 2025, §2, §5).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. The policy as
defined (not its closed form): each of M trials draws y_1..y_n i.i.d. from π and keeps the
highest-ranked (reward, ties by index), and a paired z ~ π. Reports

  - the Monte-Carlo win rate (1/M) Σ [1(y ≻ z) + ½·1(y = z)] ("paired draws"), and
  - the Monte-Carlo KL (1/M) Σ log(π_n(y)/π(y)) with the closed-form π_n at the simulated outputs,
    the LLM experiment's reference estimate (there with F estimated from reference samples);
    its standard error and running mean (curve `kl_estimate`).

On the continuous reference y is the maximum of n uniforms and log(π_n/π) = log n + (n−1)·log u.
It checks the Lemma: if π_n were wrong the simulated outputs would not follow it and both
averages would drift from the closed forms.

Fidelity: faithful to the definition. Cost: M·n reference draws (chunked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.best_of_n import _common
from tasks.best_of_n import BestOfNProblem, BestOfNResult, bon_pmf_ranked, ranked

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"samples": 200}

DRAWS_PER_CHUNK = 2_000_000  # reference draws held in memory at once


SWITCHED_OFF = ("the best-of-n policy as defined, simulated (a check of the closed form): its mechanism is its "
                "whole definition, no setting removes it")


@dataclass(frozen=True)
class Config:
    samples: int = 1000   # M, simulated best-of-n outputs

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"samples must be >= 1, got {self.samples}")


def _best_of_n(draw, n: int, trials: int) -> np.ndarray:
    """The maximum over n draws, for each of `trials` trials (chunks of ≤ DRAWS_PER_CHUNK draws)."""
    per_chunk = max(1, DRAWS_PER_CHUNK // n)
    best = []
    for start in range(0, trials, per_chunk):
        m = min(per_chunk, trials - start)
        best.append(draw((m, n)).max(axis=1))
    return np.concatenate(best)


@method(family="best_of_n", config=Config, smoke=SMOKE)
def solve(problem: BestOfNProblem, config: Config, ctx: RunContext) -> BestOfNResult:
    n, M, rng = problem.n, config.samples, ctx.rng
    if problem.continuous:
        u = _best_of_n(lambda shape: rng.random(shape), n, M)
        z = rng.random(M)
        log_ratio = math.log(n) + (n - 1) * np.log(u)       # log of the density n·u^{n−1}
        wins = (u > z) + 0.5 * (u == z)
    else:
        p, _, cdf = ranked(problem)
        cumulative = np.cumsum(p)

        def draw(shape):
            return _common.sample_ranks(cumulative, int(np.prod(shape)), rng).reshape(shape)

        y = _best_of_n(draw, n, M)                            # positions along the rank order
        z = draw((M,))
        pmf = bon_pmf_ranked(p, cdf, n)
        log_ratio = np.log(pmf[y]) - np.log(p[y])
        wins = (y > z) + 0.5 * (y == z)
    _common.log_running_mean(log_ratio, ctx, "kl_estimate")
    return BestOfNResult(kl=float(log_ratio.mean()), win_rate=float(wins.mean()), samples=M,
                  kl_std_error=_common.std_error(log_ratio))
