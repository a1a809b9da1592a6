"""PV with random branch selection and random-tie longest-edge splits: the heuristic comparison's weak end (probspecs
config `random`).

Paper: arXiv 2405.17556, the heuristic comparison (prob-mass / prob-and-log-bounds against random
heuristics). Branches to split are drawn uniformly at random among the open ones; the split
dimension is the longest edge; bounds are CROWN.

Fidelity: approximate: probspecs' `random` split heuristic picks the dimension at random as well;
here only the branch selection is random.
"""

from __future__ import annotations

from bench.context import RunContext
from bench.registry import method
from methods.verification._bab import Config, branch_and_bound
from methods.verification._bounds import crown
from methods.verification._heuristics import longest_edge, random_branches
from tasks.verification import VerificationProblem, VerificationResult

SMOKE = {"max_iterations": 5, "batch_size": 32}


SWITCHED_OFF = ("the paper's weak end of the heuristic comparison (random branch selection, longest-edge splits): "
                "the heuristics it would switch off are already off")


@method(family="verification", config=Config, smoke=SMOKE)
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    return branch_and_bound(problem, config, ctx, bound=crown, select=random_branches, split=longest_edge)
