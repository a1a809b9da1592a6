"""Branch and bound over the input space (the authors' probspecs code: ProbabilityBounds,
Verifier), shared by pv, pv_longest_edge, pv_ibp and uniform_split.

`ProbabilityBounds` bounds one unconditional probability P(φ): input-bound conjuncts of φ are
applied to the root box (`apply_symbolic_bounds`); then, per iteration, certainly-satisfied
branches add their mass to lb, certainly-violated ones take it off ub, the `select` heuristic
picks `batch_size` open branches, the `split` heuristic picks one dimension each, and the two
children get network bounds (`bound`, CROWN or IBP), satisfaction bounds (interval arithmetic over
the formula skeleton, _formula.sat_bounds) and exact masses. lb only grows and ub only shrinks.
A box with an infinite side gets no network bounds (its status is unknown until split).
`verify` runs one such generator for P(φ ∧ ψ) and one for P(ψ) per conditional term, divides with
interval arithmetic, and decides the formula in three-valued logic after every iteration.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from bench.context import RunContext
from methods.verification._bounds import BOUNDS
from tasks.verification import (
    FALSE_,
    TRUE_,
    And,
    InputSpace,
    VerificationProblem,
    VerificationResult,
    decide,
    interval,
    one_thread,
    sat_bounds,
    split_input_bounds,
    uses_outputs,
)

RTOL = 1e-5  # a generator is finished when ub − lb <= RTOL·ub (probspecs' default)


def finite_rows(x: torch.Tensor) -> torch.Tensor:
    """(N,) whether every entry of each row of (N, d) x is finite: `torch.isfinite(x).all(1)`, computed from the
    rows' extremes (a NaN propagates through amin / amax and fails both comparisons). On this CPU ATen's isfinite
    and a boolean all(1) are scalar loops: 8x slower on PV's (10⁵, 67) child boxes, a third of its sat()."""
    return (x.amin(1) > -math.inf) & (x.amax(1) < math.inf)


# the settings of PV and its heuristic variants (pv, pv_ibp, pv_longest_edge, pv_random)
@dataclass(frozen=True)
class Config:
    batch_size: int = 512          # branches split per iteration (paper: 1024 FairSquare, 512 ACAS Xu / MiniACSIncome)
    max_iterations: int = 100_000  # iteration budget
    time_limit_s: float = 60.0     # time budget (paper: 900 s FairSquare, 3600 s MiniACSIncome)
    precision: float = 0.0         # > 0: bound every probability to this width instead of stopping when decided
    split_bounds: str = "ibp"      # split_heuristic_params.auto_lirpa_method: bounds that score smart-branching splits

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.max_iterations < 0 or self.time_limit_s <= 0 or self.precision < 0:
            raise ValueError("batch_size must be >= 1, max_iterations >= 0, time_limit_s > 0, precision >= 0")
        if self.split_bounds not in BOUNDS:
            raise ValueError(f"split_bounds {self.split_bounds!r} unknown; allowed: {', '.join(BOUNDS)}")


@dataclass
class Branches:
    """Open branches: boxes (N, d), their masses (N,) and satisfaction bounds (N,)."""

    lb: torch.Tensor
    ub: torch.Tensor
    mass: torch.Tensor
    s_lb: torch.Tensor
    s_ub: torch.Tensor

    def take(self, idx: torch.Tensor) -> "Branches":
        """The branches at `idx` (positions, or a boolean mask), in that order. index_select is advanced indexing's
        result about 3x faster on this CPU (a random permutation of every open branch each iteration is most of
        pv_random's time)."""
        if idx.dtype == torch.bool:
            idx = torch.nonzero(idx).squeeze(1)
        return Branches(*(t.index_select(0, idx) for t in (self.lb, self.ub, self.mass, self.s_lb, self.s_ub)))

    def __len__(self) -> int:
        return int(self.lb.shape[0])


def flatten(phi):
    if isinstance(phi, And):
        return [c for p in phi.parts for c in flatten(p)]
    return [phi]


def _round_inwards(lo: float, hi: float, strict: bool) -> tuple[float, float]:
    """Bounds on an integer-valued dim: x > 2.5 or x >= 2.5 -> x >= 3; x > 3 -> x >= 4."""
    if math.isfinite(lo):
        lo = math.floor(lo) + 1 if strict else math.ceil(lo)
    if math.isfinite(hi):
        hi = math.ceil(hi) - 1 if strict else math.floor(hi)
    return lo, hi


def root_box(space: InputSpace, bounds) -> tuple[np.ndarray, np.ndarray]:
    """The input space's box with the symbolic input bounds applied (ub < lb somewhere: empty)."""
    lb, ub = space.lb.astype(float).copy(), space.ub.astype(float).copy()
    discrete = set(space.integer) | {d for g in space.groups for d in g}
    for j, lo, hi, strict in bounds:
        if j in discrete:
            lo, hi = _round_inwards(lo, hi, strict)
        lb[j], ub[j] = max(lb[j], lo), min(ub[j], hi)
    return lb, ub


