"""Shared pieces of the best-of-n methods (Beirami et al., ICML 2025, arXiv 2401.01879).

Not a registered method (leading underscore): inverse-CDF sampling along the rank order, a
monotone root finder used to put the trade-off policies at best-of-n's KL, the continuous-model
closed forms of the KL-regularised optimum, and the Monte-Carlo bookkeeping.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from bench.context import RunContext, log_spaced_steps
from tasks.best_of_n import BestOfNProblem, ranked


def sample_ranks(cumulative: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Positions along the rank order of `size` draws from the law with cumulative sums `cumulative`.

    Inverse CDF: the first position whose cumulative mass exceeds u ~ U[0, 1); zero-mass positions
    are never returned, and a u beyond the last (rounded) cumulative sum maps to the last
    position of positive mass.
    """
    pos = np.searchsorted(cumulative, rng.random(size) * cumulative[-1], side="right")
    last = int(np.flatnonzero(np.diff(np.concatenate(([0.0], cumulative))) > 0)[-1])
    return np.minimum(pos, last)


def log_running_mean(values: np.ndarray, ctx: RunContext, name: str) -> None:
    """Curve `name`: the running mean of `values` after m = 1..M samples, at log-spaced m."""
    steps = log_spaced_steps(values.size, 60)
    means = np.cumsum(values)[steps - 1] / steps
    for m, v in zip(steps.tolist(), means.tolist()):
        ctx.log(m, **{name: v})


def std_error(values: np.ndarray) -> float | None:
    return float(np.std(values, ddof=1) / math.sqrt(values.size)) if values.size > 1 else None


def solve_monotone(f: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """x in [lo, hi] with f(x) = target, f monotone (either direction) and continuous."""
    f_lo, f_hi = f(lo) - target, f(hi) - target
    if f_lo == 0:
        return lo
    if f_hi == 0:
        return hi
    if f_lo * f_hi > 0:
        raise ValueError(f"target {target!r} is outside [{f(lo)!r}, {f(hi)!r}]")
    return brentq(lambda x: f(x) - target, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)


def grow_bracket(f: Callable[[float], float], target: float, start: float = 1.0, limit: float = 1e12) -> float:
    """Smallest start·2^k with f(x) ≥ target (f increasing); `limit` if none below it."""
    x = start
    while f(x) < target and x < limit:
        x *= 2.0
    return min(x, limit)


# ---- rank-order quantities --------------------------------------------------------------------

def survival(problem: BestOfNProblem) -> tuple[np.ndarray, np.ndarray]:
    """(S, S⁺) along the rank order: mass ranked at or above y, and strictly above y.

    Summed from the top, so the rare top outcomes keep their precision (1 − F⁻ would lose a mass
    below machine epsilon).
    """
    p = problem.probs[problem.order]
    at_or_above = np.cumsum(p[::-1], dtype=np.longdouble)[::-1]
    return at_or_above.astype(float), (at_or_above - p).astype(float)


def top_position(problem: BestOfNProblem) -> int:
    """Position (rank order) of the highest-ranked outcome of positive probability."""
    p, _, _ = ranked(problem)
    return int(np.flatnonzero(p > 0)[-1])


# ---- the KL-regularised optimum in the continuous model ----------------------------------------

def continuous_tilt(a: float) -> tuple[float, float]:
    """(KL, win rate) of p_a(u) ∝ exp(a·u) on [0, 1] against Uniform(0, 1), a = 1/β ≥ 0.

    W = E[u] = 1/(1 − e^{−a}) − 1/a and KL = a·W − log((e^a − 1)/a); a series for small a.
    """
    if a < 1e-3:
        return a * a / 24 - a**4 / 2880, 0.5 + a / 12 - a**3 / 720
    win = 1.0 / -math.expm1(-a) - 1.0 / a
    log_z = a + math.log1p(-math.exp(-a)) - math.log(a)
    return a * win - log_z, win
