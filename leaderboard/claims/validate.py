"""A read claims file checked against itself and the registry: unique ids, known gates and switches, each kind's
`expect:` keys (leaderboard/claims/model.py), and every cell's method, task, metric and config keys."""

from __future__ import annotations

from pathlib import Path

from bench.errors import BenchError
from bench.registry import Registry
from leaderboard.claims.cells import group_cells
from leaderboard.claims.model import (
    BOUND_KEYS,
    MIN_TRACKING_SETTINGS,
    ORDERING_KEYS,
    RATE_AXES,
    RATE_KEYS,
    TRACKING_KEYS,
    VALUE_KEYS,
    Claim,
    Paper,
)
from leaderboard.claims.switched import credited_switches


def validate_paper(paper: Paper, registry: Registry, path: Path) -> None:
    """Refuse, in one line naming the file and the claim, what the file gets wrong (see the module docstring)."""
    ids = [c.id for c in paper.claims]
    if len(ids) != len(set(ids)):
        raise BenchError(f"{path}: claim and control ids must be unique "
                         f"({', '.join(sorted({i for i in ids if ids.count(i) > 1}))})")
    declared = {s.name for switches in credited_switches(paper, registry).values() for s in switches}
    for claim in paper.claims:
        unknown = sorted(set(claim.switches or ()) - declared)
        if unknown:
            raise BenchError(f"{path}: claim {claim.id!r}: unknown switch(es) {', '.join(unknown)}; the paper's "
                             f"methods declare: {', '.join(sorted(declared)) or 'none'}")
    claim_ids = {c.id for c in paper.claims if c.role == "claim"}
    for control in (c for c in paper.claims if c.role == "control"):
        unknown = [g for g in control.gates if g not in claim_ids]
        if unknown:
            raise BenchError(f"{path}: control {control.id!r} gates unknown claim(s) {', '.join(unknown)}")
    for claim in paper.claims:
        _validate(claim, registry, path)


def _validate(claim: Claim, registry: Registry, path: Path) -> None:
    where = f"{path}: claim {claim.id!r}"
    {"value": _validate_value, "bound": _validate_bound, "ordering": _validate_ordering, "rate": _validate_rate,
     "tracking": _validate_tracking}[claim.kind](claim, where)
    if claim.axis != "loglog" and claim.kind != "rate":
        raise BenchError(f"{where}: axis belongs to a rate claim (kind: rate)")
    for group in (*claim.groups, *claim.control):
        registry.listing("method", group.method)
        family = registry.declared_metrics(registry.listing("task", group.task).family)
        reason = registry.incompatibility(group.method, group.task)
        if reason:
            raise BenchError(f"{where}: {reason}")
        for metric in filter(None, (claim.metric, claim.x_metric, claim.expect.get("against"))):
            if family.metric(metric) is None:
                allowed = [*family.metrics, *(f"{prefix}*" for prefix in family.metric_prefixes)]
                raise BenchError(f"{where}: unknown metric {metric!r}; allowed: {', '.join(allowed)}")
        if claim.kind == "rate":
            _logs_defined(claim, family, where)
        group_cells(group, registry, 1)  # type-checks the configs


def _unknown(expect: dict, allowed: tuple[str, ...], where: str) -> None:
    unknown = set(expect) - set(allowed)
    if unknown:
        raise BenchError(f"{where}: unknown expect key(s) {', '.join(sorted(map(str, unknown)))}; "
                         f"allowed: {', '.join(allowed)}")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _validate_value(claim: Claim, where: str) -> None:
    _unknown(claim.expect, VALUE_KEYS, where)
    if len(claim.expect) != 1 or not all(map(_number, claim.expect.values())):
        raise BenchError(f"{where}: a value claim's expect gives one tolerance: {{atol: x}}, {{rtol: x}} or "
                         f"{{factor: x}}, got {claim.expect}")
    if not _number(claim.paper_value):
        raise BenchError(f"{where}: a value claim needs paper_value, the paper's number, got {claim.paper_value!r}")


