"""The training shared by plain, long_short_alignment and output_reparam: their settings and the two loops.

`solve_lm` trains a causal LM on the LM tasks (plain: α = 0; long_short_alignment: α > 0 adds the misalignment
term of methods/length_generalization/_lm.py); `solve_regression` trains the NoPE regressor of the synthetic case
studies on f(target) (plain: f = identity; output_reparam: f(n) = 1/√n). One `Config`, with plain's defaults (see
plain's docstring for the paper's settings and our deviations), serves plain and output_reparam.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from methods.length_generalization import _lm, _regression
from tasks.length_generalization import LMProblem, LMResult, RegressionProblem, RegressionResult


@dataclass(frozen=True)
class Config:
    steps: int = 600                # optimiser steps (paper: 200 steps of continued training at 4K/8K tokens)
    batch_size: int = 32            # documents (or bit sequences) per step
    lr: float = 3e-3                # Adam learning rate, cosine-decayed to 10% (LM) / 5% (regression)
    model: str = "tiny-llama-lm"    # LM: a tiny RoPE shape, a local directory or a hub id (paper: Llama-2-7B)
    rope_theta: float = 10000.0     # RoPE base of the tiny shapes (Llama-2: 10^4)
    checkpoints: int = 6            # LM: model copies along training returned for the correlations (0: none)
    width: int = 64                 # regression: d of the NoPE transformer (CPU plan: d = 64, 4 heads, 2 layers)

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or not self.lr > 0 or self.checkpoints < 0:
            raise ValueError(f"need steps >= 1, batch_size >= 1, lr > 0, checkpoints >= 0; got {self.steps}, "
                             f"{self.batch_size}, {self.lr}, {self.checkpoints}")
        if not self.rope_theta > 0 or self.width < 4 or self.width % 4:
            raise ValueError(f"rope_theta must be > 0 and width a multiple of 4 (>= 4); got {self.rope_theta}, "
                             f"{self.width}")


def seed_of(ctx: RunContext) -> int:
    """An initialisation seed drawn from the run's torch generator."""
    return int(torch.randint(0, 2**31 - 1, (1,), generator=ctx.torch_generator))


def solve_lm(problem: LMProblem, config, alpha: float, extra_fraction: float, last_only: bool,
             ctx: RunContext, divergence: str = "symmetric_kl") -> LMResult:
    """Shared by plain (α = 0) and long_short_alignment."""
    model = _lm.build_model(config.model, problem, config.rope_theta, seed_of(ctx), ctx.device)
    model, snapshots = _lm.train(problem, model, steps=config.steps, batch_size=config.batch_size, lr=config.lr,
                                 alpha=alpha, extra_fraction=extra_fraction, last_only=last_only,
                                 checkpoints=config.checkpoints, ctx=ctx, divergence=divergence)
    vocab = problem.vocab_size
    return LMResult(log_probs=_lm.predictor(model, vocab, ctx.device),
                    checkpoints=tuple((step, _lm.predictor(m, vocab, ctx.device)) for step, m in snapshots))


def solve_regression(problem: RegressionProblem, config, forward, inverse, ctx: RunContext) -> RegressionResult:
    """Shared by plain (f = identity) and output_reparam (f(n) = 1/√n)."""
    model = _regression.build_regressor(config.width, 2, 4, seed_of(ctx), ctx.device)
    _regression.train_regressor(problem, model, steps=config.steps, batch_size=config.batch_size, lr=config.lr,
                                forward=forward, ctx=ctx)
    return RegressionResult(predictions=_regression.predict(problem, model, inverse, ctx.device))
