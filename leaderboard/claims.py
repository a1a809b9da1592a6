"""A paper's claims (leaderboard/papers/<slug>.yaml) joined with stored runs -> a verdict each.

Claim kinds:
  value     one cell group; our mean against the paper's number, within `tolerance`
            (relative: {rtol: 0.05}, absolute: {atol: 0.1}, or within a factor: {factor: 2}).
  bound     every cell group's mean satisfies expect {max: x} and/or {min: x}.
  ordering  the cell groups' means are ordered as expect {order: increasing|decreasing}, strictly
            ("X beats Y" fails when X equals Y); a relative `slack` makes it a tolerance, an absolute
            `min_gap` asks for at least that gap (negative: non-inferiority, where a tie holds);
            with per-group paper values that are off, "partially".
            Per-seed criteria, paired by seed between adjacent groups (the specs' "≥ 4/5 seeds, gap > 1 SE"):
            `min_ratio: r` each mean is r times the previous one in the claimed direction (positive means).
            `seeds_holding: k` the ordering (with min_gap: that gap) holds in at least k of the claim's seeds
            (the same share when judged at another seed count); `margin_se: m` the mean paired gap in
            the claimed direction exceeds m standard errors (m < 0: non-inferiority, gap ≥ m SE), replacing
            the plain comparison of means.
  rate      a log-log slope within expect {slope: s, tolerance: d}: of a curve over a step range
            (`curve`, `x_range`), or of the metric across cell groups against `x_metric`.
  tracking  `x_metric` tracks `metric` across models better than another metric does: over every finished run of
            every cell group (each run a model; at least 3 groups), |corr(x_metric, metric)| minus
            |corr(expect.against, metric)| is at least expect.min_advantage (the paper's "correlates 0.85 against
            0.62 across models").
Verdicts: reproduced, not reproduced, partially, uninformative, inconclusive, not run, insufficient seeds. Each
states the scale it was measured at (paper-scale | cpu-full | cpu-reduced) and, in words, how our
setting differs from the paper's.

Positive controls (the file's `controls:` list) are claims about the world itself, not the paper: an
oracle or upper-bound setting that the metric must separate from the baseline, judged like any
claim. Each names the claims measured in its world (`gates: [ids]`); when the control fails, those
claims are "inconclusive" (the world could not have shown the effect), whatever their own criterion
gave, which the detail still reports. Controls are never counted among the paper's claims.

Negative controls (a claim's own `control:`, with `cells:` and `why:`) are the settings under which the claim
must NOT hold: the paper's method swapped for the baseline it is claimed to beat, the mechanism switched
off, a world without the property the method exploits. The claim's own criterion (kind, metric, expect,
seeds) is judged on those cells; when it passes there too, the claim could not tell the paper's effect
from its absence and its verdict is "uninformative" (never counted as reproduced). A CPU-scale claim
without a possible control says why in `control_none:`; `bench claims --check` asks for one or the other.

Sanity checks (the file's `checks:` list) are properties that hold by construction or by an identity
(a projection's bound, a mixing share the code sets): judged like claims, shown with the reason they
cannot fail (`why:`), and never counted among the paper's claims either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import yaml

from bench.errors import BenchError
from bench.registry import Registry
from bench.spec import Cell
from bench.store import Store
from bench.cells import Entry, make_cell

KINDS = ("value", "bound", "ordering", "rate", "tracking")
ORDERING_KEYS = ("order", "slack", "min_gap", "min_ratio", "tolerance", "seeds_holding", "margin_se")
TRACKING_KEYS = ("against", "min_advantage")
MIN_TRACKING_SETTINGS = 3  # a correlation across fewer settings than this says nothing
CPU_SCALES = ("cpu-full", "cpu-reduced")
SCALES = ("paper-scale", "cpu-full", "cpu-reduced")
FIDELITIES = ("faithful", "reconstructed", "approximate")


@dataclass(frozen=True)
class CellGroup:
    """One method x task setting of a claim, run over seeds 0..n-1."""

    method: str
    task: str
    method_config: dict[str, Any] = field(default_factory=dict)
    task_config: dict[str, Any] = field(default_factory=dict)
    paper_value: float | None = None

    def label(self) -> str:
        cfg = {**self.method_config, **{f"task.{k}": v for k, v in self.task_config.items()}}
        return self.method + (f"({', '.join(f'{k}={v}' for k, v in cfg.items())})" if cfg else "")


@dataclass(frozen=True)
class Claim:
    id: str
    statement: str
    kind: str
    metric: str
    groups: tuple[CellGroup, ...]
    expect: dict[str, Any]
    seeds: int
    scale: str
    source: str = ""
    paper_value: float | None = None
    approximate: bool = False
    differences: str = ""
    curve: str | None = None
    x_range: tuple[float, float] | None = None
    x_metric: str | None = None
    role: str = "claim"                # "control" (a positive control of the world) or "check" (module docstring)
    gates: tuple[str, ...] = ()        # a control's: the ids of the claims measured in its world
    why: str = ""                      # a check's: why it holds by construction
    control: tuple[CellGroup, ...] = ()  # a claim's negative control: the cells where it must not hold
    control_why: str = ""              # what the control removes, and why the claim must fail there
    control_none: str = ""             # a claim's reason that no control setting exists
    fragile: str = ""                  # seen to flip under other float rounding (bench/numerics.py): where, how

    def negative_control(self) -> "Claim":
        """The claim's criterion on its control cells (the same kind, metric, expect and seeds)."""
        return replace(self, id=f"{self.id} (control)", groups=self.control, role="negative control",
                       control=(), differences="")

    @property
    def kind_label(self) -> str:
        """The kind as tables show it: "ordering" for a claim, "control: ordering" for a control."""
        return self.kind if self.role == "claim" else f"{self.role}: {self.kind}"


