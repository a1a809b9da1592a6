"""SFT with label smoothing: the paper's remedy for the calibration lost to instruction tuning.

Huang, Lu & Zeng, "Calibrated Language Models and How to Find Them with Label Smoothing", ICML 2025,
arXiv 2508.00264 (the loss and SFT recipe of the authors' code). Per answer token

    ℓ = lse(z) − (1 − β)·z_y − (β/V)·Σ_v z_v,   soft target (1 − β)·onehot(y) + (β/V)·1

with β = 0.1 (the working value), computed by the memory-efficient kernel (methods/calibration/_label_smoothed_ce)
from hidden states and the LM head, never materialising the logits. Full fine-tuning with AdamW, linear
warm-up (ratio 0.03) and decay, 2 epochs (the repository's open-instruct configs).

Fidelity: reconstructed. The loss and kernel follow the authors' code; the training is down-scaled: a
tiny Llama on a synthetic SFT set instead of Tulu-3/Alpaca/OpenHermes on 1B–14B models, learning rate
1e-3 (paper 5e-6 … 8e-5, tuned to full-size models), batch 64 (paper 128), mean over answer tokens by
default (the repository sums: loss_reduction="sum" at the same learning rate, _sft.py), more epochs (8) so a tiny
model moves as far as a full SFT run does.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.calibration._sft import SFTSettings, fine_tune, validate
from tasks.calibration import CalibrationProblem, CalibrationResult

SMOKE = {"epochs": 1}

# The paper's mechanism is the smoothed target (1 − β)·onehot(y) + (β/V)·1: at β = 0 the loss is lse(z) − z_y, plain
# cross-entropy, and fine_tune (_sft.py) runs exactly what sft_ce runs (tests/methods/calibration/test_sft.py,
# test_label_smoothing_at_beta_zero_is_sft_ce_bit_for_bit; at the default temperature 1, which sft_ce fixes).
SWITCHED_OFF = {"β = 0 (plain cross-entropy)": ("sft_ce", {})}


@dataclass(frozen=True)
class Config:
    beta: float = 0.1            # β, label smoothing (paper: 0.1; sweeps 0.0, 0.1, 0.2)
    lr: float = 1e-3             # learning rate (paper 5e-6 for 1B–8B; tiny models need more)
    epochs: int = 8              # passes over the SFT set (paper: 2)
    batch_size: int = 64         # sequences per step (paper: 128)
    warmup_ratio: float = 0.03   # linear warm-up share (paper: 0.03)
    temperature: float = 1.0     # τ, logit temperature during SFT (paper's remedy for LV-LLMs; 1 = off)
    loss_reduction: str = "mean"  # over the batch's answer tokens; the authors' sweeps: "sum" (same lr, _sft.py)

    def __post_init__(self) -> None:
        validate(self.beta, self.lr, self.epochs, self.batch_size, self.warmup_ratio, self.temperature,
                 self.loss_reduction)


@method(family="calibration", config=Config, smoke=SMOKE)
def solve(problem: CalibrationProblem, config: Config, ctx: RunContext) -> CalibrationResult:
    return fine_tune(problem, SFTSettings(config.beta, config.lr, config.epochs, config.batch_size,
                                          config.warmup_ratio, config.temperature, config.loss_reduction), ctx)
