"""A paper's claims file (leaderboard/papers/<slug>.yaml) as data: the schema, key by key.

The file:

    paper: my-paper                         # the slug (the file's stem)
    title: "..."
    authors: ["A. Author", "B. Author"]
    venue: ICML 2025
    arxiv: "2501.01234"                     # or null
    code: https://github.com/...            # the authors' code, or null
    methods:                                # the methods the paper introduces, each with its fidelity
      my_method: {fidelity: reconstructed, deviations: "what differs from the paper, in words"}
    defaults: {seeds: 3, scale: cpu-reduced, source: "...", differences: "..."}   # any claim key, for every entry
    controls: [...]                         # positive controls of the world (below)
    claims: [...]                           # the paper's claims: the only entries counted
    checks: [...]                           # sanity checks (below)

`fidelity` is faithful (from the paper's own text or code), reconstructed (built from named secondary sources) or
approximate. Each entry of claims, controls and checks:

    - id: my-method-beats-sgd               # unique within the file
      statement: "..."                      # the paper's words
      source: "Table 2"                     # where the paper says it
      kind: ordering                        # value | bound | ordering | rate | tracking (below)
      metric: final_gap                     # a metric the task's family declares (bench list tasks)
      cells:                                # one cell group per entry: a method on a task, over seeds 0..seeds-1
        - {method: sgd, task: performative, task_config: {beta: 0.01}}
        - {method: my_method, task: performative, task_config: {beta: 0.01}, paper_value: 0.02}
      seeds: 10
      scale: cpu-reduced                    # paper-scale | cpu-full | cpu-reduced
      expect: {order: decreasing}           # what the kind asks of the cells; every tolerance is a key of expect
      control: {why: "...", cells: [...]}   # a claim's negative control, or control_none: "why none exists"

Optional keys: `differences` (how our setting differs, in words), `paper_value` and `approximate` (a value claim's
number, read off a plot), `interval` (t, the default, or bootstrap), `deterministic` (why the quantity has no seed
noise: its interval is the value), `fragile` (where float rounding was seen to flip it), `no_harm: true`,
`switches: [names]`, and a rate's `curve`, `x_range`, `x_metric` and `axis`. An unknown key is refused.

Kinds, and the keys of their `expect:`:
  value     one cell group's mean inside the paper's band: the claim's `paper_value` within exactly one tolerance of
            expect, {atol: 0.1} (absolute), {rtol: 0.05} (relative) or {factor: 2} (between value/2 and value·2).
  bound     every cell group's mean inside expect {min: x} and/or {max: y}.
  ordering  the cell groups in the order listed, judged on the paired per-seed gaps of adjacent groups.
            {order: increasing}: each group's metric is HIGHER than the group listed before it (listed A, B, C:
            A < B < C); {order: decreasing}: each is LOWER than the one before it (A > B > C). The gap must be above
            0 by default ("X beats Y" fails on a tie), above `min_gap` (metric units; negative: non-inferiority),
            above −`slack`·|first mean| (a relative tolerance), or with `min_ratio: r` the per-seed log ratio above
            log r. Per-group `paper_value`s off by more than expect's `tolerance` (a band as in a value claim;
            {factor: 2} by default) make it "partially". `seeds_holding: k` asks the relation to hold in at least k
            seeds too (the same share at another seed count): an additional condition, never the only one.
  rate      a fitted slope inside expect {slope: s, tolerance: d} (d absolute, 0.1 by default), decided by the
            interval of the per-seed slopes exactly like any other claim. What is fitted, per seed: the curve
            `curve` over the steps in `x_range: [first, last]`, or `metric` across the cell groups against
            `x_metric`. `axis` says how (loglog by default):
              loglog   log value against log x: a power law, value ∝ x^s (a sublinear rate, O(1/t): s = −1);
                       the x (steps or x_metric) must be positive, so an x_range starts above 0.
              semilog  log value against x itself: the per-iteration rate of linear convergence, value ∝ ρ^t with
                       s = log ρ, the log of the contraction factor per step (ρ = 0.9 per step: s = −0.105).
            Either way the values must be positive (a log is taken): a metric whose family declares it able to be
            negative (Metric.bounds) is refused when the file is read; points at or below 0 are left out of the
            fit, and a seed left with fewer than two positive points gives no slope, said in the verdict.
  tracking  `x_metric` tracks `metric` across models better than another metric does: over every finished run of
            every cell group (each run a model; at least 3 groups), |corr(x_metric, metric)| minus
            |corr(expect.against, metric)| is at least expect.min_advantage, with a bootstrap over runs.

Roles. A positive control (the file's `controls:`) is a claim about the world, not the paper: an oracle or planted
effect the metric must detect; `gates: [ids]` names the claims measured in its world, which are inconclusive when it
fails. A negative control (a claim's `control:`, with `why:` and `cells:`) is where the claim must NOT hold: the
paper's method swapped for the baseline it beats, a world without the property the method exploits. A CPU-scale
claim without one says why in `control_none:`. A check (the file's `checks:`, with `why:`) holds by construction or
by an identity: judged and shown with its reason, never counted. `no_harm: true` marks a claim about a side effect
kept (accuracy not lost): shown apart, never counted among the effects. `switches: [names]` narrows the switched-off
judgement (bench/switches.py) to the switches the claim is about. How verdicts follow: leaderboard/claims/evaluate.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

KINDS = ("value", "bound", "ordering", "rate", "tracking")
VALUE_KEYS = ("atol", "rtol", "factor")
BOUND_KEYS = ("min", "max")
ORDERING_KEYS = ("order", "slack", "min_gap", "min_ratio", "tolerance", "seeds_holding")
RATE_KEYS = ("slope", "tolerance")
TRACKING_KEYS = ("against", "min_advantage")
RATE_AXES = ("loglog", "semilog")
INTERVALS = ("t", "bootstrap")
MIN_TRACKING_SETTINGS = 3  # a correlation across fewer settings than this says nothing
CPU_SCALES = ("cpu-full", "cpu-reduced")
SCALES = ("paper-scale", "cpu-full", "cpu-reduced")
FIDELITIES = ("faithful", "reconstructed", "approximate")
CLAIM_KEYS = ("id", "statement", "source", "kind", "metric", "cells", "seeds", "scale", "expect", "control",
              "control_none", "differences", "paper_value", "approximate", "interval", "deterministic", "fragile",
              "no_harm", "switches", "curve", "x_range", "x_metric", "axis", "gates", "why")


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
    interval: str = "t"                # how the 95 % interval is computed: t, or bootstrap (claims/statistics.py)
    deterministic: str = ""            # why the measured quantity does not depend on the seed (its interval is exact)
    no_harm: bool = False              # a non-inferiority claim about a side effect: its own section, never an effect
    switches: tuple[str, ...] | None = None  # which credited switches the claim is about (None: every one)
    axis: str = "loglog"               # a rate's fit: log value against log x, or (semilog) against x itself

    def negative_control(self) -> Claim:
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
