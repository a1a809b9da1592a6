"""One claim against the store: its cells' finished runs (of the task version the code declares now), their per-seed
values, the criterion judged on them (leaderboard/claims/judge.py), and the verdict at a given p-value."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from sqlalchemy import select

from bench.models import Run
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims.judge import (
    Judged,
    describe,
    fit_points,
    judge_bound,
    judge_ordering,
    judge_rate,
    judge_tracking,
    judge_value,
    settle,
)
from leaderboard.claims.model import Claim
from leaderboard.claims.statistics import ALPHA, seeds_needed
from leaderboard.claims.stored import PaperRuns
from leaderboard.claims.verdict import Evidence, Verdict
from leaderboard.queries import curves, looks_like_hub_id


class ClaimJudge:
    """Evaluates one claim against the store."""

    def __init__(self, claim: Claim, store: Store, registry: Registry, seeds: int, slug: str = "<paper>",
                 empty: bool = False, runs: PaperRuns | None = None):
        """`empty`: the caller knows the store holds no run at all (a fresh checkout), so nothing is queried.
        `runs`: the paper's runs read at once (claims.stored), shared by its judges; by default the claim's own."""
        self.claim, self.store, self.registry, self.seeds, self.slug = claim, store, registry, seeds, slug
        self.empty = empty
        self.runs = runs or PaperRuns(store, registry)
        built = [([], []) if empty else self.runs.cells(g, seeds) for g in claim.groups]
        cells = [group for group, _ in built]
        self.group_keys = [list(keys) for _, keys in built]
        # only runs of the task version the code declares now: a raised version makes older runs stale
        versions = {task: registry.task_version(task) for task in {c.task for group in cells for c in group}}
        done = set() if empty else self.runs.done_keys(
            (k for keys in self.group_keys for k in keys),
            {k: versions[c.task] for group, keys in zip(cells, self.group_keys, strict=True)
             for c, k in zip(group, keys, strict=True)})
        self.done_keys = [[k for k in keys if k in done] for keys in self.group_keys]
        self.metrics = {} if empty else self.runs.metrics(k for keys in self.done_keys for k in keys)
        self._no_fit = ""  # why a rate has nothing to fit
        self._cpu_seed: float | None = None
        self._cpu_read = False

    def group_means(self, metric: str) -> list[float]:
        means = []
        for keys in self.done_keys:
            values = [self.metrics[k][metric] for k in keys if metric in self.metrics.get(k, {})]
            means.append(float(np.mean(values)) if values else float("nan"))
        return means

    def group_seed_values(self, metric: str) -> np.ndarray:
        """(groups, seeds) values of `metric` by seed index; NaN where a run is missing or lacks it."""
        return np.array([[self.metrics.get(k, {}).get(metric, float("nan")) for k in keys] for keys in self.group_keys],
                        dtype=float)

    def verdict(self) -> Verdict:
        found = min(len(keys) for keys in self.done_keys)
        if found == 0:
            return self._make("not run", [], "", "; ".join(filter(None, [self._not_run(), self._failures()])))
        if found < self.seeds:
            return self._make("insufficient seeds", [], "", "; ".join(filter(None, [
                f"{found} of {self.seeds} seeds finished per cell", self._failures()])))
        judged = self.judged()
        if judged is None:
            return self._make("not reproduced", [], "n/a", self._no_fit)
        return self.settled(judged, judged.decision.p)

    def _not_run(self) -> str:
        if self.claim.scale == "paper-scale":
            hub = sorted({v for g in self.claim.groups for v in (*g.method_config.values(), *g.task_config.values())
                          if looks_like_hub_id(v)})
            needs = f"a GPU and {', '.join(hub)}" if hub else "the paper's hardware and data"
            return (f"paper-scale: needs {needs}; "
                    f"run it on such a machine with `bench reproduce {self.slug} --scale paper`")
        return f"no finished runs yet; `bench reproduce` runs the {self.seeds} seed(s) per cell"

    def _failures(self) -> str:
        """What stopped the claim's cells that did not finish: the reason a "not run" verdict has, in one line."""
        stopped = {} if self.empty else self.runs.unfinished(k for keys in self.group_keys for k in keys)
        if not stopped:
            return ""
        status, error = next(iter(stopped.values()))
        last = (error or "").strip().splitlines()[-1:] or ["no error recorded"]
        return f"{len(stopped)} of its runs did not finish ({status}: {last[0][:200]})"

    def _make(self, verdict: str, ours: list[float], ours_text: str, detail: str,
              paper_text: str | None = None) -> Verdict:
        c = self.claim
        if paper_text is None:
            paper_text = _paper_text(c)
        scale = f"measured at {c.scale}, {self.seeds} seed(s)"
        fragile = f"fragile: {c.fragile}" if c.fragile else ""
        extra = "; ".join(filter(None, [detail, scale, c.differences, fragile]))
        found = min((len(keys) for keys in self.done_keys), default=0)
        return Verdict(c, verdict, ours, ours_text, paper_text, extra, found,
                       runs_found=sum(len(keys) for keys in self.done_keys))

    def judged(self) -> Judged | None:
        """The claim's criterion on the stored values (None when a rate has nothing to fit: `_no_fit` says why)."""
        c = self.claim
        labels = [g.label() for g in c.groups]
        if c.kind == "value":
            return judge_value(c, labels, self.group_seed_values(c.metric))
        if c.kind == "bound":
            return judge_bound(c, labels, self.group_seed_values(c.metric))
        if c.kind == "ordering":
            return judge_ordering(c, labels, self.group_seed_values(c.metric), self.seeds)
        if c.kind == "tracking":
            tracked, tracker, baseline = (self.group_seed_values(m).ravel()
                                          for m in (c.metric, c.x_metric, c.expect["against"]))
            keep = np.isfinite(tracked) & np.isfinite(tracker) & np.isfinite(baseline)
            return judge_tracking(c, tracked[keep], tracker[keep], baseline[keep])
        return self._rate_of_curve() if c.curve else self._rate_across(labels)

    def _rate_of_curve(self) -> Judged | None:
        """Each seed's curve over the claim's steps: log value against log step (loglog) or the step (semilog)."""
        c = self.claim
        steps, values = curves(self.store, self.done_keys[0], c.curve)
        lo, hi = c.x_range or (float("-inf"), float("inf"))
        inside = (steps >= lo) & (steps <= hi)
        fits = [(steps[inside].astype(float), row[inside]) for row in values]
        if not fits or inside.sum() < 2:
            self._no_fit = f"fewer than two steps of {c.curve} in steps {c.x_range} to fit a slope"
            return None
        if not self._positive(fits, c.curve):
            return None
        axis = "log-log" if c.axis == "loglog" else "semi-log (log value per step: log ρ)"
        return judge_rate(c, fits, f"{axis} slope of {c.curve} over steps {c.x_range}")

    def _rate_across(self, labels: list[str]) -> Judged | None:
        """Per seed, the metric across the cell groups against x_metric (log x on a loglog axis)."""
        c = self.claim
        x, y = self.group_seed_values(c.x_metric), self.group_seed_values(c.metric)
        missing = [g for g, a, b in zip(labels, x, y, strict=True)
                   if not (np.isfinite(a).all() and np.isfinite(b).all())]
        if missing:  # a run that stopped short (budget, divergence) reports no count: the slope would skip it
            self._no_fit = (f"no {c.metric} / {c.x_metric} for {', '.join(missing)}: a slope across settings needs "
                            "every one")
            return None
        fits = [(x[:, s], y[:, s]) for s in range(x.shape[1])]
        if not self._positive(fits, c.metric):
            return None
        against = f"log {c.x_metric}" if c.axis == "loglog" else c.x_metric
        return judge_rate(c, fits, f"log {c.metric} vs {against}", labels, y)

    def _positive(self, fits: list[tuple[np.ndarray, np.ndarray]], name: str) -> bool:
        """Every seed has two points or more whose logs are defined (False, with `_no_fit` saying which do not)."""
        short = [s for s, (x, y) in enumerate(fits) if len(fit_points(x, y, self.claim.axis)[0]) < 2]
        if short:
            where = "x and values" if self.claim.axis == "loglog" else "values"
            self._no_fit = (f"fewer than two positive points to fit a slope (a rate takes the log of its {where}): "
                            f"{name} in seed(s) {', '.join(map(str, short))}")
        return not short

    def settled(self, judged: Judged, p_adjusted: float, family: int = 1, level: float = ALPHA) -> Verdict:
        """The verdict at the claim's (adjusted) p-value, with its interval, the seeds an undecided claim needs and
        what they would cost."""
        verdict = settle(judged, p_adjusted)
        decision = judged.decision
        needed = seeds_needed(decision.deciding(), level) if verdict == "underpowered" and decision.deciding() else None
        cost = self._cpu_per_seed() * needed if needed is not None and self._cpu_per_seed() is not None else None
        evidence = Evidence(**describe(judged), p=decision.p, p_adjusted=p_adjusted, level=level, family=family,
                            direction=decision.direction, seeds_needed=needed, cost_s=cost, cells=judged.cells,
                            extra=judged.extra_note, extra_ok=judged.extra_ok, partial=judged.partial)
        made = self._make(verdict, judged.ours, judged.ours_text, "; ".join(filter(None, [
            evidence.text(), judged.criteria, judged.extra_note, judged.partial])))
        return replace(made, evidence=evidence, judged=judged)

    def _cpu_per_seed(self) -> float | None:
        """CPU seconds one more seed of the claim's cells costs (their stored runs' mean), None when unmeasured."""
        if not self._cpu_read:
            keys = [k for keys in self.done_keys for k in keys]
            with self.store.engine.connect() as connection:
                cpu = connection.execute(select(Run.cpu_s).where(Run.run_key.in_(keys))).scalars().all()
            self._cpu_seed = (sum(cpu) / self.seeds) if cpu and all(x is not None for x in cpu) else None
            self._cpu_read = True
        return self._cpu_seed


