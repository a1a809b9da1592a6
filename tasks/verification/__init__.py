"""Probabilistic verification of neural networks: bounds on probabilities of network behaviour.

Contract of the family (Boetius, Leue & Sutter, "Solving Probabilistic Verification Problems of
Neural Networks using Branch and Bound", ICML 2025, arXiv 2405.17556; our report
docs/papers/prob-verification.md):

A task builds a `VerificationProblem`: a ReLU network f (preprocessing folded in, tasks/verification/
_network.py), a population model over the input space with exact box probabilities
(_population.py), a target expression over probabilities P(φ | ψ) (_formula.py) and, for
verification problems, a probabilistic formula to decide (e.g. the FairSquare demographic-parity
ratio P(hi | female) / P(hi | male) > 1 − ε). Where the inputs are discrete, the task enumerates
them and stores the exact probabilities and the true verdict.
A method returns a `VerificationResult`: its verdict (True / False / None = undecided), [lb, ub] per
probability and for the target, iterations and runtime. Sound methods (PV, uniform splitting,
enumeration) return bounds that contain the truth; Monte-Carlo returns a confidence interval
(`certain=False`) and its verdict holds only with that confidence.
`score` is the only judge: decidedness, the verdict (and whether it is right where the truth is
known), the target's bounds, their width, and whether they contain the exact value. `runtime_s` is the solve's
wall time as the harness timed it (the problem's `bench.observe.Meter`, delimited to the solve by bench/execute.py),
not the method's own clock. `mass_calls` and `mass_boxes` are observed too: the population counts every call of
`Population.probability` (the only way to a box's exact mass) and the boxes it was given into the same meter, so
the branch-and-bound work a method did is counted where it is spent. `iterations` is the method's report
(branch-and-bound rounds, Monte-Carlo batches): a round is the algorithm's own unit, which no counter sees; in PV's
loop (methods/verification/_bab.py) a round calls `probability` once per generator still open, so `mass_calls` is
one per generator plus one per open generator per round, not the round count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bench.observe import Meter
from bench.spec import Metric
from tasks.verification._exact import exact_probabilities as exact_probabilities

# what the family's methods may use of its worlds, beyond the problem and result types (they import no private
# task module: tests/test_layers.py)
from tasks.verification._formula import FALSE_ as FALSE_
from tasks.verification._formula import TRUE_ as TRUE_
from tasks.verification._formula import And as And
from tasks.verification._formula import Prob, probabilities, truth, value
from tasks.verification._formula import decide as decide
from tasks.verification._formula import holds as holds
from tasks.verification._formula import interval as interval
from tasks.verification._formula import sat_bounds as sat_bounds
from tasks.verification._formula import split_input_bounds as split_input_bounds
from tasks.verification._formula import uses_outputs as uses_outputs
from tasks.verification._network import Network
from tasks.verification._network import one_thread as one_thread
from tasks.verification._population import InputSpace as InputSpace
from tasks.verification._population import Population


@dataclass(frozen=True, eq=False)
class VerificationProblem:
    name: str                      # the instance, e.g. "fairsquare V2H1 uind qualified"
    network: Network               # f, the whole input vector -> outputs
    population: Population         # D, with its input space
    target: object                 # the probability expression whose bounds are reported
    spec: object | None = None     # a probabilistic formula to decide; None: quantification only
    exact: dict[str, float] | None = None  # exact P per Prob name (enumeration), when known
    expected: bool | None = field(init=False, default=None)  # the true verdict, when known
    meter: Meter = field(init=False, repr=False, compare=False, default=None)  # the harness's stopwatch and counts

    def __post_init__(self) -> None:
        object.__setattr__(self, "meter", Meter())
        self.population.count_into(self.meter)  # mass_calls, mass_boxes: the box masses the solve evaluated
        if self.population.space.dim != self.network.in_dim:
            raise ValueError(f"the network takes {self.network.in_dim} inputs, the input space has "
                             f"{self.population.space.dim}")
        if self.exact is not None and self.spec is not None:
            object.__setattr__(self, "expected", truth(self.spec, self.exact))

    def __setstate__(self, state: dict) -> None:
        """Unpickled: the population counts into this problem's meter again (the link is not pickled)."""
        self.__dict__.update(state)
        self.population.count_into(self.meter)

    @property
    def probabilities(self) -> list[Prob]:
        """Every probability term of the target and the formula, once each."""
        found = probabilities(self.target) + (probabilities(self.spec) if self.spec is not None else [])
        return list({p.name: p for p in found}.values())

    @property
    def exact_target(self) -> float | None:
        return None if self.exact is None else value(self.target, self.exact)