@dataclass(frozen=True)
class Paper:
    slug: str
    title: str
    authors: list[str]
    venue: str
    arxiv: str | None
    code: str | None
    methods: dict[str, dict[str, str]]
    claims: list[Claim]


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    ours: list[float]
    ours_text: str
    paper_text: str
    detail: str
    seeds_found: int
    control: str = "none"  # the negative control: none (the claim has none), not run, fails (as it must), passes
    source: str = "store"  # "reference": shown from the verdict lock (leaderboard/lock.py), nothing stored yet
    runs_found: int = 0    # finished runs of the claim's cells in the store, over every group and seed


def _group(raw: dict, claim_id: str) -> CellGroup:
    allowed = {"method", "task", "method_config", "task_config", "paper_value"}
    if not isinstance(raw, dict) or not {"method", "task"} <= set(raw) or set(raw) - allowed:
        raise BenchError(f"claim {claim_id!r}: each cell needs method and task "
                         f"(allowed keys: {', '.join(sorted(allowed))})")
    return CellGroup(raw["method"], raw["task"], dict(raw.get("method_config") or {}),
                     dict(raw.get("task_config") or {}), raw.get("paper_value"))


def _claim(raw: dict, defaults: dict, role: str = "claim") -> Claim:
    cid = raw.get("id", "?")
    merged = {**defaults, **raw}
    gates = merged.get("gates") or []
    if role == "control" and (not isinstance(gates, list) or not gates or not all(isinstance(g, str) for g in gates)):
        raise BenchError(f"control {cid!r}: needs gates, the list of the claim ids measured in its world")
    if role != "control" and "gates" in raw:
        raise BenchError(f"{role} {cid!r}: gates belongs to a control (the file's controls: list)")
    if (role == "check") != bool(raw.get("why")):
        raise BenchError(f"{role} {cid!r}: " + ("a check needs why: the reason it holds by construction"
                                                if role == "check"
                                                else "why belongs to a check (the file's checks: list)"))
    kind = merged.get("kind")
    if kind not in KINDS:
        raise BenchError(f"claim {cid!r}: kind {kind!r} unknown; allowed: {', '.join(KINDS)}")
    if merged.get("scale") not in SCALES:
        raise BenchError(f"claim {cid!r}: scale {merged.get('scale')!r} unknown; allowed: {', '.join(SCALES)}")
    cells = merged.get("cells")
    cells = [cells] if isinstance(cells, dict) else cells
    if not cells:
        raise BenchError(f"claim {cid!r}: needs cells")
    control, control_why, control_none = _negative_control(raw, role, cid)
    x_range = merged.get("x_range")
    return Claim(
        id=cid, statement=merged.get("statement", ""), kind=kind, metric=merged.get("metric", ""),
        groups=tuple(_group(c, cid) for c in cells), expect=dict(merged.get("expect") or {}),
        seeds=int(merged.get("seeds", 1)), scale=merged["scale"], source=merged.get("source", ""),
        paper_value=merged.get("paper_value"), approximate=bool(merged.get("approximate", False)),
        differences=merged.get("differences", ""), curve=merged.get("curve"),
        x_range=tuple(float(x) for x in x_range) if x_range else None, x_metric=merged.get("x_metric"),
        role=role, gates=tuple(gates) if role == "control" else (), why=str(raw.get("why") or ""),
        control=control, control_why=control_why, control_none=control_none, fragile=str(raw.get("fragile") or ""),
    )


def _negative_control(raw: dict, role: str, cid: str) -> tuple[tuple[CellGroup, ...], str, str]:
    """A claim's `control: {why, cells}` or `control_none: reason` (never both; never on a check). A positive control
    may have a `control:` too, its null: a positive control that also passes on its null cannot show the effect."""
    control, none = raw.get("control"), raw.get("control_none")
    if control is None and none is None:
        return (), "", ""
    if role == "check" or (role == "control" and none is not None):
        raise BenchError(f"{role} {cid!r}: control_none belongs to a claim, and a check has no control "
                         "(a positive control may name its null in control:)")
    if control is not None and none is not None:
        raise BenchError(f"claim {cid!r}: give control (the cells where the claim must fail) or control_none "
                         "(why there are none), not both")
    if none is not None:
        if not isinstance(none, str) or not none.strip():
            raise BenchError(f"claim {cid!r}: control_none must say why no control setting exists")
        return (), "", none.strip()
    if not isinstance(control, dict) or set(control) != {"why", "cells"} or not str(control["why"] or "").strip():
        raise BenchError(f"claim {cid!r}: control needs exactly why (what it removes) "
                         "and cells (where the claim must fail)")
    cells = control["cells"]
    cells = [cells] if isinstance(cells, dict) else cells
    if not cells:
        raise BenchError(f"claim {cid!r}: control needs cells")
    return tuple(_group(c, cid) for c in cells), str(control["why"]).strip(), ""


