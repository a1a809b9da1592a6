"""Unconstrained policy optimisation: the FS-PODB primal learner with λ ≡ 0 (baseline).

Paper: baseline for Stradi et al., ICML 2025, arXiv 2410.02269 ("Unconstrained PO (same
primal, λ ≡ 0): shows linear violation"). It maximises reward only, so on an instance whose
constraint binds it attains regret ≤ 0 against the constrained OPT and violation linear in T.
Fidelity: reconstructed, exactly the primal of `bobw_po` (same Config and defaults) without the
dual update; see bobw_po's docstring for the primal's deviations.
"""

from __future__ import annotations

from bench.context import RunContext
from bench.registry import method
from methods.cmdp._fs_podb import Config, run_primal_dual_po
from tasks.cmdp import CMDPProblem, CMDPResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE: dict = {}

__all__ = ["Config", "solve"]


SWITCHED_OFF = "a baseline of the paper (bobw_po's primal with λ ≡ 0): there is no mechanism of the paper to switch off"


@method(family="cmdp", config=Config, smoke=SMOKE)
def solve(problem: CMDPProblem, config: Config, ctx: RunContext) -> CMDPResult:
    return run_primal_dual_po(problem, config, ctx, constrained=False)
