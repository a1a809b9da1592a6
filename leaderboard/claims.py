"""A paper's claims (leaderboard/papers/<slug>.yaml) joined with stored runs -> a verdict each.

Every claim is decided by an interval (leaderboard/judge.py, leaderboard/evidence.py): the 95 % interval of the
quantity it is about, from its per-seed values (t by default, `interval: bootstrap` per claim), against its margin.
Reproduced: the interval lies on the claimed side; not reproduced: on the other side; underpowered: it straddles the
margin (the card names the seeds that would decide it at 80 % power and their CPU cost). The paper's claims are
adjusted together for the family-wise error (Holm). A claim whose quantity has no seed noise says why in
`deterministic:` (its interval is the value).

Claim kinds (the keys of `expect:`):
  value     one cell group inside the paper's band: paper_value within `tolerance` (relative: {rtol: 0.05},
            absolute: {atol: 0.1}, or within a factor: {factor: 2}).
  bound     every cell group's mean inside {min: x} and/or {max: x}.
  ordering  the groups ordered as {order: increasing} (each group's metric above the previous one's) or decreasing,
            judged on the paired per-seed gaps of adjacent groups: above 0 by default ("X beats Y" fails on a tie),
            above `min_gap` (metric units; negative: non-inferiority), above −`slack`·|first mean| (a relative
            tolerance), or with `min_ratio: r` the per-seed log ratio above log r; per-group `paper_value`s off by
            more than `tolerance` (default a factor 2) make it "partially". `seeds_holding: k` asks the relation to
            hold in at least k seeds too (the same share at another seed count): an additional condition, never
            the only one.
  rate      a log-log slope within expect {slope: s, tolerance: d}: of each seed's curve over a step range (`curve`,
            `x_range`), or of the metric across cell groups against `x_metric`, per seed; the interval of the slopes.
  tracking  `x_metric` tracks `metric` across models better than another metric does: over every finished run of
            every cell group (each run a model; at least 3 groups), |corr(x_metric, metric)| minus
            |corr(expect.against, metric)| is at least expect.min_advantage, with a bootstrap over runs.
Verdicts: reproduced, not reproduced, partially, underpowered, uninformative, inconclusive, no-harm holds / fails,
not run, insufficient seeds. Each states the scale it was measured at (paper-scale | cpu-full | cpu-reduced) and, in
words, how our setting differs from the paper's.

Switched off: every method of the paper that declares SWITCHED_OFF (bench/switches.py) is replaced by each of its
switches, and a claim that still holds is uninformative: the paper's mechanism is not what makes it hold (a claim's
`switches: [names]` narrows this to the switches it is about). A claim marked `no_harm: true` is a non-inferiority
claim about a side effect (accuracy kept): it reads "no-harm holds" or "no-harm fails", is never switched off, and
is never counted among the reproduced effects.

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

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import yaml

from bench.cells import Entry, make_cell
from bench.errors import BenchError
from bench.registry import Registry
from bench.spec import Cell
from bench.store import Store
from bench.switches import Switch
from leaderboard.evidence import ALPHA, holm, holm_level, seeds_needed
from leaderboard.judge import (CellStat, Judged, describe, judge_bound, judge_ordering, judge_rate, judge_tracking,
                               judge_value, settle)
from leaderboard.judge import abs_correlation, paired_gaps, seeds_holding  # noqa: F401 - the cards and plots read them

KINDS = ("value", "bound", "ordering", "rate", "tracking")
ORDERING_KEYS = ("order", "slack", "min_gap", "min_ratio", "tolerance", "seeds_holding")
INTERVALS = ("t", "bootstrap")
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
    interval: str = "t"                # how the 95 % interval is computed: t, or bootstrap (leaderboard/evidence.py)
    deterministic: str = ""            # why the measured quantity does not depend on the seed (its interval is exact)
    no_harm: bool = False              # a non-inferiority claim about a side effect: its own section, never an effect
    switches: tuple[str, ...] | None = None  # which credited switches the claim is about (None: every one)

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
    evidence: Evidence | None = None  # the interval the verdict rests on
    judged: Judged | None = None      # the criterion's evaluation (for Holm's adjustment across the paper)
    switched: str = "none"  # with each credited method switched off: none (nothing to switch), not run, fails, holds


@dataclass(frozen=True)
class Evidence:
    """The interval a verdict rests on: the deciding quantity's estimate and 95 % interval against the claim's
    threshold, its raw and Holm-adjusted p-value, and for an undecided claim the seeds that would decide it."""

    quantity: str = ""
    estimate: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    n: int = 0
    method: str = "t"
    threshold: float = float("nan")
    side: int = 1
    p: float = float("nan")
    p_adjusted: float = float("nan")
    level: float = ALPHA       # the level Holm tests this claim at (α / (m − rank))
    family: int = 1            # the claims in the paper's Holm family
    direction: str = "holds"
    seeds_needed: int | None = None
    cost_s: float | None = None
    cells: tuple[CellStat, ...] = ()
    extra: str = ""
    extra_ok: bool = True
    partial: str = ""

    def text(self) -> str:
        if not self.quantity:
            return ""
        if not np.isfinite(self.low):
            interval = f"{_fmt(self.estimate)}, no interval from {self.n} value(s)"
        elif self.method == "exact":
            interval = f"{_fmt(self.estimate)} (exact: no seed noise)"
        else:
            interval = (f"{_fmt(self.estimate)}, 95 % {self.method} interval [{_fmt(self.low)}, {_fmt(self.high)}], "
                        f"n={self.n}")
        p = f"p={self.p:.2g}" if np.isfinite(self.p) else "p n/a"
        if self.family > 1 and np.isfinite(self.p_adjusted):
            p += f", Holm-adjusted {self.p_adjusted:.2g} over {self.family} claims"
        needed = ""
        if self.seeds_needed is not None:
            cost = f", about {self.cost_s / 60:.0f} CPU-min" if self.cost_s is not None else ""
            needed = f"; 80 % power needs {self.seeds_needed} seeds{cost}"
        elif np.isfinite(self.estimate) and not np.isfinite(self.low):
            needed = "; needs ≥ 2 seeds for an interval"
        return f"{self.quantity}: {interval} ({p}){needed}"


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
        interval=_interval(merged, cid), deterministic=str(merged.get("deterministic") or "").strip(),
        no_harm=_no_harm(raw, role, cid), switches=_switch_names(raw, cid),
    )


def _switch_names(raw: dict, cid: str) -> tuple[str, ...] | None:
    """`switches: [names]`: an ablation claim about one part of a method is judged switched off by the switches that
    remove that part only ([] when its own cells already ablate it); absent, by every switch of its credited
    methods."""
    if "switches" not in raw:
        return None
    names = raw["switches"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise BenchError(f"claim {cid!r}: switches must be a list of switch names (bench list methods shows them)")
    return tuple(names)


def _interval(merged: dict, cid: str) -> str:
    interval = merged.get("interval", "t")
    if interval not in INTERVALS:
        raise BenchError(f"claim {cid!r}: interval {interval!r} unknown; allowed: {', '.join(INTERVALS)}")
    return interval


def _no_harm(raw: dict, role: str, cid: str) -> bool:
    """`no_harm: true`, only on a claim: a non-inferiority claim about a side effect (accuracy kept, preservation
    kept), shown in its own section and never counted among the reproduced effects."""
    value = raw.get("no_harm", False)
    if not isinstance(value, bool):
        raise BenchError(f"claim {cid!r}: no_harm must be true or false, got {value!r}")
    if value and role != "claim":
        raise BenchError(f"{role} {cid!r}: no_harm belongs to a claim (a side effect the paper says it avoids)")
    return value


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
    declared = {s.name for switches in credited_switches(paper, registry).values() for s in switches}
    for claim in paper.claims:
        unknown = sorted(set(claim.switches or ()) - declared)
        if unknown:
            raise BenchError(f"{path}: claim {claim.id!r}: unknown switch(es) {', '.join(unknown)}; the paper's "
                             f"methods declare: {', '.join(sorted(declared)) or 'none'}")
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
    if "margin_se" in expect:
        raise BenchError(f"{where}: margin_se is retired: the 95 % interval of the paired gap decides an ordering; "
                         "give min_gap for a margin in the metric's units (negative for non-inferiority)")
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
    if len({"slack", "min_gap", "min_ratio"} & set(expect)) > 1:
        raise BenchError(f"{where}: give one of slack, min_gap, min_ratio "
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


def claim_groups(claim: Claim, controls: bool = False, paper: Paper | None = None,
                 registry: Registry | None = None) -> tuple[CellGroup, ...]:
    """A claim's cell groups; with `controls`, its negative control's too, and (given its paper and the registry)
    those of the claim with each credited method switched off."""
    if not controls:
        return claim.groups
    switched = [g for _, c in switched_claims(claim, paper, registry) for g in c.groups] if paper and registry else []
    return (*claim.groups, *claim.control, *switched)


def paper_cells(paper: Paper, registry: Registry, seeds: int | None = None, controls: bool = True) -> list[Cell]:
    """Every cell the paper's claims (and, by default, their negative controls) need: unique, in claim order,
    built and checked by the Configs."""
    cells = [c for claim in paper.claims for g in claim_groups(claim, controls, paper, registry)
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
        found = min(len(keys) for keys in self.done_keys)
        if found == 0:
            return self._make("not run", [], "", "; ".join(filter(None, [self._not_run(), self._failures()])))
        if found < self.seeds:
            return self._make("insufficient seeds", [], "", "; ".join(filter(None, [
                f"{found} of {self.seeds} seeds finished per cell", self._failures()])))
        judged = self.judged()
        if judged is None:
            return self._make("not reproduced", [], "n/a", self._no_fit)
        return self._settled(judged, judged.decision.p)

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
        return self._rate(labels)

    def _rate(self, labels) -> Judged | None:
        c = self.claim
        if c.curve:
            from leaderboard.queries import curves

            keys = self.done_keys[0]
            steps, values = curves(self.store, keys, c.curve)
            lo, hi = c.x_range or (float("-inf"), float("inf"))
            inside = (steps >= lo) & (steps <= hi)
            fits = [(steps[inside].astype(float), row[inside]) for row in values]
            if not fits or inside.sum() < 2:
                self._no_fit = "fewer than two positive points to fit a slope"
                return None
            return judge_rate(c, fits, f"log-log slope of {c.curve} over steps {c.x_range}")
        x, y = self.group_seed_values(c.x_metric), self.group_seed_values(c.metric)
        missing = [g for g, a, b in zip(labels, x, y, strict=True)
                   if not (np.isfinite(a).all() and np.isfinite(b).all())]
        if missing:  # a run that stopped short (budget, divergence) reports no count: the slope would skip it
            self._no_fit = (f"no {c.metric} / {c.x_metric} for {', '.join(missing)}: a slope across settings needs "
                            "every one")
            return None
        fits = [(x[:, s], y[:, s]) for s in range(x.shape[1])]
        if any(((fx > 0) & (fy > 0)).sum() < 2 for fx, fy in fits):
            self._no_fit = "fewer than two positive points to fit a slope"
            return None
        return judge_rate(c, fits, f"log {c.metric} vs log {c.x_metric}", labels, y)

    _no_fit = ""

    def _settled(self, judged: Judged, p_adjusted: float, family: int = 1, level: float = ALPHA) -> Verdict:
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
        if not hasattr(self, "_cpu_seed"):
            from bench.models import Run
            from sqlalchemy import select

            keys = [k for keys in self.done_keys for k in keys]
            with self.store.engine.connect() as connection:
                cpu = connection.execute(select(Run.cpu_s).where(Run.run_key.in_(keys))).scalars().all()
            self._cpu_seed = (sum(cpu) / self.seeds) if cpu and all(x is not None for x in cpu) else None
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
    judge = _Judge(claim, store, registry, seeds or claim.seeds)
    against = claim.expect.get("against") if claim.kind == "tracking" else None
    return ClaimValues(tuple(g.label() for g in claim.groups), judge.group_seed_values(claim.metric),
                       judge.group_seed_values(claim.x_metric) if claim.x_metric else None,
                       tuple(tuple(keys) for keys in judge.done_keys),
                       judge.group_seed_values(against) if against else None)


def gap_and_se(gaps: np.ndarray) -> tuple[float, float]:
    """The mean of a pair's finite per-seed gaps and its standard error (NaN below two seeds)."""
    gaps = gaps[np.isfinite(gaps)]
    se = float(np.std(gaps, ddof=1) / np.sqrt(len(gaps))) if len(gaps) > 1 else float("nan")
    return (float(np.mean(gaps)) if len(gaps) else float("nan")), se


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
    """A verdict per control, claim and check (in that order).

    Each claim is decided by its interval at the paper's Holm-adjusted level; a claim gated by a failed positive
    control is inconclusive; one that also holds on its negative control, or with a method it credits switched off,
    is uninformative; a no-harm claim reads "no-harm holds" or "no-harm fails"."""
    judges = [_Judge(claim, store, registry, seeds or claim.seeds, paper.slug) for claim in paper.claims]
    verdicts = _holm([j.verdict() for j in judges], judges)
    verdicts = [replace(v, detail=f"sanity check, cannot fail by construction ({v.claim.why}); {v.detail}")
                if v.claim.role == "check" else v for v in verdicts]
    # a positive control is judged against its own null first: one whose null also passes cannot show the effect
    verdicts = [_against_control(v, store, registry, seeds) if v.claim.control and v.claim.role == "control" else v
                for v in verdicts]
    gate = {gated: v for v in verdicts if v.claim.role == "control" for gated in v.claim.gates}
    verdicts = [_gated(v, gate[v.claim.id]) if v.claim.id in gate else v for v in verdicts]
    verdicts = [_against_control(v, store, registry, seeds) if v.claim.control and v.claim.role != "control" else v
                for v in verdicts]
    verdicts = [_switched_off(v, paper, store, registry, seeds) if v.claim.role == "claim" else v for v in verdicts]
    return [_as_no_harm(v) if v.claim.no_harm else v for v in verdicts]