def load_paper(registry: Registry, slug: str) -> Paper:
    """Read and validate a claims file against the registry (names, metrics, config keys)."""
    path = registry.paper_path(slug)
    try:
        data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: 10x
    except yaml.YAMLError as exc:
        raise BenchError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("claims", []), list):
        raise BenchError(f"{path}: expected a mapping with title, methods and a list of claims")
    sections = {role: data.get(f"{role}s") or [] for role in ("claim", "control", "check")}
    if not all(isinstance(c, dict) for entries in sections.values() for c in entries):
        raise BenchError(f"{path}: every claim, control and check must be a mapping "
                         "with id, kind, metric, cells, expect")
    methods = data.get("methods") or {}
    for name, info in methods.items():
        registry.listing("method", name)
        if (info or {}).get("fidelity") not in FIDELITIES:
            raise BenchError(f"{path}: method {name} needs fidelity, one of {', '.join(FIDELITIES)}")
    defaults = data.get("defaults") or {}
    claims, controls, checks = ([_claim(c, defaults, role) for c in sections[role]]
                                for role in ("claim", "control", "check"))
    paper = Paper(slug, data.get("title", slug), list(data.get("authors") or []), data.get("venue", ""),
                  data.get("arxiv"), data.get("code"), methods, [*controls, *claims, *checks])
    ids = [c.id for c in paper.claims]
    if len(ids) != len(set(ids)):
        raise BenchError(f"{path}: claim and control ids must be unique "
                         f"({', '.join(sorted({i for i in ids if ids.count(i) > 1}))})")
    claim_ids = {c.id for c in claims}
    for control in controls:
        unknown = [g for g in control.gates if g not in claim_ids]
        if unknown:
            raise BenchError(f"{path}: control {control.id!r} gates unknown claim(s) {', '.join(unknown)}")
    for claim in paper.claims:
        _validate(claim, registry, path)
    return paper


def _validate(claim: Claim, registry: Registry, path) -> None:
    if claim.kind == "ordering":
        _validate_ordering(claim, path)
    if claim.kind == "tracking":
        _validate_tracking(claim, path)
    for group in (*claim.groups, *claim.control):
        registry.listing("method", group.method)
        family = registry.declared_metrics(registry.listing("task", group.task).family)
        reason = registry.incompatibility(group.method, group.task)
        if reason:
            raise BenchError(f"{path}: claim {claim.id!r}: {reason}")
        for metric in filter(None, (claim.metric, claim.x_metric, claim.expect.get("against"))):
            if family.metric(metric) is None:
                allowed = [*family.metrics, *(f"{prefix}*" for prefix in family.metric_prefixes)]
                raise BenchError(f"{path}: claim {claim.id!r}: unknown metric {metric!r}; "
                                 f"allowed: {', '.join(allowed)}")
        group_cells(group, registry, 1)  # type-checks the configs


def _validate_ordering(claim: Claim, path) -> None:
    expect, where = claim.expect, f"{path}: claim {claim.id!r}"
    unknown = set(expect) - set(ORDERING_KEYS)
    if unknown:
        raise BenchError(f"{where}: unknown expect key(s) {', '.join(sorted(unknown))}; "
                         f"allowed: {', '.join(ORDERING_KEYS)}")
    if expect.get("order", "increasing") not in ("increasing", "decreasing"):
        raise BenchError(f"{where}: order must be increasing or decreasing, got {expect['order']!r}")
    k = expect.get("seeds_holding")
    if k is not None and not (isinstance(k, int) and 1 <= k <= claim.seeds):
        raise BenchError(f"{where}: seeds_holding must be an integer in 1..{claim.seeds} "
                         f"(the claim's seeds), got {k!r}")
    if "margin_se" in expect and claim.seeds < 2:
        raise BenchError(f"{where}: margin_se needs a standard error, so seeds >= 2 (got {claim.seeds})")
    if len({"slack", "min_gap", "min_ratio", "margin_se"} & set(expect)) > 1:
        raise BenchError(f"{where}: give one of slack, min_gap, min_ratio, margin_se "
                         "(how the means must differ), not several")
    if "min_ratio" in expect and not (isinstance(expect["min_ratio"], (int, float)) and expect["min_ratio"] > 1):
        raise BenchError(f"{where}: min_ratio must be a number above 1 (how many times better), "
                         f"got {expect['min_ratio']!r}")


