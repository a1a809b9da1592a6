"""The training shared by plain, long_short_alignment and output_reparam: their settings and the two loops.

`solve_lm` trains a causal LM on the LM tasks (plain: α = 0; long_short_alignment: α > 0 adds the misalignment
term of methods/length_generalization/_lm.py); `solve_regression` trains the NoPE regressor of the synthetic case
studies on f(target) (plain: f = identity; output_reparam: f(n) = 1/√n). One `Config`, with plain's defaults (see
plain's docstring for the paper's settings and our deviations), serves plain and output_reparam. A tiny LM is
trained once per training input and kept in the run context's cache (`trained_once`): runs that differ only in how
the task evaluates it load the same model.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bench.context import RunContext
from bench.toolkit import models
from bench.toolkit import training as training_loop
from bench.toolkit.cache import cached_dir, source_digest
from methods.length_generalization import _lm, _regression
from tasks import length_generalization as family
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
    seed = seed_of(ctx)

    def train():
        model = _lm.build_model(config.model, problem, config.rope_theta, seed, ctx.device)
        return _lm.train(problem, model, steps=config.steps, batch_size=config.batch_size, lr=config.lr,
                         alpha=alpha, extra_fraction=extra_fraction, last_only=last_only,
                         checkpoints=config.checkpoints, ctx=ctx, divergence=divergence)

    if config.model in _lm.SHAPES:
        training = {"model": config.model, "rope_theta": config.rope_theta, "steps": config.steps,
                    "batch_size": config.batch_size, "lr": config.lr, "checkpoints": config.checkpoints,
                    "alpha": alpha, "extra_fraction": extra_fraction, "last_only": last_only,
                    "divergence": divergence, "init_seed": seed}
        model, snapshots = trained_once(problem, training, ctx, train)
    else:  # a hub or local model: never copied into the cache
        model, snapshots = train()
    vocab = problem.vocab_size
    return LMResult(log_probs=_lm.predictor(model, vocab, ctx.device),
                    checkpoints=tuple((step, _lm.predictor(m, vocab, ctx.device)) for step, m in snapshots))


def solve_regression(problem: RegressionProblem, config, forward, inverse, ctx: RunContext) -> RegressionResult:
    """Shared by plain (f = identity) and output_reparam (f(n) = 1/√n)."""
    model = _regression.build_regressor(config.width, 2, 4, seed_of(ctx), ctx.device)
    _regression.train_regressor(problem, model, steps=config.steps, batch_size=config.batch_size, lr=config.lr,
                                forward=forward, ctx=ctx)
    return RegressionResult(predictions=_regression.predict(problem, model, inverse, ctx.device))


def trained_once(problem: LMProblem, training: dict, ctx: RunContext, train):
    """`train()`'s (model, [(step, snapshot)]) for a tiny shape, trained once per training input and kept in the
    cache (`ctx.cache_dir("length_generalization")`), with the curves it logged, which are logged again here.

    The training reads the task only through its corpus law (transitions, switch, l_train): settings that change
    the evaluation alone (`eval_lengths`, `eval_sequences`) give the same model, and the tracking claim's control
    evaluates the same 18 models at l_train + 1 (leaderboard/papers/long-short-alignment.yaml). Loaded weights are
    the trained ones bit for bit; the key holds the training code's source and this process's float numerics too
    (bench.toolkit.cache)."""
    import transformers  # its version is part of the key (a tiny Llama of another release may initialise otherwise)

    corpus = hashlib.sha256(np.ascontiguousarray(problem.transitions).tobytes()).hexdigest()
    # the draws the training will make: the run's generator as it stands (the solve draws nothing after training)
    settings = {"artefact": "topic-lm-training", **training, "rng": ctx.rng.bit_generator.state,
                "device": ctx.device, "corpus": corpus, "switch": problem.switch,
                "train_length": problem.train_length, "torch": torch.__version__.split("+")[0],
                "transformers": transformers.__version__,
                # the code that trains: a change to the loop, the model builder or the corpus sampler retrains
                "code": source_digest(sys.modules[__name__], _lm, training_loop, models, family)}

    def save(directory: Path) -> None:
        logged = {name: list(points) for name, points in ctx.curves.items()}
        model, snapshots = train()
        torch.save({"model": model.state_dict(), "snapshots": [(step, m.state_dict()) for step, m in snapshots],
                    "curves": {name: points[len(logged.get(name, [])):] for name, points in ctx.curves.items()}},
                   directory / "training.pt")
        ctx.curves.clear()
        ctx.curves.update(logged)  # logged again below, from the file, as on every later load

    directory = cached_dir(ctx.cache_dir("length_generalization"), settings, save, prefix="lm-")
    saved = torch.load(directory / "training.pt", weights_only=True)

    def loaded(state):
        model = _lm.build_model(training["model"], problem, training["rope_theta"], training["init_seed"], ctx.device)
        model.load_state_dict(state)
        return model

    model = loaded(saved["model"])
    # the last snapshot is the trained model itself, as _lm.train returns it
    snapshots = [(step, model if step == training["steps"] else loaded(state)) for step, state in saved["snapshots"]]
    for name, points in saved["curves"].items():
        for step, value in points:
            ctx.log(step, **{name: value})
    ctx.progress(1.0)
    return model, snapshots
