"""The tabular contextual-bandit preference world of EPA (docs/papers/epa.md), its policies and their trainer.

World: P prompts x, V single-token responses y.
* True reward, low-rank plus noise so that prompts share structure:
      r*(x, y) = √ρ · ⟨u_x, v_y⟩ / √d + √(1 − ρ) · ε_xy,   u_x, v_y ~ N(0, I_d), ε_xy ~ N(0, 1),
  mean 0 and variance ρ·E⟨u, v⟩²/d + 1 − ρ = 1 (our r* ~ N(0, 1)); d = `reward_rank`, ρ = `shared`.
* π_ref(·|x) = softmax(s · g_x), g_x ~ N(0, I_V): a non-uniform random initial policy (s = `reference_scale`).
* Behaviour policy of the data: π_ref itself, or ("mixture") the equal mixture of π_ref and three other random
  policies of the same scale (UltraFeedback's completions come from several "other models").
* UF-all-like lists: K distinct responses per list drawn from the behaviour policy (Gumbel top-K, i.e.
  sequential sampling without replacement), ranked best first by Plackett–Luce with scores r*/τ
  ("plackett_luce"; for two responses Bradley–Terry, P(a ≻ b) = σ((r*_a − r*_b)/τ)) or by r* itself ("sorted").
  UF-binarized-like pair of a list: its best against one uniformly drawn other member.

Policies: a free logit table (P × V, the default) or a prompt embedding → MLP → logits model, whose
log-probabilities are log π_ref(·|x) + head(MLP(e_x)) with a zero-initialised head, so that both start at
π_ref unless `init_noise` > 0 perturbs the table (the "second init" of the non-uniqueness check).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from bench.context import log_spaced_steps
from bench.toolkit.causal_lm import train
from tasks.preference import BanditPreferenceResult

OTHER_MODELS = 3   # random "other-model" policies in the behaviour mixture
TRACE_POINTS = 40  # log-spaced training steps at which a method keeps its policy (KL–reward trace)


def true_reward(prompts: int, responses: int, rank: int, shared: float, rng: np.random.Generator) -> np.ndarray:
    """(P, V) r* of the module docstring (variance 1, a share ρ of it low-rank)."""
    u, v = rng.standard_normal((prompts, rank)), rng.standard_normal((responses, rank))
    return np.sqrt(shared) * (u @ v.T) / np.sqrt(rank) + np.sqrt(1 - shared) * rng.standard_normal((prompts, responses))


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def behaviour_logp(ref_logp: np.ndarray, kind: str, scale: float, rng: np.random.Generator) -> np.ndarray:
    """(P, V) log-probabilities of the data's behaviour policy."""
    if kind == "reference":
        return ref_logp
    others = [log_softmax(scale * rng.standard_normal(ref_logp.shape)) for _ in range(OTHER_MODELS)]
    stacked = np.stack([ref_logp, *others])                                   # (1 + M, P, V)
    top = stacked.max(axis=0)
    return top + np.log(np.exp(stacked - top).mean(axis=0))                   # log of the equal mixture


def sample_lists(logp: np.ndarray, per_prompt: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(prompt of each list (N,), K distinct responses of each list (N, K)): Gumbel top-K of logp[x], N = P·per_prompt."""
    prompts = np.repeat(np.arange(logp.shape[0]), per_prompt)
    keys = logp[prompts] + rng.gumbel(size=(len(prompts), logp.shape[1]))
    return prompts, np.argsort(-keys, axis=1, kind="stable")[:, :k]


def rank_lists(reward: np.ndarray, prompts: np.ndarray, lists: np.ndarray, labels: str, temperature: float,
               rng: np.random.Generator) -> np.ndarray:
    """The lists reordered best first: Plackett–Luce in r*/τ (Gumbel-max trick) or sorted by r*."""
    scores = reward[prompts[:, None], lists]
    if labels == "plackett_luce":
        scores = scores / temperature + rng.gumbel(size=scores.shape)
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(lists, order, axis=1)


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
        batch_size: int, generator: torch.Generator, on_step: Callable[[int, float], None] | None = None) -> list[float]:
    """Adam (no weight decay, no clipping, no warm-up, linear decay to 0) on objective(indices); batch 0 = full batch."""
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