def _validate_tracking(claim: Claim, path) -> None:
    expect, where = claim.expect, f"{path}: claim {claim.id!r}"
    if set(expect) != set(TRACKING_KEYS) or not claim.x_metric:
        raise BenchError(f"{where}: a tracking claim needs x_metric (the tracker), metric (what it tracks) and expect "
                         f"with exactly {', '.join(TRACKING_KEYS)} (the metric it must track better than, by how much)")
    for groups, what in ((claim.groups, "cells"), (claim.control, "control cells")):
        if groups and len(groups) < MIN_TRACKING_SETTINGS:
            raise BenchError(f"{where}: a tracking claim correlates across settings: its {what} need "
                             f">= {MIN_TRACKING_SETTINGS} settings, got {len(groups)}")


def group_cells(group: CellGroup, registry: Registry, seeds: int, check: bool = False) -> list[Cell]:
    """The cells of one claim group: seeds 0..seeds-1 with the full configs.

    The configs are read from the modules' source (Registry.full_config), so the leaderboard never imports
    a method or task; `check` builds them through the Configs themselves (make_cell), which also runs
    their value checks, for the cells about to be run and for `bench claims --check`.
    """
    if check:
        return [make_cell(registry, Entry(group.method, group.method_config), Entry(group.task, group.task_config), s)
                for s in range(seeds)]
    method_config = registry.full_config("method", group.method, group.method_config)
    task_config = registry.full_config("task", group.task, group.task_config)
    return [Cell(group.method, group.task, s, dict(method_config), dict(task_config)) for s in range(seeds)]


def claim_groups(claim: Claim, controls: bool = False) -> tuple[CellGroup, ...]:
    """A claim's cell groups, with its negative control's when `controls`."""
    return (*claim.groups, *claim.control) if controls else claim.groups


def paper_cells(paper: Paper, registry: Registry, seeds: int | None = None, controls: bool = True) -> list[Cell]:
    """Every cell the paper's claims (and, by default, their negative controls) need: unique, in claim order,
    built and checked by the Configs."""
    cells = [c for claim in paper.claims for g in claim_groups(claim, controls)
             for c in group_cells(g, registry, seeds or claim.seeds, check=True)]
    return list(dict.fromkeys(cells))


def looks_like_hub_id(value: Any) -> bool:
    """A config value naming a Hugging Face hub model ("org/name"), not a path on this machine."""
    from pathlib import Path

    return (isinstance(value, str) and value.count("/") == 1 and not value.startswith((".", "/", "~"))
            and all(part and " " not in part for part in value.split("/")) and not Path(value).exists())


def _fmt(x: float) -> str:
    return f"{x:.3g}"


