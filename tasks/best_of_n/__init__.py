"""Best-of-n alignment: the KL divergence and win rate of the best-of-n policy.

Contract of the family (Beirami et al., "Theoretical Guarantees on the Best-of-n Alignment
Policy", ICML 2025, arXiv 2401.01879; our report docs/papers/best-of-n-kl.md):

A task builds a `BestOfNProblem`: a reference policy π over a finite outcome set (its probabilities and
rewards) and the number of draws n, or the continuous reference (`probs is None`: every outcome
has vanishing probability; outcomes are identified with their reward quantile u ∈ [0, 1]).
A method returns a `BestOfNResult`: a value of KL(π_n‖π) (exact, the analytical formula, the paper's
estimator, a Monte-Carlo estimate) and a win rate, or, for the trade-off baselines (KL-regularised
optimum, rewind-and-repeat), the policy they define at a given strength.
`score` is the only judge: every method is measured against the exact KL and win rate of the
best-of-n policy, computed here from the closed-form PMF (Lemma, §2)

    π_n(y) = F(y)^n − F⁻(y)^n,   F(y) = Σ_{z ⪯ y} π(z),   F⁻(y) = F(y) − π(y).

Ties (after Assumption 2.1): outcomes are ranked by reward, and equal rewards by their index in `probs`
(a later index ranks higher). Best-of-n picks the highest-ranked of its n draws, so the formulas
hold on that fixed total order, and win rates are measured on it too: y beats z when it ranks
higher, and y = z (the same outcome) counts ½.

Numerics: π_n(y) is evaluated as F^n·(1 − (1 − π/F)^n) with log1p/expm1, so outcomes with a
probability far below machine precision relative to F keep their mass (no F^n − F⁻^n
cancellation); zero-probability outcomes get π_n = 0 and are left out of every sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bench.spec import Metric


@dataclass(frozen=True, eq=False)
class BestOfNProblem:
    n: int                         # n, number of i.i.d. draws best-of-n chooses from
    probs: np.ndarray | None       # (K,) reference π(y) over the outcomes; None: continuous reference
    rewards: np.ndarray | None     # (K,) r(y); ties are broken by index (see the module docstring)
    outcomes: np.ndarray | None = None
    """Optional (K, T) description of the outcomes (token ids of the categorical LM, −1 padded)."""
    order: np.ndarray = field(init=False, repr=False)
    """(K,) outcome indices by increasing rank (reward, then index); empty when continuous."""

    def __post_init__(self) -> None:
        if not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise ValueError(f"n must be a positive integer, got {self.n!r}")
        if self.probs is None:
            if self.rewards is not None:
                raise ValueError("the continuous reference (probs=None) takes no rewards: outcomes are quantiles")
            object.__setattr__(self, "order", np.empty(0, dtype=int))
            return
        probs = np.asarray(self.probs, dtype=float)
        rewards = np.asarray(self.rewards, dtype=float)
        if probs.ndim != 1 or probs.size == 0 or rewards.shape != probs.shape:
            raise ValueError(f"probs and rewards must be 1-D of the same positive length, got shapes "
                             f"{probs.shape} and {rewards.shape}")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-9:
            raise ValueError(f"probs must be a probability vector (>= 0, summing to 1), sum is {probs.sum()!r}")
        if not np.all(np.isfinite(rewards)):
            raise ValueError("rewards must be finite")
        object.__setattr__(self, "probs", probs / probs.sum())
        object.__setattr__(self, "rewards", rewards)
        object.__setattr__(self, "order", np.lexsort((np.arange(probs.size), rewards)))

    @property
    def continuous(self) -> bool:
        return self.probs is None

    @property
    def size(self) -> int:
        """K, the number of outcomes (0 for the continuous reference)."""
        return 0 if self.probs is None else int(self.probs.size)


@dataclass(frozen=True, eq=False)
class BestOfNResult:
    kl: float                       # the method's value of KL (an estimate, or the KL of its policy)
    win_rate: float | None = None   # the method's win rate against π; None if it gives none
    policy: np.ndarray | None = None
    """(K,) the PMF of the policy the method defines (outcome order of `probs`), if it has one.
    `score` then measures KL and win rate on this PMF itself instead of trusting `kl`/`win_rate`."""
    strength: float | None = None   # β (KL-regularised optimum) or p (rewind-and-repeat)
    samples: int = 0                # M, Monte-Carlo samples behind `kl` (0: exact)
    kl_std_error: float | None = None  # standard error of a Monte-Carlo `kl`


METRICS = {
    "abs_error_to_exact": Metric(False, "nats", True, "|KL of the method − exact KL(π_n‖π)|; for a trade-off policy, "
                                 "how far its KL is from best-of-n's", bounds=(0.0, None)),
    "error_to_exact": Metric(False, "nats", False, "KL of the method − exact KL(π_n‖π), signed "
                             "(estimator ≥ 0: Conjecture 4.4)"),
    "kl_estimate": Metric(False, "nats", False, "the method's KL (of its policy, when it has one)", bounds=(0.0, None)),
    "kl_exact": Metric(False, "nats", False, "KL(π_n‖π) from the closed-form PMF", bounds=(0.0, None)),
    "kl_formula": Metric(False, "nats", False, "log n − (n−1)/n, the analytical formula", bounds=(0.0, None)),
    "gap_to_formula_bound": Metric(True, "nats", False, "log n − (n−1)/n − KL(π_n‖π); ≥ 0 by Theorem 3.1"),
    "gap_bound_renyi": Metric(False, "nats", False, "2n(n−1)·e^{−H₂}, the Rényi-2 upper bound on that gap "
                              "(secondary source)", bounds=(0.0, None)),
    "renyi2_entropy": Metric(True, "nats", False, "H₂ = −log Σ π(y)² of the reference (absent when continuous)",
                             bounds=(0.0, None)),
    "win_rate": Metric(True, "", False, "the method's win rate P(y ≻ z) + ½P(y = z), z ~ π", bounds=(0.0, 1.0)),
    "win_rate_exact": Metric(True, "", False, "win rate of the best-of-n policy, closed form", bounds=(0.0, 1.0)),
    "win_rate_bound": Metric(True, "", False, "n/(n+1), Theorem 5.3's upper bound", bounds=(0.0, 1.0)),
    "win_rate_gap_to_bound": Metric(False, "", False, "n/(n+1) − best-of-n's win rate; ≥ 0 by Theorem 5.3"),
    "win_rate_gap_bound_renyi": Metric(False, "", False, "((n−1)/2)·e^{−H₂}, upper bound on that gap "
                                       "(secondary source)", bounds=(0.0, None)),
    "win_rate_advantage": Metric(True, "", False, "the method's win rate − best-of-n's "
                                 "(trade-off methods: at best-of-n's KL)"),
    "strength": Metric(False, "", False, "β of the KL-regularised optimum or p of rewind-and-repeat"),
    "n": Metric(True, "", False, "n of the instance (x-axis of rate claims)"),
}


# ---- the closed forms ----------------------------------------------------------------------------

def kl_formula(n: int) -> float:
    """log n − (n−1)/n: the folklore KL of best-of-n, an upper bound (Theorem 3.1)."""
    return math.log(n) - (n - 1) / n


def win_rate_bound(n: int) -> float:
    """n/(n+1): Theorem 5.3's bound, attained by a continuous reference."""
    return n / (n + 1)


