"""SimpleMix: DPO on an equal mixture of on-policy and off-policy preference pairs.

Li & Khashabi, "SIMPLEMIX: Frustratingly Simple Mixing of Off- and On-policy Data in Language Model
Preference Learning", ICML 2025, arXiv 2505.02363:

    L(θ) = −E_{x, (y_w, y_l) ~ α·D_on(x) + (1−α)·D_off(x)}
               log σ(β[log πθ(y_w|x)/π_SFT(y_w|x) − log πθ(y_l|x)/π_SFT(y_l|x)])

with α = ½. D_on: pairs sampled from π_SFT itself (n = 4, T = 0.7, top-p 0.9, best vs worst by the reward
model), D_off: pairs written by other models. Nothing else changes: no reweighting, no extra KL term.

Fidelity: reconstructed. The paper's text was not available; the recipe is the first author's OpenRLHF fork
(docs/papers/simplemix.md). Deviations: the mixture is an exact shuffled split of the prompts (round(α·n) on-policy)
rather than a probabilistic interleave; one pair per prompt; β = 0.5 (one of the fork's values, the
paper's is unknown); the learning rate is the paper's 5e-7 for a given π_SFT (task.model) and 1e-3 for the tiny one.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from methods.preference._common import TrainingSettings, validate_common, validate_sampling
from methods.preference._dpo import solve_mix
from tasks.preference import PreferenceProblem, PreferenceResult

SMOKE = {"n_samples": 2, "batch_size": 8}

# SimpleMix's mechanism is the mixture α·D_on + (1−α)·D_off: at α = 0 or 1 one source is left, and solve_mix (_dpo.py)
# then runs exactly what `dpo` runs with that source (tests/methods/preference/test_methods.py,
# test_mixing_share_and_its_endpoints).
SWITCHED_OFF = {"α = 0 (off-policy pairs only)": ("dpo", {"source": "off"}),
                "α = 1 (on-policy pairs only)": ("dpo", {"source": "on"})}


@dataclass(frozen=True)
class Config(TrainingSettings):
    alpha: float = 0.5          # α, share of on-policy pairs (paper: ½; the fork's off-policy share p = 1 − α)
    beta: float = 0.5           # β of DPO (the fork uses 0.1, 0.5, 0.001; the paper's value is unknown)
    n_samples: int = 4          # n, on-policy samples per prompt (fork: 4)
    temperature: float = 0.7    # T of on-policy sampling (fork: 0.7)
    top_p: float = 0.9          # top-p of on-policy sampling (fork: 0.9)

    def __post_init__(self) -> None:
        if not 0 <= self.alpha <= 1 or not self.beta > 0:
            raise ValueError(f"need 0 <= alpha <= 1 and beta > 0, got alpha={self.alpha}, beta={self.beta}")
        validate_common(self)
        validate_sampling(self)


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0),
        accepts=PreferenceProblem, smoke=SMOKE)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    return solve_mix(problem, config, config.alpha, ctx)