class _Judge:
    """Evaluates one claim against the store."""

    def __init__(self, claim: Claim, store: Store, registry: Registry, seeds: int, slug: str = "<paper>"):
        self.claim, self.store, self.registry, self.seeds, self.slug = claim, store, registry, seeds, slug
        cells = [group_cells(g, registry, seeds) for g in claim.groups]
        self.group_keys = [[c.run_key for c in group] for group in cells]
        # only runs of the task version the code declares now: a raised version makes older runs stale
        done = store.done_keys((k for keys in self.group_keys for k in keys),
                               registry.task_versions([c for group in cells for c in group]))
        self.done_keys = [[k for k in keys if k in done] for keys in self.group_keys]
        self.metrics = store.metrics(k for keys in self.done_keys for k in keys)

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
        c = self.claim
        found = min(len(keys) for keys in self.done_keys)
        if found == 0:
            return self._make("not run", [], "", "; ".join(filter(None, [self._not_run(), self._failures()])))
        if found < self.seeds:
            return self._make("insufficient seeds", [], "", "; ".join(filter(None, [
                f"{found} of {self.seeds} seeds finished per cell", self._failures()])))
        return getattr(self, f"_{c.kind}")()

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
        stopped = self.store.unfinished(k for keys in self.group_keys for k in keys)
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

    def _value(self) -> Verdict:
        (ours,) = self.group_means(self.claim.metric)[:1]
        target, tol = self.claim.paper_value, self.claim.expect
        ok = _within(ours, target, tol)
        note = "paper value read off a plot (approximate)" if self.claim.approximate else ""
        return self._make("reproduced" if ok else "not reproduced", [ours], _fmt(ours),
                          "; ".join(filter(None, [f"tolerance {tol}", note])))

    def _bound(self) -> Verdict:
        means = self.group_means(self.claim.metric)
        lo, hi = self.claim.expect.get("min"), self.claim.expect.get("max")
        ok = all((lo is None or m >= lo) and (hi is None or m <= hi) for m in means)
        text = ", ".join(f"{g.label()}: {_fmt(m)}" for g, m in zip(self.claim.groups, means))
        return self._make("reproduced" if ok else "not reproduced", means, text, "")

    def _ordering(self) -> Verdict:
        means = self.group_means(self.claim.metric)
        expect = self.claim.expect
        order, slack = expect.get("order", "increasing"), float(expect.get("slack", 0.0))
        text = " , ".join(f"{g.label()}: {_fmt(m)}" for g, m in zip(self.claim.groups, means))
        if "margin_se" in expect:
            if self.seeds < 2:
                return self._make("insufficient seeds", means, text,
                                  f"margin_se needs a standard error: 2 seeds or more, {self.seeds} asked")
            holds, criteria = self._margin(order, float(expect["margin_se"]))
        elif "min_gap" in expect:
            holds, criteria = self._min_gap(means, order, float(expect["min_gap"]))
        elif "min_ratio" in expect:
            holds, criteria = self._min_ratio(means, order, float(expect["min_ratio"]))
        else:
            holds = all(_ordered(a, b, order, slack) for a, b in zip(means, means[1:]))
            criteria = [f"{order}" + (f" with {slack:.0%} slack" if slack else "")]
        if "seeds_holding" in expect:
            # k of the claim's seeds; at another seed count (bench claims --seeds), the same share, rounded up
            needed = math.ceil(int(expect["seeds_holding"]) * self.seeds / self.claim.seeds)
            seeds_hold, counted = self._seeds_holding(order, slack, needed)
            holds, criteria = holds and seeds_hold, [*criteria, counted]
        paper_values = [g.paper_value for g in self.claim.groups]
        if holds and all(v is not None for v in paper_values):
            tol = expect.get("tolerance", {"factor": 2})
            if not all(_within(m, v, tol) for m, v in zip(means, paper_values)):
                return self._make("partially", means, text,
                                  "; ".join([*criteria, f"ordering holds; values differ beyond {tol}"]))
        return self._make("reproduced" if holds else "not reproduced", means, text, "; ".join(criteria))

    def _margin(self, order: str, margin: float) -> tuple[bool, list[str]]:
        """Mean paired gap ≥ margin × its standard error (strictly above when margin ≥ 0), every pair."""
        holds, parts = True, []
        for gaps in paired_gaps(self.group_seed_values(self.claim.metric), order):
            gap, se = gap_and_se(gaps)
            ok = np.isfinite(se) and (gap > margin * se if margin >= 0 else gap >= margin * se)
            holds = holds and bool(ok)
            parts.append(f"paired gap {_fmt(gap)} = {gap / se:.2g} SE (SE {_fmt(se)})" if se > 0
                         else f"paired gap {_fmt(gap)}, SE {_fmt(se)}")
        need = f"> {margin:g} SE" if margin >= 0 else f"≥ {margin:g} SE (non-inferior)"
        return holds, [f"{order}, mean gap {need}: " + "; ".join(parts)]

    @staticmethod
    def _min_gap(means: list[float], order: str, min_gap: float) -> tuple[bool, list[str]]:
        """Each mean beats the previous one by at least `min_gap` in the claimed direction (metric units;
        negative = non-inferiority within |min_gap|)."""
        gaps = [_sign(order) * (b - a) for a, b in zip(means, means[1:])]
        holds = all(_clears(g, min_gap) for g in gaps)
        return holds, [f"{order} by ≥ {min_gap:g} on the means: gap {', '.join(_fmt(g) for g in gaps)}"]

    @staticmethod
    def _min_ratio(means: list[float], order: str, ratio: float) -> tuple[bool, list[str]]:
        """Each mean is at least `ratio` times better than the previous one (increasing: b ≥ ratio·a; decreasing:
        a ≥ ratio·b), the specs' "≥ 5× lower"; both means must be positive for a ratio to mean anything."""
        ratios = [(b / a if order == "increasing" else a / b) if a > 0 and b > 0 else float("nan")
                  for a, b in zip(means, means[1:])]
        holds = all(np.isfinite(r) and r >= ratio for r in ratios)
        return holds, [f"{order} by ≥ {ratio:g}× on the means: {', '.join(f'{r:.3g}×' for r in ratios)}"]

    def _seeds_holding(self, order: str, slack: float, needed: int) -> tuple[bool, str]:
        """Per adjacent pair, the seeds in which the claimed relation holds (with min_gap: by that gap in the seed)."""
        values = self.group_seed_values(self.claim.metric)
        counts = seeds_holding(values, order, slack, self.claim.expect.get("min_gap"))
        return all(n >= needed for n in counts), (f"holds in {', '.join(map(str, counts))} of {values.shape[1]} seeds "
                                                  f"(needs ≥ {needed})")

    def _rate(self) -> Verdict:
        c = self.claim
        if c.curve:
            x, y = self._mean_curve()
        else:
            x, y = np.array(self.group_means(c.x_metric)), np.array(self.group_means(c.metric))
            missing = [g.label() for g, a, b in zip(c.groups, x, y) if not (np.isfinite(a) and np.isfinite(b))]
            if missing:  # a run that stopped short (budget, divergence) reports no count: the slope would skip it
                return self._make("not reproduced", [], "n/a", f"no {c.metric} / {c.x_metric} "
                                                               f"for {', '.join(missing)}: "
                                                               "a slope across settings needs every one")
        ok_points = (x > 0) & (y > 0)
        if ok_points.sum() < 2:
            return self._make("not reproduced", [], "n/a", "fewer than two positive points to fit a slope")
        slope = float(np.polyfit(np.log(x[ok_points]), np.log(y[ok_points]), 1)[0])
        target, tol = float(c.expect["slope"]), float(c.expect.get("tolerance", 0.1))
        ok = abs(slope - target) <= tol
        what = (f"log-log slope of {c.curve} over steps {c.x_range}" if c.curve
                else f"log {c.metric} vs log {c.x_metric}")
        return self._make("reproduced" if ok else "not reproduced", [slope], f"slope {slope:.3f}",
                          f"{what}; expected {target:g} ± {tol:g}")

    def _tracking(self) -> Verdict:
        """|corr(x_metric, metric)| − |corr(against, metric)| across every finished run of every setting (each run a
        model, as the paper's correlation runs across models), at least `min_advantage`."""
        c = self.claim
        against, need = c.expect["against"], float(c.expect["min_advantage"])
        tracked, tracker, baseline = (self.group_seed_values(m).ravel() for m in (c.metric, c.x_metric, against))
        keep = np.isfinite(tracked) & np.isfinite(tracker) & np.isfinite(baseline)
        ours, theirs = abs_correlation(tracker[keep], tracked[keep]), abs_correlation(baseline[keep], tracked[keep])
        if not (np.isfinite(ours) and np.isfinite(theirs)):
            return self._make("not reproduced", [], "n/a", f"no correlation over {int(keep.sum())} runs "
                                                           f"(fewer than 3, or a metric constant across them)")
        advantage = ours - theirs
        text = (f"|corr({c.x_metric}, {c.metric})| {_fmt(ours)} vs |corr({against}, {c.metric})| {_fmt(theirs)} "
                f"over {int(keep.sum())} runs")
        return self._make("reproduced" if advantage >= need else "not reproduced", [ours, theirs], text,
                          f"advantage {_fmt(advantage)} (needs ≥ {need:g}) across {len(c.groups)} settings")

    def _mean_curve(self) -> tuple[np.ndarray, np.ndarray]:
        """The seed-averaged curve of the first group, restricted to x_range."""
        from leaderboard.queries import mean_curve

        steps, mean, _ = mean_curve(self.store, self.done_keys[0], self.claim.curve)
        lo, hi = self.claim.x_range or (float("-inf"), float("inf"))
        inside = (steps >= lo) & (steps <= hi)
        return steps[inside].astype(float), mean[inside]


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
    judge = _Judge(claim, store, registry, seeds or claim.seeds)
    against = claim.expect.get("against") if claim.kind == "tracking" else None
    return ClaimValues(tuple(g.label() for g in claim.groups), judge.group_seed_values(claim.metric),
                       judge.group_seed_values(claim.x_metric) if claim.x_metric else None,
                       tuple(tuple(keys) for keys in judge.done_keys),
                       judge.group_seed_values(against) if against else None)


