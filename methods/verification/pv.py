"""PV: probabilistic verification by branch and bound over the input space (Boetius et al., ICML 2025).

Paper: "Solving Probabilistic Verification Problems of Neural Networks using Branch and Bound",
arXiv 2405.17556; reference code sen-uni-kn/probspecs (ProbabilityBounds, Verifier). Every
probability P(φ | ψ) of the formula is bounded by branch and bound over input boxes: prob-mass
branch selection, smart-branching splits scored with IBP (better_branch=True), CROWN bounds on
every new branch, exact box masses from the population model, anytime lb / ub (logged as curves
`lower` / `upper` of the target). After every iteration the formula is evaluated with interval
arithmetic and three-valued logic; PV stops as soon as it is decided (or, with precision > 0,
when every probability is that tight), or when the budget is spent (verdict None).

Fidelity: faithful to our reading of the code (docs/papers/prob-verification.md). Deviations: one
process (the paper runs one worker per probability); CROWN and IBP are our own implementations
(methods/verification/_bounds.py), CROWN intersected with IBP layer by layer; the time budget is the
Config's (the paper: 900 s for FairSquare, 3600 s for MiniACSIncome); no config schedulers (warm start,
switch to guarantees).
"""

from __future__ import annotations

from functools import partial

from bench.context import RunContext
from bench.registry import method
from methods.verification._bab import Config, branch_and_bound
from methods.verification._bounds import BOUNDS, crown
from methods.verification._heuristics import prob_mass, smart_branching
from tasks.verification import VerificationProblem, VerificationResult

SMOKE = {"max_iterations": 5, "batch_size": 32}


# The branching heuristics off: prob-mass branch selection and smart-branching splits replaced by random selection
# and longest-edge splits, everything else (CROWN bounds, exact masses, the Config) kept: pv_random, bit for bit
# (branch_and_bound's select / split arguments; tests/methods/verification/test_switched_off.py)
SWITCHED_OFF = {"random heuristics (pv_random)": ("pv_random", {})}


@method(family="verification", config=Config, smoke=SMOKE)
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    split = partial(smart_branching, bound=BOUNDS[config.split_bounds])
    return branch_and_bound(problem, config, ctx, bound=crown, select=prob_mass, split=split)
