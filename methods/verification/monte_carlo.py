"""Monte-Carlo estimation with Clopper–Pearson confidence intervals (statistical baseline).

The sampling baselines of the paper (VeriFair, ProVe_SLR, eProVe) estimate the probabilities from
i.i.d. inputs; this is the plain version: for every P(φ | ψ) draw x ~ D conditioned on the box of
ψ's input-bound conjuncts (exact: truncated factors, components reweighted by their box mass),
evaluate f, and count the samples in ψ and those in φ ∧ ψ; the conditional probability gets an exact (Clopper–Pearson)
binomial interval. Samples are drawn in doubling batches; after batch t every interval is taken at
level δ_t = δ / (m·(t + 1)(t + 2)) (a union bound over the m probabilities and all looks, so the
whole anytime sequence of intervals holds with probability ≥ 1 − δ). The formula is evaluated
on the intervals with interval arithmetic and three-valued logic; the verdict is statistical
(`certain=False`), correct with probability ≥ 1 − δ, never a proof.

Fidelity: approximate (a generic statistical baseline, not VeriFair's adaptive concentration).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats

from bench.context import RunContext
from bench.registry import method
from methods.verification._bab import flatten, root_box
from tasks.verification import (
    And,
    VerificationProblem,
    VerificationResult,
    decide,
    holds,
    interval,
    one_thread,
    split_input_bounds,
)

SMOKE = {"max_samples": 20_000}


SWITCHED_OFF = ("a baseline of the paper (Monte-Carlo estimation with Clopper–Pearson intervals, the statistical "
                "methods' stand-in): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    confidence: float = 0.999         # 1 − δ for the whole anytime sequence of intervals
    initial_samples: int = 10_000     # first batch; batches double
    max_samples: int = 10_000_000     # sample budget
    time_limit_s: float = 60.0        # time budget
    precision: float = 0.0            # > 0: sample until every interval is this tight; 0: until decided
    chunk: int = 1_000_000            # samples per network call

    def __post_init__(self) -> None:
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {self.confidence}")
        if min(self.initial_samples, self.max_samples, self.chunk) < 1 or self.time_limit_s <= 0 or self.precision < 0:
            raise ValueError("sample counts must be >= 1, time_limit_s > 0, precision >= 0")


def clopper_pearson(k: np.ndarray, n: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided binomial interval at level 1 − δ (n = 0: [0, 1])."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(delta / 2, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - delta / 2, k + 1, n - k), 1.0)
    return np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=1.0)


def _given_box(problem: VerificationProblem, p):
    """The box of ψ's input-bound conjuncts: samples come from D conditioned on it."""
    _, bounds = split_input_bounds(And(tuple(flatten(p.given))))
    return root_box(problem.population.space, bounds)


def _count(problem: VerificationProblem, probs, boxes, n: int, chunk: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(hits in φ ∧ ψ, samples in ψ) per probability, each from n fresh samples of D | box(ψ)."""
    hits, given = np.zeros(len(probs)), np.zeros(len(probs))
    for i, (p, (lb, ub)) in enumerate(zip(probs, boxes)):
        for size in [chunk] * (n // chunk) + ([n % chunk] if n % chunk else []):
            x = torch.as_tensor(problem.population.sample(size, rng, lb, ub))
            y = problem.network.forward(x)
            g = holds(p.given, y, x)
            given[i] += float(g.sum())
            hits[i] += float((g & holds(p.event, y, x)).sum())
    return hits, given


@method(family="verification", config=Config, smoke=SMOKE)
@one_thread
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    start = time.perf_counter()
    probs = problem.probabilities
    boxes = [_given_box(problem, p) for p in probs]
    hits, given = np.zeros(len(probs)), np.zeros(len(probs))
    drawn, batch, t = 0, config.initial_samples, 0
    while True:
        n = min(batch, config.max_samples - drawn)
        h, g = _count(problem, probs, boxes, n, config.chunk, ctx.rng)
        hits, given, drawn = hits + h, given + g, drawn + n
        delta = (1 - config.confidence) / (len(probs) * (t + 1) * (t + 2))
        lo, hi = clopper_pearson(hits, given, delta)
        bounds = {p.name: (float(a), float(b)) for p, a, b in zip(probs, lo, hi)}
        target = interval(problem.target, bounds)
        ctx.log(drawn, lower=target[0], upper=target[1])
        verdict = decide(problem.spec, bounds) if problem.spec is not None else None
        t, batch = t + 1, batch * 2
        tight = config.precision > 0 and all(b - a <= config.precision for a, b in bounds.values())
        if tight or (verdict is not None and config.precision == 0) or drawn >= config.max_samples \
                or time.perf_counter() - start >= config.time_limit_s:
            break
        ctx.check_deadline()
        ctx.progress(drawn / config.max_samples)
    return VerificationResult(verdict, bounds, target, t, time.perf_counter() - start, certain=False)
