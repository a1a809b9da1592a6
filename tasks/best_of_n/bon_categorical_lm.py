"""Sequences of a small random categorical language model, with exact probabilities (the LLM experiment, down-scaled).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879, LLM
experiment (Alpaca prompts, a Gemma-family reference, rewards = log-likelihood under the reference
and negative length). Down-scaled as docs/papers/best-of-n-kl.md describes: the reference is a random bigram LM over
`vocab` tokens (token 0 is end-of-sequence), first-token and next-token distributions drawn from
a symmetric Dirichlet(α); a sequence stops at EOS or after `max_len` tokens, and EOS is not
allowed before `min_len` tokens (its probability is then moved onto the other tokens
proportionally). Every sequence is enumerated, so π(y) is exact
(K = Σ_{min_len ≤ t < max_len} (V−1)^t + (V−1)^max_len outcomes). α and min_len set the prompt's
entropy: α = 0.1 with free stopping is a low-entropy prompt ("What is the capital of France?":
one sequence takes much of the mass, here max π ≈ 0.18); α = 1 with min_len = max_len is a
high-entropy one (max π ≈ 0.007). With free stopping the empty sequence alone carries the first
EOS probability (≈ 1/V on average), whatever α.

Rewards: "loglik" r(y) = log π(y) (best-of-n returns the most likely of its n samples);
"neg_length" r(y) = −(number of non-EOS tokens), which ties massively: ties are broken by the
family's fixed total order (outcome index; outcomes are listed by length, then lexicographically
by tokens), as after the paper's Assumption 2.1.

Fidelity: approximate (a stand-in for the 9B-parameter model). Deviation: Dirichlet draws are
floored at 1e-300 (then renormalised) so that every sequence has a finite log-likelihood.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.best_of_n import BestOfNProblem

REWARDS = ("loglik", "neg_length")
MAX_OUTCOMES = 5_000_000


@dataclass(frozen=True)
class Config:
    vocab: int = 10                 # V, tokens including EOS (token 0)
    max_len: int = 5                # longest sequence (in non-EOS tokens)
    alpha: float = 1.0              # α of the Dirichlet behind every next-token distribution
    min_len: int = 0                # EOS is forbidden before this many tokens
    reward: str = "loglik"          # "loglik" or "neg_length"
    n: int = 16                     # n, draws of best-of-n
    world_seed: int | None = 0      # seed of the LM; None: the run seed draws it

    def __post_init__(self) -> None:
        if self.vocab < 2 or self.max_len < 1:
            raise ValueError(f"need vocab >= 2 and max_len >= 1, got vocab={self.vocab}, max_len={self.max_len}")
        if not 0 <= self.min_len <= self.max_len:
            raise ValueError(f"need 0 <= min_len <= max_len, got min_len={self.min_len}, max_len={self.max_len}")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {self.reward!r}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        count = num_sequences(self.vocab, self.max_len, self.min_len)
        if count > MAX_OUTCOMES:
            raise ValueError(f"vocab={self.vocab}, max_len={self.max_len} gives {count} sequences "
                             f"(limit {MAX_OUTCOMES}); use a smaller vocab or max_len")


def num_sequences(vocab: int, max_len: int, min_len: int = 0) -> int:
    """K: sequences ending in EOS after min_len ≤ t < max_len tokens, plus the (V−1)^max_len full ones."""
    return sum((vocab - 1) ** t for t in range(min_len, max_len)) + (vocab - 1) ** max_len


def _dirichlet(rng: np.random.Generator, alpha: float, shape: tuple[int, ...]) -> np.ndarray:
    draws = np.maximum(rng.dirichlet(np.full(shape[-1], alpha), size=shape[:-1]), 1e-300)
    return draws / draws.sum(axis=-1, keepdims=True)


def enumerate_sequences(first: np.ndarray, transition: np.ndarray, max_len: int,
                        min_len: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """All sequences of the bigram LM: ((K, max_len) tokens padded with −1, (K,) log π(y)).

    first: (V,) distribution of the first token; transition: (V, V), row v = next-token law after
    token v (row 0, after EOS, is unused). Before min_len tokens EOS has probability 0 and the
    other tokens are renormalised. Order: by length, then lexicographic.
    """
    V = first.size

    def no_eos(dist: np.ndarray) -> np.ndarray:
        rest = dist.copy()
        rest[..., 0] = 0.0
        total = rest.sum(axis=-1, keepdims=True)   # 0 only for a row that always stops (row 0)
        return np.divide(rest, total, out=np.zeros_like(rest), where=total > 0)

    with np.errstate(divide="ignore"):  # log 0 = −inf for the forbidden EOS
        log_first, log_trans = np.log(first), np.log(transition)
        log_first_cut, log_trans_cut = np.log(no_eos(first)), np.log(no_eos(transition))
    done_tokens, done_logp = [], []
    alive = np.zeros((1, 0), dtype=np.int64)     # prefixes of non-EOS tokens
    alive_logp = np.zeros(1)
    for t in range(max_len):
        cut = t < min_len                          # EOS forbidden: the other tokens renormalised
        table = (log_first_cut, log_trans_cut) if cut else (log_first, log_trans)
        step = np.broadcast_to(table[0], (1, V)) if t == 0 else table[1][alive[:, -1]]   # (m, V)
        logp = alive_logp[:, None] + step
        if t >= min_len:
            done_tokens.append(alive)              # the prefix followed by EOS: length t
            done_logp.append(logp[:, 0])
        m = alive.shape[0]
        alive = np.concatenate([np.repeat(alive, V - 1, axis=0), np.tile(np.arange(1, V), m)[:, None]], axis=1)
        alive_logp = logp[:, 1:].reshape(-1)
    done_tokens.append(alive)                      # full length, truncated without EOS
    done_logp.append(alive_logp)
    tokens = np.full((sum(a.shape[0] for a in done_tokens), max_len), -1, dtype=np.int64)
    row = 0
    for a in done_tokens:
        tokens[row:row + a.shape[0], :a.shape[1]] = a
        row += a.shape[0]
    return tokens, np.concatenate(done_logp)


@task(family="best_of_n", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> BestOfNProblem:
    rng = ctx.rng if config.world_seed is None else np.random.default_rng(config.world_seed)
    first = _dirichlet(rng, config.alpha, (config.vocab,))
    transition = _dirichlet(rng, config.alpha, (config.vocab, config.vocab))
    tokens, logp = enumerate_sequences(first, transition, config.max_len, config.min_len)
    probs = np.exp(logp)
    if config.reward == "loglik":
        rewards = logp
    else:
        rewards = -np.sum(tokens >= 0, axis=1).astype(float)
    return BestOfNProblem(n=config.n, probs=probs / probs.sum(), rewards=rewards, outcomes=tokens)
