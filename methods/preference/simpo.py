"""SimPO: reference-free preference optimisation with a length-normalised reward and a target margin.

Meng, Xia & Chen, "SimPO: Simple Preference Optimization with a Reference-Free Reward", NeurIPS 2024,
arXiv 2405.14734, Eq. 6:

    L_SimPO(θ) = −E log σ((β/|y_w|) log πθ(y_w|x) − (β/|y_l|) log πθ(y_l|x) − γ),

the M = 1, λ = 0 case of LOGO (its objective; SimPO is a LOGO baseline), with γ = β · gamma_beta_ratio as in
the SimPO / LOGO code.

Fidelity: faithful to the objective. Defaults β = 2.5, γ/β = 0.1 (SimPO's Mistral-Instruct setting, which
LOGO adopts for Mistral-7B-Instruct-v0.2); trained on best vs worst off-policy answer; CPU-scale lr.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from methods.preference._common import TrainingSettings, validate_common
from methods.preference._reference_free import solve_reference_free
from tasks.preference import PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 8}

SWITCHED_OFF = "a baseline of LOGO (SimPO: one rejected answer, no SFT term): no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config(TrainingSettings):
    beta: float = 2.5               # β (SimPO / LOGO, Mistral-Instruct)
    gamma_beta_ratio: float = 0.1   # γ/β, so γ = 0.25

    def __post_init__(self) -> None:
        if not self.beta > 0 or self.gamma_beta_ratio < 0:
            raise ValueError(f"need beta > 0 and gamma_beta_ratio >= 0, got {self.beta}, {self.gamma_beta_ratio}")
        validate_common(self)


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0),
        accepts=PreferenceProblem, smoke=SMOKE)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    return solve_reference_free(problem, config, m=1, sft_weight=0.0, ctx=ctx)