def abs_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """|Pearson r| of two samples; NaN with fewer than 3 points or a constant sample (no correlation to speak of)."""
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(abs(np.corrcoef(x, y)[0, 1]))


def paired_gaps(values: np.ndarray, order: str) -> list[np.ndarray]:
    """Per adjacent pair of groups of (groups, seeds) values, the per-seed gaps in the claimed direction (positive =
    as claimed)."""
    sign = _sign(order)
    return [sign * (b - a) for a, b in zip(values, values[1:])]


def gap_and_se(gaps: np.ndarray) -> tuple[float, float]:
    """The mean of a pair's finite per-seed gaps and its standard error (NaN below two seeds)."""
    gaps = gaps[np.isfinite(gaps)]
    se = float(np.std(gaps, ddof=1) / np.sqrt(len(gaps))) if len(gaps) > 1 else float("nan")
    return (float(np.mean(gaps)) if len(gaps) else float("nan")), se


def seeds_holding(values: np.ndarray, order: str, slack: float = 0.0, min_gap: float | None = None) -> list[int]:
    """Per adjacent pair, the seeds in which the claimed relation holds (with min_gap: by that gap in the seed)."""
    if min_gap is None:
        return [sum(_ordered(x, y, order, slack) for x, y in zip(a, b)) for a, b in zip(values, values[1:])]
    return [sum(_clears(g, float(min_gap)) for g in gaps) for gaps in paired_gaps(values, order)]


def _sign(order: str) -> float:
    """+1 when the claim says increasing, −1 when decreasing: gaps in the claimed direction are positive."""
    return 1.0 if order == "increasing" else -1.0


def _ordered(a: float, b: float, order: str, slack: float) -> bool:
    """b follows a in `order`: strictly without slack ("beats" fails on a tie); with a relative slack (absolute
    on |a| when a < 0) the claim is one of tolerance, and a tie holds. NaN never holds."""
    if slack == 0:
        return b > a if order == "increasing" else b < a
    if order == "increasing":
        return b >= a * (1 - slack) if a >= 0 else b >= a - abs(a) * slack
    return b <= a * (1 + slack) if a >= 0 else b <= a + abs(a) * slack


