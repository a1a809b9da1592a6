"""LOGO: reference-free preference optimisation with M dis-preferred answers plus an SFT term.

Tang, Sun, Li, Zhu & Zhang, "LOGO — Long cOntext aliGnment via efficient preference Optimization",
ICML 2025, arXiv 2410.18533, its objective (docs/papers/logo.md; code ZetangForward/LCM_Stack):

    L_LOGO(θ) = −E log σ((β/|y_w|) log πθ(y_w|x) − (1/M) Σ_{j=1..M} (β/|y_l^(j)|) log πθ(y_l^(j)|x) − γ)
    L*(θ)     = L_LOGO(θ) + λ·E[−(1/|y_w|) log πθ(y_w|x)]

with M = 2, β = 10, γ = 3 (γ/β = 0.3), λ = 0.1 (the Llama-3-8B setting). M = 1, λ = 0 is SimPO. On a task with a
position window (long_context_alignment) the short training inputs get LOGO's synthesised position indices
(§2.3: chunks spread over the target window, continuous : sparse = 9 : 1), the answer's positions after them.

Fidelity: faithful to the objective (each rejected answer normalised by its own length, as the code does;
the SFT term is the usual shifted next-token NLL over the answer, where the released code passes unshifted
logits). Deviations: on preference_world the M rejected answers are the M lowest-ranked off-policy answers
(the paper's come from irrelevant / partially relevant context chunks); long_context_alignment's are distractor
values of the context; synthesis chunks of 6 tokens (the paper: 512); no LoRA; CPU-scale lr.

`negative_weighting`: "paper" (the default) weighs the M rejected answers 1/M each inside one sigmoid, as above;
"released" is the authors' trainer as it runs (training/logo_train.py l.247 slices `all_logps[len_chosen:]`, meant
`[len_chosen*2:]`; at its batch size 1 the loss is ½ℓ(c − r1) + ½ℓ(c − (r1 + r2)/2), ℓ(x) = −log σ(β·x − γ), so
the first rejected answer weighs about ¾; _losses.logo_loss), for M ≤ 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from methods.preference._common import TrainingSettings, validate_common
from methods.preference._losses import NEGATIVE_WEIGHTINGS
from methods.preference._reference_free import solve_reference_free
from tasks.preference import PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 8}

# LOGO's mechanisms: the objective of §2.1 (M dis-preferred answers + λ·SFT; M = 1, λ = 0 is SimPO's Eq. 6, the
# claims' own ablation) and the position synthesis of §2.3 (synthesize_positions false: real positions).
SWITCHED_OFF = {"M = 1, λ = 0 (SimPO's objective)": {"m": 1, "sft_weight": 0.0},
                "no position synthesis": {"synthesize_positions": False}}


@dataclass(frozen=True)
class Config(TrainingSettings):
    m: int = 2                      # M, dis-preferred answers per sample
    beta: float = 10.0              # β (Llama-3-8B)
    gamma_beta_ratio: float = 0.3   # γ/β, so γ = 3
    sft_weight: float = 0.1         # λ, weight of the SFT term
    synthesize_positions: bool = True  # LOGO §2.3 position synthesis when the task sets a window (9 : 1 mix)
    negative_weighting: str = "paper"  # (1/M)Σ_j inside one sigmoid (§2.1); "released": the authors' trainer, ~¾ on r1

    def __post_init__(self) -> None:
        if self.m < 1 or not self.beta > 0 or self.gamma_beta_ratio < 0 or self.sft_weight < 0:
            raise ValueError(f"need m >= 1, beta > 0, gamma_beta_ratio >= 0, sft_weight >= 0; got "
                             f"{self.m}, {self.beta}, {self.gamma_beta_ratio}, {self.sft_weight}")
        if self.negative_weighting not in NEGATIVE_WEIGHTINGS or (self.negative_weighting == "released" and self.m > 2):
            raise ValueError(f"negative_weighting must be one of {NEGATIVE_WEIGHTINGS} ('released' needs m <= 2, the "
                             f"authors' trainer has two rejected answers); got {self.negative_weighting!r}, m {self.m}")
        validate_common(self)


def skip(problem, config: Config) -> str | None:
    if len(problem.off_policy[0]) - 1 < config.m:
        return f"logo needs {config.m} dis-preferred answers per prompt, the task has {len(problem.off_policy[0]) - 1}"
    return None


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0), skip=skip,
        accepts=PreferenceProblem, smoke=SMOKE)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    return solve_reference_free(problem, config, m=config.m, sft_weight=config.sft_weight, ctx=ctx,
                                synthesize=config.synthesize_positions, negatives=config.negative_weighting)
