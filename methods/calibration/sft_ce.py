"""Plain SFT with cross-entropy (β = 0): the baseline whose calibration degrades after tuning.

Huang, Lu & Zeng, ICML 2025, arXiv 2508.00264 (abstract, Figure 1; the authors' recipe): open-instruct
full fine-tuning with the standard next-token cross-entropy ℓ = lse(z) − z_y on the answer tokens
(prompts masked), the same schedule as sft_label_smoothing so the two differ only in β.

Fidelity: reconstructed (the same down-scaling as sft_label_smoothing: tiny Llama, synthetic SFT set,
lr 1e-3, batch 64, 8 epochs, mean over answer tokens by default; loss_reduction="sum" is the repository's).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.calibration._sft import SFTSettings, fine_tune, validate
from tasks.calibration import CalibrationProblem, CalibrationResult

SMOKE = {"epochs": 1}

SWITCHED_OFF = "a baseline of the paper (plain cross-entropy SFT): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    lr: float = 1e-3             # learning rate (paper 5e-6 for 1B–8B; tiny models need more)
    epochs: int = 8              # passes over the SFT set (paper: 2)
    batch_size: int = 64         # sequences per step (paper: 128)
    warmup_ratio: float = 0.03   # linear warm-up share (paper: 0.03)
    loss_reduction: str = "mean"  # over the batch's answer tokens; the authors' sweeps: "sum" (same lr, _sft.py)

    def __post_init__(self) -> None:
        validate(0.0, self.lr, self.epochs, self.batch_size, self.warmup_ratio, 1.0, self.loss_reduction)


@method(family="calibration", config=Config, smoke=SMOKE)
def solve(problem: CalibrationProblem, config: Config, ctx: RunContext) -> CalibrationResult:
    return fine_tune(problem, SFTSettings(0.0, config.lr, config.epochs, config.batch_size, config.warmup_ratio, 1.0,
                                          config.loss_reduction), ctx)