@dataclass(frozen=True)
class ClaimValues:
    """What a claim's criterion reads, seed by seed: per group, its metric (NaN where a run is missing), and the
    x_metric of a rate across settings; the finished runs' keys per group (a curve claim's curves are theirs)."""

    labels: tuple[str, ...]
    values: np.ndarray                # (groups, seeds)
    x: np.ndarray | None              # (groups, seeds) of x_metric, for a rate across settings or a tracking claim
    keys: tuple[tuple[str, ...], ...]
    against: np.ndarray | None = None  # (groups, seeds) of a tracking claim's expect["against"] metric


def claim_values(claim: Claim, store: Store, registry: Registry, seeds: int | None = None) -> ClaimValues:
    """The per-seed values behind a claim's verdict (the leaderboard's cards and plots draw them)."""
    judge = ClaimJudge(claim, store, registry, seeds or claim.seeds)
    against = claim.expect.get("against") if claim.kind == "tracking" else None
    return ClaimValues(tuple(g.label() for g in claim.groups), judge.group_seed_values(claim.metric),
                       judge.group_seed_values(claim.x_metric) if claim.x_metric else None,
                       tuple(tuple(keys) for keys in judge.done_keys),
                       judge.group_seed_values(against) if against else None)


def _paper_text(c: Claim) -> str:
    if c.kind == "value":
        return f"{c.paper_value:g}" + (" (approx.)" if c.approximate else "")
    if c.kind == "rate":
        return f"slope {c.expect.get('slope')}" + (" (semi-log: log ρ per step)" if c.axis == "semilog" else "")
    if c.kind == "tracking":
        return (f"|corr({c.x_metric}, {c.metric})| − |corr({c.expect['against']}, {c.metric})| "
                f"≥ {float(c.expect['min_advantage']):g}")
    if c.kind == "bound":
        parts = [f"≥ {c.expect['min']:g}" if "min" in c.expect else "",
                 f"≤ {c.expect['max']:g}" if "max" in c.expect else ""]
        return " and ".join(filter(None, parts))
    relation = " < " if c.expect.get("order", "increasing") == "increasing" else " > "
    return f"{c.metric}: {relation.join(g.label() for g in c.groups)}"
