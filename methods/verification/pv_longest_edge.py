"""PV with the heuristics that carry its completeness guarantee: prob-mass + longest-edge (Boetius et al., ICML 2025).

Paper: arXiv 2405.17556, the completeness theorem ("under mildly restrictive conditions" with "a
suitable set of heuristics"); in probspecs this is the combination SwitchToHeuristicsWithGuarantees
switches to: prob-mass branch selection with longest-edge splitting (unnormalised widths; an
unbounded side has infinite width and is split first). Bounds: CROWN, as in pv. Used for the
heuristic comparison and for the ub − lb → 0 check.

Fidelity: faithful (same deviations as pv); the scheduler's warm phase is not run: longest-edge
from the first iteration.
"""

from __future__ import annotations

from bench.context import RunContext
from bench.registry import method
from methods.verification._bab import Config, branch_and_bound
from methods.verification._bounds import crown
from methods.verification._heuristics import longest_edge, prob_mass
from tasks.verification import VerificationProblem, VerificationResult

SMOKE = {"max_iterations": 5, "batch_size": 32}


# The prob-mass branch selection off: random selection with the same longest-edge splits and CROWN bounds is pv_random,
# bit for bit (branch_and_bound's select argument; tests/methods/verification/test_switched_off.py)
SWITCHED_OFF = {"random branch selection (pv_random)": ("pv_random", {})}


@method(family="verification", config=Config, smoke=SMOKE)
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    return branch_and_bound(problem, config, ctx, bound=crown, select=prob_mass, split=longest_edge)