class ProbabilityBounds:
    """Anytime bounds on P(φ) under the problem's population (one generator, the branch-and-bound loop)."""

    def __init__(self, problem: VerificationProblem, event, bound: Callable, select: Callable, split: Callable,
                 batch_size: int, rng: np.random.Generator):
        self.problem, self.bound, self.select, self.split = problem, bound, select, split
        self.batch_size, self.rng = batch_size, rng
        self.event, input_bounds = split_input_bounds(And(tuple(flatten(event))))
        self.uses_net = uses_outputs(self.event)
        lb, ub = root_box(problem.population.space, input_bounds)
        self.lower, self.upper = 0.0, 0.0
        if np.all(ub >= lb):
            root = self.children(torch.tensor(lb)[None], torch.tensor(ub)[None])
            self.upper = float(root[0].mass.sum())
            self.branches = self.prune(root)
        else:  # the symbolic bounds are contradictory: an empty event
            self.branches = self.prune(self.children(torch.zeros(0, lb.size, dtype=torch.float64),
                                                     torch.zeros(0, lb.size, dtype=torch.float64)))

    def sat(self, lb: torch.Tensor, ub: torch.Tensor, bound: Callable | None = None):
        """Satisfaction bounds and three-valued status of φ on (N, d) boxes."""
        n, m = lb.shape[0], self.problem.network.out_dim
        y_lb = torch.full((n, m), -math.inf, dtype=torch.float64)
        y_ub = torch.full((n, m), math.inf, dtype=torch.float64)
        finite = finite_rows(lb) & finite_rows(ub)
        if self.uses_net and finite.any():
            y_lb[finite], y_ub[finite] = (bound or self.bound)(self.problem.network, lb[finite], ub[finite])
        return sat_bounds(self.event, y_lb, y_ub, lb, ub)

    def children(self, lb: torch.Tensor, ub: torch.Tensor) -> tuple[Branches, torch.Tensor]:
        mass = torch.as_tensor(self.problem.population.probability(lb.numpy(), ub.numpy()))
        s_lb, s_ub, status = self.sat(lb, ub)
        return Branches(lb, ub, mass, s_lb, s_ub), status

    def prune(self, new: tuple[Branches, torch.Tensor]) -> Branches:
        """Move certainly-decided mass into the bounds; keep the open branches with mass."""
        branches, status = new
        lower = self.lower + float(branches.mass[status == TRUE_].sum())
        upper = self.upper - float(branches.mass[status == FALSE_].sum())
        # float error may cross the two by an ulp; this keeps both monotone and lower <= upper
        self.upper = min(self.upper, max(upper, lower))
        self.lower = min(lower, self.upper)
        return branches.take((status != TRUE_) & (status != FALSE_) & (branches.mass > 0))

    @property
    def done(self) -> bool:
        return len(self.branches) == 0 or self.upper - self.lower <= RTOL * self.upper

    def step(self) -> tuple[float, float]:
        """One iteration: split the selected branches and prune their children."""
        if not self.done:
            order = self.select(self.branches, self.rng)
            chosen, rest = self.branches.take(order[: self.batch_size]), self.branches.take(order[self.batch_size:])
            left, right = self.split(self, chosen)
            new = self.children(torch.cat([left[0], right[0]]), torch.cat([left[1], right[1]]))
            opened = self.prune(new)
            self.branches = Branches(*(torch.cat([a, b]) for a, b in zip(
                (rest.lb, rest.ub, rest.mass, rest.s_lb, rest.s_ub),
                (opened.lb, opened.ub, opened.mass, opened.s_lb, opened.s_ub))))
        return self.lower, self.upper


def conditional(joint: tuple[float, float], given: tuple[float, float]) -> tuple[float, float]:
    """P(A | B) = P(A ∧ B) / P(B) by interval division, clipped to [0, 1] (as probspecs does)."""
    (a_lo, a_hi), (b_lo, b_hi) = joint, given
    lo = a_lo / b_hi if b_hi > 0 else 0.0
    hi = min(1.0, a_hi / b_lo) if b_lo > 0 else 1.0
    return min(max(lo, 0.0), 1.0), max(hi, min(max(lo, 0.0), 1.0))


@dataclass(frozen=True)
class Budget:
    max_iterations: int
    time_limit_s: float
    precision: float  # > 0: run until every probability is this tight (Verifier.bound); 0: until decided


@one_thread
def verify(problem: VerificationProblem, make: Callable, budget: Budget, ctx: RunContext) -> VerificationResult:
    """PV's top level (Verifier.verify / .bound): generators in lock-step, decided after each step."""
    start = time.perf_counter()
    gens = {}
    for p in problem.probabilities:
        gens[p.name] = (make(And((p.event, p.given))), make(p.given))
    it, verdict = 0, None
    while True:
        bounds = {name: conditional((j.lower, j.upper), (g.lower, g.upper)) for name, (j, g) in gens.items()}
        target = interval(problem.target, bounds)
        ctx.log(it, lower=target[0], upper=target[1])
        verdict = decide(problem.spec, bounds) if problem.spec is not None else None
        all_done = all(j.done and g.done for j, g in gens.values())
        tight = budget.precision > 0 and all(hi - lo <= budget.precision for lo, hi in bounds.values())
        elapsed = time.perf_counter() - start
        if all_done or tight or (verdict is not None and budget.precision == 0) \
                or it >= budget.max_iterations or elapsed >= budget.time_limit_s:
            break
        ctx.check_deadline()
        for j, g in gens.values():
            j.step()
            g.step()
        it += 1
        ctx.progress(max(it / budget.max_iterations, elapsed / budget.time_limit_s))
    return VerificationResult(verdict, bounds, target, it, time.perf_counter() - start)


def branch_and_bound(problem: VerificationProblem, config, ctx: RunContext, *, bound: Callable, select: Callable,
                     split: Callable) -> VerificationResult:
    """`verify` with one ProbabilityBounds per event, from a Config with batch_size and the budget."""
    def make(event):
        return ProbabilityBounds(problem, event, bound, select, split, config.batch_size, ctx.rng)
    return verify(problem, make, Budget(config.max_iterations, config.time_limit_s, config.precision), ctx)