@dataclass(frozen=True, eq=False)
class VerificationResult:
    verdict: bool | None                     # the formula proven true / false; None: undecided
    bounds: dict[str, tuple[float, float]]   # [lb, ub] per probability (by Prob name)
    target: tuple[float, float]              # [lb, ub] of problem.target
    iterations: int = 0                      # branch-and-bound iterations (MC: sample batches); the method's report
    runtime_s: float = 0.0                   # the method's own clock of its solve (not scored: the harness times it)
    certain: bool = True                     # False: statistical bounds (a confidence interval)


METRICS = {
    "bound_width": Metric(False, "", True, "the largest ub − lb over the probabilities when the method stopped",
                          bounds=(0.0, None)),
    "target_width": Metric(False, "", False, "ub − lb of the target (e.g. the ratio; absent while unbounded)",
                           bounds=(0.0, None)),
    "decided": Metric(True, "", False, "1 if the formula was proven true or false (absent without a formula)",
                      bounds=(0.0, 1.0)),
    "verdict": Metric(True, "", False, "1 if the formula holds (e.g. the network is fair), 0 if not; "
                      "absent when undecided", bounds=(0.0, 1.0)),
    "correct_verdict": Metric(True, "", False, "1 if a decided verdict equals the true one (known by enumeration)",
                              bounds=(0.0, 1.0)),
    "lower": Metric(True, "", False, "lb of the target"),
    "upper": Metric(False, "", False, "ub of the target"),
    "truth": Metric(True, "", False, "the exact target value, where the task enumerated it"),
    "contains_truth": Metric(True, "", False, "1 if every probability's [lb, ub] (and the target's) "
                             "contains the exact value", bounds=(0.0, 1.0)),
    "runtime_s": Metric(False, "s", False, "wall time of the method's solve, timed by the harness",
                        bounds=(0.0, None)),
    "iterations": Metric(False, "", False, "branch-and-bound iterations (Monte-Carlo: sample batches), as the method "
                         "reports them", bounds=(0.0, None)),
    "mass_calls": Metric(False, "", False, "calls of the population's exact box mass during the solve, counted by the "
                         "problem (PV: one per bound still open per round, plus one per bound at its root box; two "
                         "bounds per conditional probability)", bounds=(0.0, None)),
    "mass_boxes": Metric(False, "", False, "input boxes whose exact mass the population evaluated during the solve, "
                         "counted by the problem (the branches a branch and bound opened; enumeration: its inputs)",
                         bounds=(0.0, None)),
    "certain": Metric(True, "", False, "1 for sound bounds, 0 for a statistical confidence interval",
                      bounds=(0.0, 1.0)),
}

TOLERANCE = 1e-9  # float error allowed in `contains_truth` (masses are sums of CDF differences)


def score(problem: VerificationProblem, result: VerificationResult) -> dict[str, float]:
    lo, hi = result.target
    widths = [b - a for a, b in result.bounds.values()]
    observed = problem.meter.reading()
    scores = {"bound_width": max(widths) if widths else 0.0, "runtime_s": observed.seconds,
              "mass_calls": float(observed["mass_calls"]), "mass_boxes": float(observed["mass_boxes"]),
              "iterations": float(result.iterations), "certain": float(result.certain)}
    for name, v in (("lower", lo), ("upper", hi), ("target_width", hi - lo)):
        if math.isfinite(v):
            scores[name] = v
    if problem.spec is not None:
        scores["decided"] = float(result.verdict is not None)
        if result.verdict is not None:
            scores["verdict"] = float(result.verdict)
            if problem.expected is not None:
                scores["correct_verdict"] = float(result.verdict == problem.expected)
    if problem.exact is not None:
        exact_target = problem.exact_target
        if math.isfinite(exact_target):
            scores["truth"] = exact_target
        inside = [lo - TOLERANCE <= exact_target <= hi + TOLERANCE]
        for name, (plo, phi) in result.bounds.items():
            if name in problem.exact:
                inside.append(plo - TOLERANCE <= problem.exact[name] <= phi + TOLERANCE)
        scores["contains_truth"] = float(all(inside))
    return scores
