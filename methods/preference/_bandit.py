"""The bandit world's policies and their trainer, shared by the methods that run on preference_bandit (dpo, ipo, epa).

Policies: a free logit table (P × V, the default) or a prompt embedding → MLP → logits model, whose
log-probabilities are log π_ref(·|x) + head(MLP(e_x)) with a zero-initialised head, so that both start at
π_ref unless `init_noise` > 0 perturbs the table (the "second init" of the non-uniqueness check).

The pair objectives (`bandit_objective`) are DPO's and IPO's on the pairs of `pairs`: each list's UF-binarized
pair (best vs a random other member), best vs each other member of the UF-all list, or best vs worst. The world
itself (rewards, π_ref, lists) is the task's: tasks/preference/_bandit.py.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from bench.context import log_spaced_steps
from bench.toolkit.causal_lm import train
from methods.preference._losses import dpo_loss
from tasks.preference import BanditPreferenceProblem, BanditPreferenceResult

TRACE_POINTS = 40  # log-spaced training steps at which a method keeps its policy (KL–reward trace)
PAIRS = ("binarized", "best_vs_each", "best_vs_worst")


class BanditPolicy(nn.Module):
    """log πθ(·|x) for every prompt at once: forward() -> (P, V)."""

    def __init__(self, ref_logp: np.ndarray, kind: str = "table", hidden: int = 64, init_noise: float = 0.0,
                 generator: torch.Generator | None = None):
        super().__init__()
        self.kind = kind
        ref = torch.as_tensor(ref_logp, dtype=torch.float64)
        self.register_buffer("ref", ref)
        if kind == "table":
            noise = torch.randn(ref.shape, generator=generator, dtype=torch.float64)
            self.logits = nn.Parameter(ref + init_noise * noise)
        elif kind == "mlp":
            prompts, responses = ref.shape
            self.embedding = nn.Parameter(torch.randn(prompts, hidden, generator=generator, dtype=torch.float64))
            self.body = nn.Linear(hidden, hidden, dtype=torch.float64)
            with torch.no_grad():
                bound = hidden ** -0.5
                self.body.weight.copy_(torch.empty_like(self.body.weight).uniform_(-bound, bound, generator=generator))
                self.body.bias.zero_()
            self.head = nn.Linear(hidden, responses, dtype=torch.float64)
            nn.init.zeros_(self.head.weight)   # πθ starts at π_ref
            nn.init.zeros_(self.head.bias)
        else:
            raise ValueError(f"bandit policy {kind!r} unknown (allowed: table, mlp)")

    def forward(self) -> torch.Tensor:
        if self.kind == "table":
            return F.log_softmax(self.logits, dim=-1)
        return F.log_softmax(self.ref + self.head(torch.tanh(self.body(self.embedding))), dim=-1)


def fit(policy: BanditPolicy, objective: Callable[[list[int]], torch.Tensor], n_examples: int, *, steps: int, lr: float,
        batch_size: int, generator: torch.Generator,
        on_step: Callable[[int, float], None] | None = None) -> list[float]:
    """Adam (no weight decay, no clipping, no warm-up, linear decay to 0) on objective(indices);
    batch 0 = full batch."""
    batch = n_examples if batch_size <= 0 else min(batch_size, n_examples)
    return train(policy, objective, n_examples, steps=steps, lr=lr, batch_size=batch, warmup_ratio=0.0,
                 generator=generator, max_grad_norm=None, on_step=on_step)


def solve_bandit(problem, config, make_objective: Callable[[BanditPolicy], Callable], ctx):
    """Train a policy of `config.bandit_policy` from π_ref (+ init noise) on make_objective(policy)(list indices).

    Reads the config's bandit fields (bandit_policy, bandit_init_noise, bandit_steps, bandit_lr, bandit_batch)
    and beta; the final loss is the objective on all the lists once training ends. The policy's table is kept
    at TRACE_POINTS log-spaced steps (the KL–reward trace of the frontier)."""
    policy = BanditPolicy(problem.ref_logp, config.bandit_policy, init_noise=config.bandit_init_noise,
                          generator=ctx.torch_generator)
    objective = make_objective(policy)
    n = len(problem.lists)
    keep = set((log_spaced_steps(config.bandit_steps, TRACE_POINTS) - 1).tolist())
    with torch.no_grad():
        trace = [(0, policy().numpy())]

    def on_step(step: int, value: float) -> None:
        ctx.log(step, loss=value)
        ctx.check_deadline()
        if step in keep:
            with torch.no_grad():
                trace.append((step + 1, policy().numpy()))

    fit(policy, objective, n, steps=config.bandit_steps, lr=config.bandit_lr, batch_size=config.bandit_batch,
        generator=ctx.torch_generator, on_step=on_step)
    with torch.no_grad():
        final = float(objective(list(range(n))))
        log_policy = policy().numpy()
    return BanditPreferenceResult(log_policy=log_policy, beta=config.beta, train_loss=final, trace=tuple(trace))


def validate_bandit(config) -> None:
    """The checks of the bandit fields every bandit-capable method's Config shares."""
    if config.bandit_policy not in ("table", "mlp") or config.bandit_steps < 1 or not config.bandit_lr > 0:
        raise ValueError(f"need bandit_policy in (table, mlp), bandit_steps >= 1, bandit_lr > 0; got "
                         f"{config.bandit_policy!r}, {config.bandit_steps}, {config.bandit_lr}")
    if config.bandit_batch < 0 or config.bandit_init_noise < 0:
        raise ValueError(f"need bandit_batch >= 0 (0: full batch) and bandit_init_noise >= 0; got "
                         f"{config.bandit_batch}, {config.bandit_init_noise}")


def bandit_negatives(problem: BanditPreferenceProblem, pairs: str) -> np.ndarray:
    """(N, M) the rejected responses paired with each list's best: M = 1, or K − 1 for best_vs_each."""
    if pairs == "binarized":
        return problem.binarized[:, None]
    if pairs == "best_vs_worst":
        return problem.lists[:, -1:]
    return problem.lists[:, 1:]


def bandit_objective(problem: BanditPreferenceProblem, config, pair_loss=dpo_loss):
    """make_objective(policy) -> objective(list indices): the mean pair loss (DPO; `ipo` passes IPO's) of those
    lists' pairs of `config.pairs`, pair_loss(π(y_w), π(y_l), π_ref(y_w), π_ref(y_l), config.beta)."""
    prompts, best = torch.as_tensor(problem.list_prompts), torch.as_tensor(problem.lists[:, 0])
    rejected, ref = torch.as_tensor(bandit_negatives(problem, config.pairs)), torch.as_tensor(problem.ref_logp)

    def make(policy):
        def objective(idx):
            logp, x, w, l = policy(), prompts[idx], best[idx], rejected[idx]       # l: (B, M)
            xs = x[:, None].expand_as(l)
            ws = w[:, None].expand_as(l)
            return pair_loss(logp[xs, ws], logp[xs, l], ref[xs, ws], ref[xs, l], config.beta).mean()
        return objective
    return make