def accurate_cumsum(p: np.ndarray) -> np.ndarray:
    """Cumulative sums of a probability vector, normalised so that the last is exactly 1.

    Summed in extended precision (np.longdouble; plain double where the platform has no wider
    type): a double cumsum over 10⁶ terms drifts by ~1e-13, which F^n amplifies n-fold.
    """
    c = np.cumsum(p, dtype=np.longdouble)
    return (c / c[-1]).astype(float)


def ranked(problem: BestOfNProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(π, F⁻, F) along the rank order (increasing reward, ties by index); F of the top is 1."""
    p = problem.probs[problem.order]
    cdf = accurate_cumsum(p)
    below = np.concatenate(([0.0], cdf[:-1]))           # F⁻: mass ranked strictly below
    return p, below, np.maximum(cdf, p)                  # F ≥ π, so π/F ≤ 1 exactly


def _unrank(problem: BestOfNProblem, values: np.ndarray) -> np.ndarray:
    out = np.empty_like(values)
    out[problem.order] = values
    return out


def bon_pmf_ranked(p: np.ndarray, cdf: np.ndarray, n: int) -> np.ndarray:
    """π_n = F^n − F⁻^n along the rank order, as F^n·(1 − (1 − π/F)^n) (no cancellation)."""
    pmf = np.zeros_like(p)
    m = p > 0
    ratio = np.minimum(p[m] / cdf[m], 1.0)
    with np.errstate(divide="ignore"):
        pmf[m] = np.exp(n * np.log(cdf[m])) * -np.expm1(n * np.log1p(-ratio))
    return pmf


def bon_pmf(problem: BestOfNProblem) -> np.ndarray:
    """(K,) π_n(y) in the outcome order of `probs` (Lemma, §2)."""
    p, _, cdf = ranked(problem)
    return _unrank(problem, bon_pmf_ranked(p, cdf, problem.n))


def mid_quantiles(problem: BestOfNProblem) -> np.ndarray:
    """(K,) q(y) = F⁻(y) + ½π(y): the probability that y beats z ~ π (ties on the order: ½)."""
    p, below, _ = ranked(problem)
    return _unrank(problem, below + 0.5 * p)


def kl_divergence(policy: np.ndarray, problem: BestOfNProblem) -> float:
    """KL(policy‖π) over the outcomes; +inf if the policy puts mass where π has none."""
    policy = np.asarray(policy, dtype=float)
    m = policy > 0
    if np.any(problem.probs[m] <= 0):
        return math.inf
    return float(np.sum(policy[m] * (np.log(policy[m]) - np.log(problem.probs[m]))))


def win_rate_of(policy: np.ndarray, problem: BestOfNProblem) -> float:
    """Σ_y policy(y)·q(y): P(y ≻ z) + ½P(y = z) for y ~ policy, z ~ π independent."""
    return float(np.dot(np.asarray(policy, dtype=float), mid_quantiles(problem)))


def bon_kl(problem: BestOfNProblem) -> float:
    """KL(π_n‖π) exactly; log n − (n−1)/n for the continuous reference."""
    if problem.continuous:
        return kl_formula(problem.n)
    return kl_divergence(bon_pmf(problem), problem)


def bon_win_rate(problem: BestOfNProblem) -> float:
    """Best-of-n's win rate Σ π_n(F⁻ + ½π) (paper §5); n/(n+1) for the continuous reference."""
    if problem.continuous:
        return win_rate_bound(problem.n)
    return win_rate_of(bon_pmf(problem), problem)


def collision_probability(problem: BestOfNProblem) -> float:
    """e^{−H₂} = Σ π(y)² (0 for the continuous reference)."""
    return 0.0 if problem.continuous else float(np.dot(problem.probs, problem.probs))


def estimator_term(eps: np.ndarray | float, n: int) -> np.ndarray:
    """D̂(ε, n) of the paper's §4, elementwise; ε = π(y) of an observed best-of-n output.

        D̂ = (1−ε)^n·[log n + (n−1)·log(1−ε) − (n−1)/n] + (1 − (1−ε)^n)·log((1 − (1−ε)^n)/ε)

    It is the exact KL for a reference with one atom of mass ε on top of a continuum, so
    D̂(0, n) = log n − (n−1)/n (the limit) and D̂(1, n) = 0.
    """
    eps = np.asarray(eps, dtype=float)
    if np.any((eps < 0) | (eps > 1)) or not np.all(np.isfinite(eps)):
        raise ValueError("ε must lie in [0, 1]")
    with np.errstate(divide="ignore", invalid="ignore"):
        log_rest = np.log1p(-eps)                    # log(1−ε); −inf at ε = 1
        stay = np.exp(n * log_rest)                  # (1−ε)^n, 0 when it underflows
        first = np.where(stay > 0, stay * (math.log(n) + (n - 1) * log_rest - (n - 1) / n), 0.0)
        moved = -np.expm1(n * log_rest)              # 1 − (1−ε)^n
        second = np.where(eps > 0, moved * (np.log(moved) - np.log(eps)), 0.0)
        second = np.where(moved > 0, second, 0.0)
    return first + second


def expected_estimator(problem: BestOfNProblem) -> float:
    """E_{y~π_n} D̂(π(y), n), the estimator's expectation (exact sum over the outcomes)."""
    if problem.continuous:
        return float(estimator_term(0.0, problem.n))
    pmf = bon_pmf(problem)
    m = pmf > 0
    return float(np.dot(pmf[m], estimator_term(problem.probs[m], problem.n)))


# ---- the judge -----------------------------------------------------------------------------------

def score(problem: BestOfNProblem, result: BestOfNResult) -> dict[str, float]:
    n = problem.n
    exact = bon_kl(problem)
    exact_win = bon_win_rate(problem)
    formula = kl_formula(n)
    collision = collision_probability(problem)
    if result.policy is not None and not problem.continuous:
        policy = np.asarray(result.policy, dtype=float)
        if policy.shape != problem.probs.shape or np.any(policy < 0) or abs(policy.sum() - 1) > 1e-6:
            raise ValueError("BestOfNResult.policy must be a probability vector over the problem's outcomes")
        kl, win = kl_divergence(policy, problem), win_rate_of(policy, problem)
    else:
        kl, win = float(result.kl), result.win_rate
    scores = {
        "abs_error_to_exact": abs(kl - exact),
        "error_to_exact": kl - exact,
        "kl_estimate": kl,
        "kl_exact": exact,
        "kl_formula": formula,
        "gap_to_formula_bound": formula - exact,
        "gap_bound_renyi": 2.0 * n * (n - 1) * collision,
        "win_rate_exact": exact_win,
        "win_rate_bound": win_rate_bound(n),
        "win_rate_gap_to_bound": win_rate_bound(n) - exact_win,
        "win_rate_gap_bound_renyi": 0.5 * (n - 1) * collision,
        "n": float(n),
    }
    if not problem.continuous:
        scores["renyi2_entropy"] = -math.log(collision)
    if win is not None:
        scores["win_rate"] = float(win)
        scores["win_rate_advantage"] = float(win) - exact_win
    if result.strength is not None:
        scores["strength"] = float(result.strength)
    return scores
