"""The statistics a verdict rests on: an interval per measured quantity, a p-value per claim, Holm across a paper.

Every claim reduces to conditions "quantity θ on the claimed side of a threshold m" (an ordering's paired gap above
its margin, a bound's group mean inside it, a value inside the paper's band, a slope inside its tolerance). θ is
estimated from per-seed values by

* `t`: the mean, its standard error and Student's t with n − 1 degrees of freedom (scipy.stats.ttest_1samp): the
  default, exact for normal per-seed values and robust at the 3-20 seeds the CPU worlds run;
* `bootstrap`: the percentile bootstrap of the mean (scipy.stats.bootstrap, 9,999 resamples, a fixed seed so that the
  verdict is a function of the data): chosen per claim (`interval: bootstrap`) for skewed per-seed values;
* `ols`: a least-squares slope with n − 2 degrees of freedom (scipy.stats.linregress), for a rate fitted to one curve;
* `exact`: a quantity that does not depend on the seed (a claim's `deterministic:` reason): the interval is the value.

A condition's two one-sided p-values say how surely θ lies above or below m; the two-sided 95 % interval lies
entirely on one side exactly when twice the smaller one is below 0.05. Holm's step-down procedure (Holm 1979,
Scand. J. Statist. 6:65-70) adjusts the claims' p-values within a paper for the family-wise error; it is six lines,
so it is written here rather than adding statsmodels (whose `multipletests` gives the same numbers) as a dependency.

`seeds_needed` is the smallest n at which a one-sample t-test at the adjusted level has 80 % power against the observed
effect and spread (the noncentral t, scipy.stats.nct): what an underpowered claim would need to be decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05          # two-sided: a 95 % interval
POWER = 0.8
MAX_SEEDS = 10_000    # beyond this a power calculation says "no effect to detect", not a number
BOOTSTRAP_RESAMPLES = 9_999
METHODS = ("t", "bootstrap", "ols", "exact")


@dataclass(frozen=True)
class Estimate:
    """A quantity measured over seeds (or a fit): its estimate, spread and sampling law."""

    value: float
    n: int
    sd: float                  # per-seed standard deviation (0 for an exact quantity; NaN below 2 values)
    method: str                # one of METHODS
    se: float = float("nan")   # the estimate's standard error (t, ols)
    df: float = float("nan")   # degrees of freedom of its t law (t, ols)
    draws: tuple[float, ...] = ()  # bootstrap replicates of the mean (bootstrap)

    def interval(self, alpha: float = ALPHA) -> tuple[float, float]:
        """The two-sided (1 − alpha) interval; (NaN, NaN) when the data cannot give one (one seed, not exact)."""
        if self.method == "exact":
            return self.value, self.value
        if self.method == "bootstrap" and self.draws:
            lo, hi = np.quantile(self.draws, [alpha / 2, 1 - alpha / 2])
            return float(lo), float(hi)
        if not (np.isfinite(self.se) and np.isfinite(self.df)):
            return float("nan"), float("nan")
        if self.se == 0:
            return self.value, self.value
        half = _t_ppf(1 - alpha / 2, self.df) * self.se
        return self.value - half, self.value + half

    def p_above(self, m: float, strict: bool = True) -> float:
        """One-sided p-value of H0: θ ≤ m (small when θ is surely above m); NaN when there is no law. Without
        spread (an exact quantity, or equal values in every seed) it is 0 or 1: θ > m, or θ ≥ m when not strict."""
        return self._p(m, above=True, strict=strict)

    def p_below(self, m: float, strict: bool = True) -> float:
        """One-sided p-value of H0: θ ≥ m."""
        return self._p(m, above=False, strict=strict)

    def _p(self, m: float, above: bool, strict: bool) -> float:
        if not np.isfinite(self.value):
            return float("nan")
        if self.method == "exact" or (self.method in ("t", "ols") and self.se == 0):
            if strict:
                holds = self.value > m if above else self.value < m
            else:
                holds = self.value >= m if above else self.value <= m
            return 0.0 if holds else 1.0
        if self.method == "bootstrap" and self.draws:
            draws = np.asarray(self.draws)
            # the share of replicates on the other side of m (plus one: a bootstrap p is never exactly 0)
            other = np.sum(draws <= m) if above else np.sum(draws >= m)
            return float((other + 1) / (len(draws) + 1))
        if not (np.isfinite(self.se) and np.isfinite(self.df)):
            return float("nan")
        z = (self.value - m) / self.se
        return _t_sf(z, self.df) if above else _t_cdf(z, self.df)


def estimate(values, method: str = "t", deterministic: bool = False) -> Estimate:
    """The mean of finite per-seed values with its law; exact when the claim says the quantity has no seed noise."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return Estimate(float("nan"), 0, float("nan"), method)
    mean = float(np.mean(x))
    sd = float(np.std(x, ddof=1)) if n > 1 else float("nan")
    if deterministic:
        return Estimate(mean, n, 0.0 if n == 1 else sd, "exact")
    if n < 2:
        return Estimate(mean, n, sd, method)
    se, df = sd / math.sqrt(n), float(n - 1)
    if method == "bootstrap" and sd > 0:
        result = _stats().bootstrap((x,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, method="percentile",
                                 random_state=np.random.default_rng(0), vectorized=True)
        return Estimate(mean, n, sd, "bootstrap", se, df, tuple(float(d) for d in result.bootstrap_distribution))
    return Estimate(mean, n, sd, "t", se, df)


def slope_estimate(x, y) -> Estimate:
    """The least-squares slope of y on x with its standard error (n − 2 degrees of freedom)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return Estimate(float("nan"), len(x), float("nan"), "ols")
    if len(x) == 2:
        slope = float((y[1] - y[0]) / (x[1] - x[0]))
        return Estimate(slope, 2, float("nan"), "ols")
    fit = _stats().linregress(x, y)
    return Estimate(float(fit.slope), len(x), float("nan"), "ols", float(fit.stderr), float(len(x) - 2))


@dataclass(frozen=True)
class Condition:
    """θ on the claimed side of m: `side` +1 for θ > m (or ≥ m for a non-inferiority margin), −1 for θ < m."""

    label: str
    estimate: Estimate
    threshold: float
    side: int
    strict: bool = True        # without spread, θ = m fails ("X beats Y" is no tie); a bound or margin holds at θ = m

    def p_holds(self) -> float:
        """Two-sided p that θ is on the claimed side (twice the one-sided p, capped at 1)."""
        e, m = self.estimate, self.threshold
        return _two_sided(e.p_above(m, self.strict) if self.side > 0 else e.p_below(m, self.strict))

    def p_fails(self) -> float:
        """Two-sided p that θ is on the other side."""
        e, m = self.estimate, self.threshold
        return _two_sided(e.p_below(m, not self.strict) if self.side > 0 else e.p_above(m, not self.strict))


@dataclass(frozen=True)
class Decision:
    """A claim's conditions combined: it holds when every condition does (intersection-union: the largest p), and
    fails when any one surely fails (the smallest p)."""

    conditions: tuple[Condition, ...]

    @property
    def p_holds(self) -> float:
        ps = [c.p_holds() for c in self.conditions]
        return float("nan") if not ps or any(not np.isfinite(p) for p in ps) else max(ps)

    @property
    def p_fails(self) -> float:
        ps = [p for p in (c.p_fails() for c in self.conditions) if np.isfinite(p)]
        return min(ps) if ps else float("nan")

    @property
    def p(self) -> float:
        """The claim's p-value for Holm: of whichever direction the data point to."""
        ps = [p for p in (self.p_holds, self.p_fails) if np.isfinite(p)]
        return min(ps) if ps else float("nan")

    @property
    def direction(self) -> str:
        """"holds" or "fails": the side the data point to (holds on ties)."""
        h, f = self.p_holds, self.p_fails
        if not np.isfinite(f):
            return "holds"
        return "holds" if np.isfinite(h) and h <= f else "fails"

    def deciding(self) -> Condition | None:
        """The condition that decides: the least certain one when the claim holds, the surest failure otherwise."""
        if not self.conditions:
            return None
        if self.direction == "holds":
            return max(self.conditions, key=lambda c: _nan_high(c.p_holds()))
        return min(self.conditions, key=lambda c: _nan_high(c.p_fails()))


def _two_sided(p: float) -> float:
    return min(1.0, 2 * p) if np.isfinite(p) else float("nan")


def _nan_high(p: float) -> float:
    return p if np.isfinite(p) else 2.0


def holm(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values (monotone step-down), NaN kept where a p-value is NaN."""
    order = sorted((p, i) for i, p in enumerate(pvalues) if np.isfinite(p))
    m, adjusted, running = len(order), list(pvalues), 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def holm_level(pvalues: list[float], index: int, alpha: float = ALPHA) -> float:
    """The per-claim level Holm tests claim `index` at: alpha / (m − rank), its rank among the finite p-values."""
    finite = sorted(p for p in pvalues if np.isfinite(p))
    if not np.isfinite(pvalues[index]) or not finite:
        return alpha
    rank = finite.index(pvalues[index])
    return alpha / (len(finite) - rank)


def seeds_needed(condition: Condition, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Seeds at which a t-test at `alpha` (two-sided) would decide the condition with `power`, at the observed
    effect |θ − m| and per-seed spread; None when there is no spread to scale (an exact or one-seed quantity) or no
    effect to detect within MAX_SEEDS."""
    est = condition.estimate
    effect, sd = abs(est.value - condition.threshold), est.sd
    if est.method in ("exact", "ols") or not (np.isfinite(sd) and sd > 0) or not np.isfinite(effect) or effect == 0:
        return None
    lo, hi = 2, MAX_SEEDS
    if _power(hi, effect, sd, alpha) < power:
        return None
    while lo < hi:  # the power grows with n: bisect for the first n that reaches it
        mid = (lo + hi) // 2
        if _power(mid, effect, sd, alpha) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _power(n: int, effect: float, sd: float, alpha: float) -> float:
    df, nc = n - 1, effect / (sd / math.sqrt(n))
    crit = _t_ppf(1 - alpha / 2, df)
    power = _nct_sf(crit, df, nc) + _nct_cdf(-crit, df, nc)
    return power if np.isfinite(power) else 1.0  # scipy's noncentral t gives NaN far out in its tail, where power ≈ 1


def _stats():
    """scipy.stats, imported when a bootstrap or a least-squares slope is first computed: it costs about a second to
    import (0.4 CPU-s of the overview's verdicts at 100k runs), and a fresh checkout's `bench claims` (every verdict
    from the locks) never needs it."""
    from scipy import stats

    return stats


# Student's t and the noncentral t, as scipy.stats.t and scipy.stats.nct compute them (their _cdf, _sf and _ppf are
# these scipy.special functions; at loc 0 and scale 1 the frozen wrapper adds nothing but argument checks, which
# give NaN where these do), without importing scipy.stats. tests/leaderboard/test_statistics.py compares them.

def _t_ppf(q: float, df: float) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def _t_cdf(x: float, df: float) -> float:
    from scipy.special import stdtr

    return float(stdtr(df, x))


def _t_sf(x: float, df: float) -> float:
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def _nct_cdf(x: float, df: float, nc: float) -> float:
    from scipy.special import nctdtr

    return float(nctdtr(df, nc, x))


def _nct_sf(x: float, df: float, nc: float) -> float:
    try:
        from scipy.special._ufuncs import _nct_sf as sf  # what scipy.stats.nct._sf calls (Boost's), clipped there too
    except ImportError:  # another scipy: its own nct
        return float(_stats().nct.sf(x, df, nc))
    with np.errstate(over="ignore"):  # as scipy.stats.nct._sf (scipy gh-17432)
        return float(np.clip(sf(x, df, nc), 0, 1))
