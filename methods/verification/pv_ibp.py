"""PV with IBP instead of CROWN for the branches' network bounds (Boetius et al., ICML 2025; probspecs config `ibp`).

Paper: arXiv 2405.17556; the `experiments/config/ibp.yaml` variant: prob-mass selection,
smart-branching splits (scored with IBP), and interval bound propagation for every new branch.
Cheaper per branch, looser per branch.

Fidelity: faithful (same deviations as pv).
"""

from __future__ import annotations

from functools import partial

from bench.context import RunContext
from bench.registry import method
from methods.verification._bab import Config, branch_and_bound
from methods.verification._bounds import BOUNDS, ibp
from methods.verification._heuristics import prob_mass, smart_branching
from tasks.verification import VerificationProblem, VerificationResult

SMOKE = {"max_iterations": 5, "batch_size": 32}


SWITCHED_OFF = ("a configuration of PV (IBP bounds, probspecs' `ibp`) credited by no claim: its heuristics would "
                "switch off to random selection with IBP bounds, which no registered method runs (pv's switch is "
                "pv_random)")


@method(family="verification", config=Config, smoke=SMOKE)
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    split = partial(smart_branching, bound=BOUNDS[config.split_bounds])
    return branch_and_bound(problem, config, ctx, bound=ibp, select=prob_mass, split=split)