def _clears(gap: float, min_gap: float) -> bool:
    """A gap in the claimed direction clears `min_gap`: strictly above 0 when min_gap is 0 (a tie is no win),
    at least min_gap otherwise (a positive margin, or a negative one for non-inferiority)."""
    return bool(np.isfinite(gap)) and (gap > 0 if min_gap == 0 else gap >= min_gap)


def _within(ours: float, target: float | None, tol: dict) -> bool:
    if target is None or not np.isfinite(ours):
        return False
    if "factor" in tol:
        return target > 0 and ours > 0 and max(ours / target, target / ours) <= float(tol["factor"])
    if "rtol" in tol:
        return abs(ours - target) <= float(tol["rtol"]) * abs(target)
    return abs(ours - target) <= float(tol.get("atol", 0.0))


def _paper_text(c: Claim) -> str:
    if c.kind == "value":
        return f"{c.paper_value:g}" + (" (approx.)" if c.approximate else "")
    if c.kind == "rate":
        return f"slope {c.expect.get('slope')}"
    if c.kind == "tracking":
        return (f"|corr({c.x_metric}, {c.metric})| − |corr({c.expect['against']}, {c.metric})| "
                f"≥ {float(c.expect['min_advantage']):g}")
    if c.kind == "bound":
        parts = [f"≥ {c.expect['min']:g}" if "min" in c.expect else "",
                 f"≤ {c.expect['max']:g}" if "max" in c.expect else ""]
        return " and ".join(filter(None, parts))
    relation = " < " if c.expect.get("order", "increasing") == "increasing" else " > "
    return f"{c.metric}: {relation.join(g.label() for g in c.groups)}"


def evaluate_paper(paper: Paper, store: Store, registry: Registry, seeds: int | None = None) -> list[Verdict]:
    """A verdict per control, claim and check (in that order); a claim gated by a failed positive control is
    inconclusive."""
    verdicts = [_Judge(claim, store, registry, seeds or claim.seeds, paper.slug).verdict() for claim in paper.claims]
    verdicts = [replace(v, detail=f"sanity check, cannot fail by construction ({v.claim.why}); {v.detail}")
                if v.claim.role == "check" else v for v in verdicts]
    # a positive control is judged against its own null first: one whose null also passes cannot show the effect
    verdicts = [_against_control(v, store, registry, seeds) if v.claim.control and v.claim.role == "control" else v
                for v in verdicts]
    gate = {gated: v for v in verdicts if v.claim.role == "control" for gated in v.claim.gates}
    verdicts = [_gated(v, gate[v.claim.id]) if v.claim.id in gate else v for v in verdicts]
    return [_against_control(v, store, registry, seeds) if v.claim.control and v.claim.role != "control" else v
            for v in verdicts]


HOLDS = ("reproduced", "partially")
PENDING = ("not run", "insufficient seeds")


def _against_control(verdict: Verdict, store: Store, registry: Registry, seeds: int | None) -> Verdict:
    """The claim's verdict in the light of its negative control: a claim that also holds where it must not is
    uninformative; the detail says how the control came out either way."""
    claim = verdict.claim
    control = _Judge(claim.negative_control(), store, registry, seeds or claim.seeds).verdict()
    cells = ", ".join(g.label() for g in claim.control)
    if control.verdict in PENDING:
        note = f"negative control ({cells}) not run yet: `bench reproduce --controls` runs it"
        return replace(verdict, detail=f"{note}; {verdict.detail}", control="not run")
    criterion = control.detail.split("measured at")[0].rstrip("; ")
    shown = control.ours_text if claim.kind in ("bound", "ordering") else f"{cells}: {control.ours_text}"  # labelled
    measured = f"{shown}: {criterion}" if criterion else shown
    if control.verdict in HOLDS and verdict.verdict in HOLDS:
        return replace(verdict, verdict="uninformative", control="passes",
                       detail=f"the claim also holds on its negative control ({claim.control_why}), where it must "
                              f"not ({measured}): it cannot tell the effect from its absence; the claim's own "
                              f"criterion gave {verdict.verdict}: {verdict.detail}")
    outcome = "passes" if control.verdict in HOLDS else "fails"
    note = ("negative control fails as it must" if outcome == "fails" else "negative control also passes") + \
        f" ({measured})"
    return replace(verdict, detail=f"{note}; {verdict.detail}", control=outcome)


def _gated(verdict: Verdict, control: Verdict) -> Verdict:
    """The claim's verdict in the light of its world's positive control."""
    if control.verdict in ("not reproduced", "partially", "uninformative") and \
            verdict.verdict not in ("not run", "insufficient seeds"):
        why = control.detail.split("; measured at")[0]
        return replace(verdict, verdict="inconclusive",
                       detail=f"positive control {control.claim.id} failed ({why}): this world cannot show the "
                              f"effect; the claim's own criterion gave {verdict.verdict}: {verdict.detail}")
    if (control.verdict in ("not run", "insufficient seeds")
            and verdict.verdict not in ("not run", "insufficient seeds")):
        return replace(verdict, detail=f"positive control {control.claim.id} not run yet; {verdict.detail}")
    return verdict


