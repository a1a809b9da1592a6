"""Uniform splitting: refine every open cell of a uniform grid, decide cells by interval arithmetic (baseline).

The issue's "naive uniform input splitting without bound propagation". Our reading, recorded here
and in the claims file: the input box is refined as a uniform grid — every open cell is bisected
in every iteration along its longest edge relative to the root box (a round-robin over the
dimensions, so after L·d iterations the grid has 2^(L·d) cells), with no branch-selection or
split heuristic — and a cell counts as certainly satisfied or violated only from a plain interval
evaluation of the network on the cell (IBP: interval arithmetic, no linear/CROWN bounds, no
optimisation of relaxations). Masses are the exact box probabilities, so the bounds are sound
like PV's; only the search and the bound quality differ. A literal "no bounds at all" reading
cannot certify any cell and would give the trivial [0, 1] forever.

Fidelity: approximate (a baseline of our own design; the paper names no such baseline).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.verification._bab import branch_and_bound
from methods.verification._bounds import ibp
from methods.verification._heuristics import all_branches, uniform_grid
from tasks.verification import VerificationProblem, VerificationResult

SMOKE = {"max_iterations": 8}


SWITCHED_OFF = ("a baseline (uniform input splitting with interval arithmetic, no heuristics, no CROWN): there is "
                "no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    max_iterations: int = 10_000    # grid refinements
    time_limit_s: float = 60.0      # time budget
    precision: float = 0.0          # > 0: refine until every probability is this tight
    batch_size: int = 1 << 22       # at most this many open cells refined per iteration (memory cap)

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.max_iterations < 0 or self.time_limit_s <= 0 or self.precision < 0:
            raise ValueError("batch_size must be >= 1, max_iterations >= 0, time_limit_s > 0, precision >= 0")


@method(family="verification", config=Config, smoke=SMOKE)
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    return branch_and_bound(problem, config, ctx, bound=ibp, select=all_branches, split=uniform_grid)
