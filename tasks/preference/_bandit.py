"""The tabular contextual-bandit preference world of EPA (docs/papers/epa.md): rewards, π_ref, behaviour and lists.

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

The policies a method trains on it and their trainer are the methods' (methods/preference/_bandit.py).
"""

from __future__ import annotations

import numpy as np

OTHER_MODELS = 3   # random "other-model" policies in the behaviour mixture


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
    """(prompt of each list (N,), K distinct responses of each list (N, K)): Gumbel top-K of logp[x],
    N = P·per_prompt."""
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