def _validate_bound(claim: Claim, where: str) -> None:
    _unknown(claim.expect, BOUND_KEYS, where)
    if not claim.expect or not all(map(_number, claim.expect.values())):
        raise BenchError(f"{where}: a bound claim's expect gives min and/or max as numbers, got {claim.expect}")


def _validate_ordering(claim: Claim, where: str) -> None:
    expect = claim.expect
    if "margin_se" in expect:
        raise BenchError(f"{where}: margin_se is retired: the 95 % interval of the paired gap decides an ordering; "
                         "give min_gap for a margin in the metric's units (negative for non-inferiority)")
    _unknown(expect, ORDERING_KEYS, where)
    if expect.get("order", "increasing") not in ("increasing", "decreasing"):
        raise BenchError(f"{where}: order must be increasing or decreasing, got {expect['order']!r}")
    k = expect.get("seeds_holding")
    if k is not None and not (isinstance(k, int) and 1 <= k <= claim.seeds):
        raise BenchError(f"{where}: seeds_holding must be an integer in 1..{claim.seeds} "
                         f"(the claim's seeds), got {k!r}")
    if len({"slack", "min_gap", "min_ratio"} & set(expect)) > 1:
        raise BenchError(f"{where}: give one of slack, min_gap, min_ratio "
                         "(how the means must differ), not several")
    if "min_ratio" in expect and not (_number(expect["min_ratio"]) and expect["min_ratio"] > 1):
        raise BenchError(f"{where}: min_ratio must be a number above 1 (how many times better), "
                         f"got {expect['min_ratio']!r}")


def _validate_rate(claim: Claim, where: str) -> None:
    _unknown(claim.expect, RATE_KEYS, where)
    if not _number(claim.expect.get("slope")) or not _number(claim.expect.get("tolerance", 0.1)):
        raise BenchError(f"{where}: a rate claim's expect gives slope and tolerance as numbers, got {claim.expect}")
    if claim.axis not in RATE_AXES:
        raise BenchError(f"{where}: axis {claim.axis!r} unknown; allowed: {', '.join(RATE_AXES)}")
    if bool(claim.curve) == bool(claim.x_metric):
        raise BenchError(f"{where}: a rate fits either a curve (curve, x_range) or the metric across cell groups "
                         "(x_metric), one of the two")
    if claim.x_range and not claim.x_range[0] < claim.x_range[1]:
        raise BenchError(f"{where}: x_range must be [first step, last step], got {list(claim.x_range)}")
    if claim.x_range and claim.axis == "loglog" and claim.x_range[0] <= 0:
        raise BenchError(f"{where}: a loglog rate takes log step, so x_range must start above 0, got "
                         f"{list(claim.x_range)}; axis: semilog fits log value against the step itself")


def _logs_defined(claim: Claim, family, where: str) -> None:
    """A rate takes the log of its metric (and, on a loglog axis, of its x_metric): refuse one declared able to be
    negative (its Metric.bounds start below 0, or are unbounded below)."""
    logged = [claim.metric] + ([claim.x_metric] if claim.x_metric and claim.axis == "loglog" else [])
    for name in logged:
        if claim.curve and name == claim.metric:
            continue  # a curve's values are not a declared metric: non-positive points are left out of its fit
        bounds = family.metric(name).bounds
        if bounds is not None and (bounds[0] is None or bounds[0] < 0):
            raise BenchError(f"{where}: a rate fits log {name}, which needs positive values, but {name} can be "
                             f"negative (declared range {bounds}); allowed: a metric whose values are positive")


def _validate_tracking(claim: Claim, where: str) -> None:
    expect = claim.expect
    if set(expect) != set(TRACKING_KEYS) or not claim.x_metric:
        raise BenchError(f"{where}: a tracking claim needs x_metric (the tracker), metric (what it tracks) and expect "
                         f"with exactly {', '.join(TRACKING_KEYS)} (the metric it must track better than, by how much)")
    for groups, what in ((claim.groups, "cells"), (claim.control, "control cells")):
        if groups and len(groups) < MIN_TRACKING_SETTINGS:
            raise BenchError(f"{where}: a tracking claim correlates across settings: its {what} need "
                             f">= {MIN_TRACKING_SETTINGS} settings, got {len(groups)}")
