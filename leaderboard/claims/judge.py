"""A claim's criterion on its per-seed values: the conditions its interval must meet (claims/statistics.py).

Each kind reduces to conditions on estimated quantities, decided by their 95 % intervals:

* value: our mean inside the paper's band (the value ± its `tolerance`);
* bound: every group's mean inside [min, max];
* ordering: every adjacent pair's paired per-seed gap in the claimed direction above the margin: `min_gap` (metric
  units; negative for non-inferiority), `slack` (a relative tolerance: −slack·|first mean|), `min_ratio` (on the
  per-seed log ratio, log r), or 0 (strict: "X beats Y" needs a gap surely above 0);
* rate: the fitted slope inside expect.slope ± tolerance: per seed (each run's own fit of log value against log x,
  or against x itself on a semilog axis) with the t interval over seeds, or one least-squares fit when there is one
  seed;
* tracking: the advantage |corr(x_metric, metric)| − |corr(against, metric)| over runs at least min_advantage, with
  a bootstrap over runs.

`seeds_holding` (the share of seeds in which the relation holds) and per-group paper values stay as additional
conditions: they can stop a claim from being reproduced, never make it so on their own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from leaderboard.claims.model import Claim
from leaderboard.claims.statistics import ALPHA, Condition, Decision, Estimate, estimate, slope_estimate

TRACKING_RESAMPLES = 2_000


@dataclass(frozen=True)
class CellStat:
    """One cell group's metric over its seeds, as cards and locks show it."""

    label: str
    mean: float
    low: float
    high: float
    n: int
    values: tuple[float, ...] = ()


@dataclass(frozen=True)
class Judged:
    """A claim's criterion evaluated: the decision, what it rests on, and the additional conditions."""

    decision: Decision
    ours: list[float]
    ours_text: str
    criteria: str
    cells: tuple[CellStat, ...] = ()
    extra_ok: bool = True      # seeds_holding met (or not asked)
    extra_note: str = ""
    partial: str = ""          # the relation holds, but per-group paper values differ beyond tolerance


def fmt(x: float) -> str:
    return f"{x:.3g}"


def cell_stats(labels, values: np.ndarray, method: str, deterministic: bool) -> tuple[CellStat, ...]:
    out = []
    for label, row in zip(labels, values, strict=True):
        e = estimate(row, method, deterministic)
        lo, hi = e.interval()
        out.append(CellStat(label, e.value, lo, hi, e.n, tuple(float(v) for v in row)))
    return tuple(out)


def _sign(order: str) -> int:
    return 1 if order == "increasing" else -1


def band(target: float, tol: dict) -> tuple[float, float]:
    """The paper's band around `target`: factor (multiplicative), rtol (relative) or atol (absolute)."""
    if "factor" in tol:
        f = float(tol["factor"])
        return (target / f, target * f) if target > 0 else (float("nan"), float("nan"))
    if "rtol" in tol:
        r = float(tol["rtol"]) * abs(target)
        return target - r, target + r
    a = float(tol.get("atol", 0.0))
    return target - a, target + a


def within(ours: float, target: float | None, tol: dict) -> bool:
    if target is None or not np.isfinite(ours):
        return False
    lo, hi = band(target, tol)
    return bool(lo <= ours <= hi)


def judge_value(claim: Claim, labels, values: np.ndarray) -> Judged:
    e = estimate(values[0], claim.interval, bool(claim.deterministic))
    lo, hi = band(float(claim.paper_value), claim.expect)
    conditions = (Condition(f"{labels[0]} ≥ {fmt(lo)}", e, lo, +1, strict=False),
                  Condition(f"{labels[0]} ≤ {fmt(hi)}", e, hi, -1, strict=False))
    note = "paper value read off a plot (approximate)" if claim.approximate else ""
    return Judged(Decision(conditions), [e.value], fmt(e.value),
                  "; ".join(filter(None, [f"band [{fmt(lo)}, {fmt(hi)}] (tolerance {claim.expect})", note])),
                  cell_stats(labels, values[:1], claim.interval, bool(claim.deterministic)))


def judge_bound(claim: Claim, labels, values: np.ndarray) -> Judged:
    lo, hi = claim.expect.get("min"), claim.expect.get("max")
    conditions, means = [], []
    for label, row in zip(labels, values, strict=True):
        e = estimate(row, claim.interval, bool(claim.deterministic))
        means.append(e.value)
        if lo is not None:
            conditions.append(Condition(f"{label} ≥ {lo:g}", e, float(lo), +1, strict=False))
        if hi is not None:
            conditions.append(Condition(f"{label} ≤ {hi:g}", e, float(hi), -1, strict=False))
    text = ", ".join(f"{label}: {fmt(m)}" for label, m in zip(labels, means, strict=True))
    return Judged(Decision(tuple(conditions)), means, text, "every mean inside the bound",
                  cell_stats(labels, values, claim.interval, bool(claim.deterministic)))


