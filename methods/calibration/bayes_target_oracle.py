"""Bayes-target oracle: SFT on the facts' true answer distributions, the calibration world's positive control.

The paper's mechanism (Huang, Lu & Zeng, ICML 2025, arXiv 2508.00264; docs/papers/label-smoothing-calibration.md):
SFT on one deterministic answer per question makes a calibrated LM over-confident, and label smoothing softens the
targets so that less confidence is lost. The best any softening of the targets can do is to train on the answer
distribution itself. This method does that: the same SFT as sft_ce (a copy of the pre-trained model, AdamW, linear
warm-up and decay, the same batches drawn from the run's generator, the answer token's loss averaged over the batch)
with each SFT question's one-hot target replaced by its fact's true p_i over the four option letters,

    ℓ = lse(z) − Σ_k p_i[k]·z_{letter k}    (sft_ce: ℓ = lse(z) − z_{mode of p_i}),

read off the generator (each eval question's `eval_bayes` row is its fact's p_i; the fact is the prompt's first token).
If even this SFT does not end with a lower ECE than plain CE, the world's SFT, model or metric cannot show a calibration
gain and no "label smoothing lowers the ECE" can be measured in it: the label-smoothing claims are then inconclusive
(leaderboard/papers/label-smoothing-calibration.yaml, `controls:`).

`mode`: the null. The target is the one-hot mode of p_i, the instruction data's own answer: the oracle's information
(the spread of the true distribution) is removed and the objective is sft_ce's, so it must not beat sft_ce.

Fidelity: not a paper's method (a control of our world); needs the synthetic world's answer distributions of the SFT
facts (skipped when an SFT fact has no evaluation question to read its p_i from).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import method
from methods.calibration._sft import SFTSettings, fine_tune, validate
from tasks.calibration import CalibrationProblem, CalibrationResult

SMOKE = {"epochs": 1}

SWITCHED_OFF = "an oracle (trained on the true answer distributions), the world's positive control: nothing to remove"


@dataclass(frozen=True)
class Config:
    lr: float = 1e-3             # sft_ce's settings, so that the targets are the one difference
    epochs: int = 8
    batch_size: int = 64
    warmup_ratio: float = 0.03
    mode: bool = False           # the null: one-hot targets at the mode of p_i (sft_ce's objective)

    def __post_init__(self) -> None:
        validate(0.0, self.lr, self.epochs, self.batch_size, self.warmup_ratio, 1.0)


def _fact_distributions(problem: CalibrationProblem) -> dict[int, np.ndarray]:
    """Fact (entity token id) -> its true answer distribution over the letters, from the evaluation questions."""
    return {int(e): p for e, p in zip(problem.eval_input_ids[:, 0].tolist(), problem.eval_bayes)}


def skip(problem, config: Config) -> str | None:
    if not isinstance(problem, CalibrationProblem):
        return f"bayes_target_oracle takes CalibrationProblem, not {type(problem).__name__}"
    missing = set(problem.sft_input_ids[:, 0].tolist()) - set(_fact_distributions(problem))
    if missing:
        return f"bayes_target_oracle needs each SFT fact's p_i: {len(missing)} SFT fact(s) have no evaluation question"
    return None


def soft_targets(problem: CalibrationProblem, mode: bool = False) -> torch.Tensor:
    """(n_sft, 4) the target over the option letters of each SFT sequence: its fact's p_i (or its one-hot mode)."""
    dist = _fact_distributions(problem)
    p = np.stack([dist[int(e)] for e in problem.sft_input_ids[:, 0].tolist()])
    if mode:
        p = np.eye(p.shape[1])[p.argmax(axis=1)]
    return torch.as_tensor(p, dtype=torch.float32)


def soft_target_loss(model, input_ids: torch.Tensor, targets: torch.Tensor, letters: list[int]) -> torch.Tensor:
    """Mean over the batch of lse(z) − Σ_k q_k z_{letter k}, z the next-token logits before the answer token."""
    logits = model(input_ids=input_ids).logits[:, -2].float()        # (B, V): the position predicting the answer
    log_p = torch.log_softmax(logits, dim=-1)[:, letters]             # (B, 4)
    return -(targets * log_p).sum(-1).mean()


@method(family="calibration", config=Config, skip=skip, smoke=SMOKE,
        reference="trains on the generator's true answer distributions: the world's positive control")
def solve(problem: CalibrationProblem, config: Config, ctx: RunContext) -> CalibrationResult:
    ids = problem.sft_input_ids.to(ctx.device)
    targets = soft_targets(problem, config.mode).to(ctx.device)
    letters = list(problem.letter_ids)
    settings = SFTSettings(beta=0.0, lr=config.lr, epochs=config.epochs, batch_size=config.batch_size,
                           warmup_ratio=config.warmup_ratio, temperature=1.0)  # sft_ce's loop and schedule
    return fine_tune(problem, settings, ctx,
                     lambda model, batch: soft_target_loss(model, ids[batch], targets[batch], letters))