def _holm(verdicts: list[Verdict], judges: list[_Judge]) -> list[Verdict]:
    """The paper's claims re-decided at their Holm-adjusted p-values (controls and checks keep their own level)."""
    family = [i for i, v in enumerate(verdicts) if v.claim.role == "claim" and v.judged is not None]
    pvalues = [verdicts[i].judged.decision.p for i in family]
    adjusted = holm(pvalues)
    out = list(verdicts)
    for k, i in enumerate(family):
        settled = judges[i]._settled(verdicts[i].judged, adjusted[k], len(family), holm_level(pvalues, k))
        out[i] = settled
    return out


NO_HARM = {"reproduced": "no-harm holds", "partially": "no-harm holds", "not reproduced": "no-harm fails"}


def _as_no_harm(verdict: Verdict) -> Verdict:
    return replace(verdict, verdict=NO_HARM.get(verdict.verdict, verdict.verdict))


def credited_switches(paper: Paper, registry: Registry) -> dict[str, tuple[Switch, ...]]:
    """{method: its switches} for the paper's methods that declare a setting removing their mechanism."""
    out = {}
    for name in paper.methods:
        declared = registry.switched_off(name)
        if isinstance(declared, tuple):
            out[name] = declared
    return out


def switched_claims(claim: Claim, paper: Paper, registry: Registry) -> list[tuple[Switch, Claim]]:
    """The claim judged with each credited method replaced by each of its switches (every group of that method at
    once), as (switch, claim) pairs; none for a no-harm claim, whose side effect holds trivially switched off."""
    if claim.role != "claim" or claim.no_harm:
        return []
    out = []
    for method, switches in credited_switches(paper, registry).items():
        if not any(g.method == method for g in claim.groups):
            continue
        for switch in switches:
            if claim.switches is not None and switch.name not in claim.switches:
                continue
            groups = tuple(_switch_group(g, switch, registry) if g.method == method else g for g in claim.groups)
            out.append((switch, replace(claim, id=f"{claim.id} (switched off: {method} {switch.name})", groups=groups,
                                        role="switched off", control=(), differences="")))
    return out