def judge_ordering(claim: Claim, labels, values: np.ndarray, seeds: int) -> Judged:
    expect = claim.expect
    order = expect.get("order", "increasing")
    sign = _sign(order)
    det, method = bool(claim.deterministic), claim.interval
    means = [float(np.nanmean(row)) if np.isfinite(row).any() else float("nan") for row in values]
    conditions = []
    groups = list(zip(labels, values, strict=True))
    for (la, a), (lb, b), mean_a in zip(groups, groups[1:], means, strict=False):
        if "min_ratio" in expect:
            r = float(expect["min_ratio"])
            ok = (a > 0) & (b > 0)
            logs = np.where(ok, np.log(np.where(ok, b, 1.0) / np.where(ok, a, 1.0)) * sign, np.nan)
            if not ok.all():  # a ratio of non-positive values means nothing: no estimate
                logs = np.full_like(logs, np.nan)
            conditions.append(Condition(f"log({lb} / {la}) in the claimed direction ≥ log {r:g}",
                                        estimate(logs, method, det), math.log(r), +1, strict=False))
            continue
        gaps = sign * (b - a)
        if "min_gap" in expect:
            m, strict, what = float(expect["min_gap"]), float(expect["min_gap"]) == 0, f"≥ {expect['min_gap']:g}"
        elif "slack" in expect:
            m = -float(expect["slack"]) * abs(mean_a)
            strict, what = False, f"≥ −{float(expect['slack']):.0%} of {fmt(mean_a)}"
        else:
            m, strict, what = 0.0, True, "> 0"
        conditions.append(Condition(f"paired gap {lb} − {la} ({order}) {what}", estimate(gaps, method, det), m, +1,
                                    strict=strict))
    text = " , ".join(f"{label}: {fmt(m)}" for label, m in zip(labels, means, strict=True))
    judged = Judged(Decision(tuple(conditions)), means, text, f"{order}",
                    cell_stats(labels, values, method, det))
    extra_ok, extra_note = True, ""
    if "seeds_holding" in expect:
        # k of the claim's seeds; at another seed count (bench claims --seeds), the same share, rounded up
        needed = math.ceil(int(expect["seeds_holding"]) * seeds / claim.seeds)
        counts = seeds_holding(values, order, float(expect.get("slack", 0.0)), expect.get("min_gap"))
        extra_ok = all(n >= needed for n in counts)
        extra_note = f"holds in {', '.join(map(str, counts))} of {values.shape[1]} seeds (needs ≥ {needed})"
    partial = ""
    paper_values = [g.paper_value for g in claim.groups]
    if all(v is not None for v in paper_values):
        tol = expect.get("tolerance", {"factor": 2})
        if not all(within(m, v, tol) for m, v in zip(means, paper_values, strict=True)):
            partial = f"values differ from the paper's beyond {tol}"
    return Judged(judged.decision, means, text, judged.criteria, judged.cells, extra_ok, extra_note, partial)


def judge_rate(claim: Claim, fits: list[tuple[np.ndarray, np.ndarray]], what: str,
               labels=(), values: np.ndarray | None = None) -> Judged:
    """`fits`: per seed, the (x, y) points of its fit of log y against log x (claim.axis loglog) or against x itself
    (semilog: the per-step rate, slope log ρ); only points the logs are defined at are kept."""
    slopes = []
    for x, y in fits:
        fx, fy = fit_points(x, y, claim.axis)
        slopes.append(float(np.polyfit(fx, fy, 1)[0]) if len(fx) >= 2 else float("nan"))
    if len(fits) == 1:
        e = slope_estimate(*fit_points(*fits[0], claim.axis))
    else:
        e = estimate(slopes, claim.interval, bool(claim.deterministic))
    target, tol = float(claim.expect["slope"]), float(claim.expect.get("tolerance", 0.1))
    conditions = (Condition(f"slope ≥ {target - tol:g}", e, target - tol, +1, strict=False),
                  Condition(f"slope ≤ {target + tol:g}", e, target + tol, -1, strict=False))
    cells = cell_stats(labels, values, claim.interval, bool(claim.deterministic)) if values is not None else ()
    per_seed = "one least-squares fit" if len(fits) == 1 else f"per-seed slopes over {len(fits)} seeds"
    return Judged(Decision(conditions), [e.value], f"slope {e.value:.3f}",
                  f"{what} ({per_seed}); expected {target:g} ± {tol:g}", cells)