def claims_only(verdicts: list[Verdict]) -> list[Verdict]:
    """The paper's claims, without its worlds' positive controls and its sanity checks (never counted)."""
    return [v for v in verdicts if v.claim.role == "claim"]


@dataclass(frozen=True)
class Marker:
    """A number a paper reports for a method on a task (drawn beside our bar)."""

    paper: str
    claim: str
    method: str
    task_config: dict[str, Any]  # the full config of the task instance the value is for
    metric: str
    value: float
    approximate: bool
    method_label: str = ""       # the method's config where it differs from its defaults (as the task page's rows)


def paper_markers(registry: Registry, task: str) -> list[Marker]:
    """Every paper value (value claims, per-cell paper values) reported on `task`."""
    markers = []
    for slug in registry.papers():
        try:
            paper = load_paper(registry, slug)
        except BenchError:
            continue  # a broken claims file is reported on the paper's page, not here
        for claim in paper.claims:
            for group in claim.groups:
                value = group.paper_value if group.paper_value is not None else (
                    claim.paper_value if claim.kind == "value" else None)
                if group.task == task and value is not None:
                    from leaderboard.queries import config_label, defaults_of

                    cell = group_cells(group, registry, 1)[0]
                    markers.append(Marker(slug, claim.id, group.method, dict(cell.task_config), claim.metric,
                                          float(value), claim.approximate,
                                          config_label(dict(cell.method_config),
                                                       defaults_of(registry, "method", group.method))))
    return markers


@dataclass(frozen=True)
class PaperOverview:
    """A paper's claims counted by verdict, per scale (checks and controls apart), and what they cost."""

    slug: str
    title: str
    counts: dict[str, int]                                   # the claims of every scale, by verdict
    error: str | None = None
    by_scale: dict[str, dict[str, int]] = field(default_factory=dict)
    checks: int = 0                                          # sanity checks: judged, never counted
    cpu_s: float | None = None                               # CPU seconds of the shown runs (None: unmeasured)
    source: str = "store"                                    # "reference": the verdict lock's, nothing stored
    unchecked: int = 0                                       # holding claims whose negative control was not run


VERDICTS = ("reproduced", "partially", "not reproduced", "uninformative", "inconclusive", "insufficient seeds",
            "not run")


def count_verdicts(verdicts: list[Verdict]) -> dict[str, int]:
    counts = {v: 0 for v in VERDICTS}
    for verdict in verdicts:
        counts[verdict.verdict] += 1
    return counts


def paper_overview(paper: Paper, store: Store, registry: Registry, seeds: int | None = None) -> PaperOverview:
    """A paper's claims counted by verdict and per scale, its checks, and the CPU seconds behind them; with nothing
    stored, its verdict lock's reference run."""
    from leaderboard.lock import paper_cost, read_lock, with_reference  # the lock reads this module

    lock = read_lock(paper.slug) if seeds is None else None  # a lock holds the claims' own seeds only
    verdicts, source = with_reference(evaluate_paper(paper, store, registry, seeds=seeds), lock)
    claims = claims_only(verdicts)
    by_scale = {scale: count_verdicts([v for v in claims if v.claim.scale == scale])
                for scale in SCALES if any(v.claim.scale == scale for v in claims)}
    checks = sum(v.claim.role == "check" for v in verdicts)
    unchecked = sum(v.verdict in HOLDS and v.control == "not run" for v in claims)
    return PaperOverview(paper.slug, paper.title, count_verdicts(claims), None, by_scale, checks,
                         paper_cost(verdicts, store, registry, lock if source == "reference" else None), source,
                         unchecked)


def overview(store: Store, registry: Registry) -> list[PaperOverview]:
    """Per paper, its paper_overview (or why its claims file cannot be read)."""
    rows = []
    for slug in registry.papers():
        try:
            rows.append(paper_overview(load_paper(registry, slug), store, registry))
        except BenchError as exc:
            rows.append(PaperOverview(slug, slug, {}, str(exc)))
    return rows


def uncontrolled(paper: Paper) -> list[str]:
    """The CPU-scale claims with neither a negative control nor a reason there can be none."""
    return [c.id for c in paper.claims
            if c.role == "claim" and c.scale in CPU_SCALES and not c.control and not c.control_none]


def check_all(registry: Registry) -> list[tuple[str, str | None]]:
    """(slug, error or None) for every claims file: names, metrics and config keys validated, and every CPU-scale
    claim able to fail (a negative control, or control_none saying why there is none)."""
    results = []
    for slug in registry.papers():
        try:
            paper = load_paper(registry, slug)
            paper_cells(paper, registry, 1)  # the Configs' own value checks too
            missing = uncontrolled(paper)
            if missing:
                raise BenchError(f"CPU-scale claim(s) without a negative control or control_none: {', '.join(missing)}")
            results.append((slug, None))
        except BenchError as exc:
            results.append((slug, str(exc)))
    return results