def _switch_group(group: CellGroup, switch: Switch, registry: Registry) -> CellGroup:
    """The group with its method switched off: the switch's config over the group's own settings (those the
    replacing method also has)."""
    if switch.method == group.method:
        config = {**group.method_config, **switch.config}
    else:
        fields = registry.config_fields("method", switch.method)
        config = {**{k: v for k, v in group.method_config.items() if k in fields}, **switch.config}
    return replace(group, method=switch.method, method_config=config, paper_value=None)


def _switched_off(verdict: Verdict, paper: Paper, store: Store, registry: Registry, seeds: int | None) -> Verdict:
    """A claim that holds is judged again with each credited method switched off: if it still holds under any
    switch, the paper's mechanism is not what makes it hold, and it is uninformative."""
    variants = switched_claims(verdict.claim, paper, registry)
    if not variants or verdict.verdict not in HOLDS:
        return verdict
    results = [(switch, _Judge(c, store, registry, seeds or verdict.claim.seeds).verdict()) for switch, c in variants]
    if any(v.verdict in PENDING for _, v in results):
        missing = ", ".join(s.label() for s, v in results if v.verdict in PENDING)
        return replace(verdict, switched="not run", detail=f"switched off not run yet ({missing}): "
                                                            f"`bench reproduce --controls` runs it; {verdict.detail}")
    held = [(s, v) for s, v in results if v.verdict in HOLDS]
    if held:
        s, v = held[0]
        return replace(verdict, verdict="uninformative", switched="holds",
                       detail=f"the claim still holds with the method switched off ({s.label()}: {v.ours_text}; "
                              f"{v.detail.split('; measured at')[0]}): the paper's mechanism is not what makes it "
                              f"hold; the claim's own criterion gave {verdict.verdict}: {verdict.detail}")
    shown = "; ".join(f"{s.label()}: {v.verdict}" for s, v in results)
    return replace(verdict, switched="fails", detail=f"switched off, it fails as it must ({shown}); {verdict.detail}")


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
    if control.verdict in ("not reproduced", "partially", "uninformative", "underpowered") and \
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


VERDICTS = ("reproduced", "partially", "not reproduced", "underpowered", "uninformative", "inconclusive",
            "no-harm holds", "no-harm fails", "insufficient seeds", "not run")


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