def fit_points(x: np.ndarray, y: np.ndarray, axis: str) -> tuple[np.ndarray, np.ndarray]:
    """The points a rate fits: (log x, log y) on a loglog axis, (x, log y) on a semilog one; a point whose log is
    undefined (a value at or below 0) or that is not finite is left out."""
    keep = (y > 0) & np.isfinite(x) & np.isfinite(y)
    if axis == "loglog":
        keep &= x > 0
    return (np.log(x[keep]) if axis == "loglog" else x[keep]), np.log(y[keep])


def judge_tracking(claim: Claim, tracked: np.ndarray, tracker: np.ndarray, baseline: np.ndarray) -> Judged:
    """The advantage in |corr| across runs, with a bootstrap over runs (resampled jointly, a fixed seed)."""
    against, need = claim.expect["against"], float(claim.expect["min_advantage"])
    ours, theirs = abs_correlation(tracker, tracked), abs_correlation(baseline, tracked)
    advantage = ours - theirs
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(TRACKING_RESAMPLES if np.isfinite(advantage) else 0):
        i = rng.integers(0, len(tracked), len(tracked))
        d = abs_correlation(tracker[i], tracked[i]) - abs_correlation(baseline[i], tracked[i])
        if np.isfinite(d):
            draws.append(float(d))
    e = Estimate(advantage, len(tracked), float(np.std(draws, ddof=1)) if len(draws) > 1 else float("nan"),
                 "bootstrap", draws=tuple(draws))
    text = (f"|corr({claim.x_metric}, {claim.metric})| {fmt(ours)} vs |corr({against}, {claim.metric})| {fmt(theirs)} "
            f"over {len(tracked)} runs")
    return Judged(Decision((Condition(f"advantage ≥ {need:g}", e, need, +1, strict=False),)), [ours, theirs], text,
                  f"advantage {fmt(advantage)} (needs ≥ {need:g}) across {len(claim.groups)} settings")


def abs_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """|Pearson r| of two samples; NaN with fewer than 3 points or a constant sample (no correlation to speak of)."""
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(abs(np.corrcoef(x, y)[0, 1]))


def paired_gaps(values: np.ndarray, order: str) -> list[np.ndarray]:
    """Per adjacent pair of groups of (groups, seeds) values, the per-seed gaps in the claimed direction (positive =
    as claimed)."""
    sign = _sign(order)
    return [sign * (b - a) for a, b in zip(values, values[1:], strict=False)]


def seeds_holding(values: np.ndarray, order: str, slack: float = 0.0, min_gap: float | None = None) -> list[int]:
    """Per adjacent pair, the seeds in which the claimed relation holds (with min_gap: by that gap in the seed)."""
    if min_gap is None:
        return [sum(_ordered(x, y, order, slack) for x, y in zip(a, b, strict=True))
                for a, b in zip(values, values[1:], strict=False)]
    return [sum(_clears(g, float(min_gap)) for g in gaps) for gaps in paired_gaps(values, order)]


def _ordered(a: float, b: float, order: str, slack: float) -> bool:
    """b follows a in `order`: strictly without slack; with a relative slack (absolute on |a| when a < 0) a tie
    holds. NaN never holds."""
    if slack == 0:
        return b > a if order == "increasing" else b < a
    if order == "increasing":
        return b >= a * (1 - slack) if a >= 0 else b >= a - abs(a) * slack
    return b <= a * (1 + slack) if a >= 0 else b <= a + abs(a) * slack


def _clears(gap: float, min_gap: float) -> bool:
    return bool(np.isfinite(gap)) and (gap > 0 if min_gap == 0 else gap >= min_gap)


def settle(judged: Judged, p_adjusted: float, alpha: float = ALPHA) -> str:
    """The verdict a judged claim earns at its (adjusted) p-value: decided only when the interval is on one side."""
    decision = judged.decision
    if not np.isfinite(p_adjusted) or p_adjusted >= alpha:
        return "underpowered"
    if decision.direction == "fails" or not judged.extra_ok:
        return "not reproduced"
    return "partially" if judged.partial else "reproduced"


def describe(judged: Judged) -> dict[str, Any]:
    """The deciding condition's interval as plain numbers (for cards, exports and locks)."""
    c = judged.decision.deciding()
    if c is None:
        return {}
    lo, hi = c.estimate.interval()
    return {"quantity": c.label, "estimate": c.estimate.value, "low": lo, "high": hi, "n": c.estimate.n,
            "method": c.estimate.method, "threshold": c.threshold, "side": c.side}
