"""Shared builder of the §3 bit-sequence case studies (mean prediction, length prediction)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasks.length_generalization import RegressionProblem


@dataclass(frozen=True)
class BitsConfig:
    train_min: int = 1                       # training lengths n ~ U{train_min..train_max} (paper: 1..10)
    train_max: int = 10
    eval_lengths: tuple[int, ...] = (5, 10, 20, 30, 40, 50)  # test lengths (paper: up to 50)
    eval_sequences: int = 256                # held-out sequences per evaluation length

    def __post_init__(self) -> None:
        if not 1 <= self.train_min <= self.train_max:
            raise ValueError(f"need 1 <= train_min <= train_max, got {self.train_min}, {self.train_max}")
        if self.train_max not in self.eval_lengths or any(L < 1 for L in self.eval_lengths):
            raise ValueError(f"eval_lengths {self.eval_lengths} must be >= 1 and include train_max={self.train_max}")
        if self.eval_sequences < 1:
            raise ValueError(f"eval_sequences must be >= 1, got {self.eval_sequences}")


def build_bits(config: BitsConfig, target: str, tolerance: float, rng: np.random.Generator) -> RegressionProblem:
    inputs, targets = {}, {}
    for length in sorted(set(config.eval_lengths)):
        bits = rng.integers(0, 2, size=(config.eval_sequences, length))  # equiprobable bits (paper §3)
        inputs[length] = bits
        targets[length] = np.full(config.eval_sequences, float(length)) if target == "length" else bits.mean(axis=1)
    return RegressionProblem(target=target, train_lengths=(config.train_min, config.train_max),
                             eval_inputs=inputs, eval_targets=targets, tolerance=tolerance)
