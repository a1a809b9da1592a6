"""Topic-switching Markov documents: a language-modelling task with long-range structure (our CPU proxy).

A document walks a Markov chain over V tokens whose transition matrix T_z is chosen by a hidden topic
z ∈ {1..K}: x_0 ~ U{V}, z_1 ~ U{K}, x_t ~ T_{z_t}[x_{t−1}], and before each transition the topic is
redrawn uniformly with probability ρ (`switch`; mean run 1/ρ tokens). The rows of every T_z are
Dirichlet(β) draws (small β: peaked rows), fixed per task seed. The next token depends on the previous
one (local structure) and on the current topic, which only the recent context reveals (long-range
structure). The optimal prediction depends on the context since the last switch, not on how much
older context precedes it: the output distribution should not depend on the input length (long-short
alignment), and a model that pools its whole context, fitted at l_train ≈ 1/ρ, is misled by the older
topics of longer inputs. The exact Bayes predictive (an HMM filter) gives the optimal NLL at every length.

Models are trained at l_train = `train_length` and evaluated at `eval_lengths` (by default 1×, 2×, 4×
l_train); L_misalign is measured on `eval_sequences` held-out documents of length l_train.

Fidelity: approximate. The paper continues Llama-2-7B on RedPajama-Book / PG19 at 4K–8K tokens and
evaluates LongBench-E, perplexity and BABILong; this synthetic corpus (our CPU proxy) stands in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.length_generalization import LMProblem

SMALLEST = {"train_length": 8, "eval_lengths": (8, 16), "eval_sequences": 4}


@dataclass(frozen=True)
class Config:
    vocab: int = 32                             # V, tokens
    topics: int = 8                             # K, topics (one per document)
    concentration: float = 0.1                  # β, Dirichlet parameter of the transition rows
    switch: float = 1 / 32                      # ρ, per-token probability of redrawing the topic (0: one topic)
    train_length: int = 32                      # l_train (paper: 4K / 8K tokens)
    eval_lengths: tuple[int, ...] = (32, 64, 128)  # evaluation lengths (paper: LongBench-E, BABILong 4K–16K)
    eval_sequences: int = 64                    # held-out documents per evaluation length and for L_misalign

    def __post_init__(self) -> None:
        if self.vocab < 2 or self.topics < 1 or not self.concentration > 0:
            raise ValueError(f"need vocab >= 2, topics >= 1, concentration > 0; got {self.vocab}, {self.topics}, "
                             f"{self.concentration}")
        if self.train_length < 2 or self.train_length not in self.eval_lengths or min(self.eval_lengths) < 2:
            raise ValueError(f"train_length {self.train_length} must be >= 2 and among eval_lengths {self.eval_lengths}"
                             " (all >= 2)")
        if not 0 <= self.switch <= 1:
            raise ValueError(f"switch must be in [0, 1], got {self.switch}")
        if self.eval_sequences < 1:
            raise ValueError(f"eval_sequences must be >= 1, got {self.eval_sequences}")


@task(family="length_generalization", config=Config, version=1, problem=LMProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> LMProblem:
    rng = ctx.rng
    transitions = rng.dirichlet(np.full(config.vocab, config.concentration), size=(config.topics, config.vocab))
    transitions = np.maximum(transitions, 1e-6)  # keep log T_z finite where a Dirichlet draw underflows
    transitions /= transitions.sum(axis=2, keepdims=True)
    problem = LMProblem(transitions=transitions, switch=config.switch, train_length=config.train_length,
                        eval_tokens={}, misalign_tokens=np.empty((0, config.train_length), dtype=np.int64))
    eval_tokens = {L: problem.sample(config.eval_sequences, L, rng) for L in sorted(set(config.eval_lengths))}
    misalign = problem.sample(config.eval_sequences, config.train_length, rng)
    return LMProblem(transitions=transitions, switch=config.switch, train_length=config.train_length,
                     eval_tokens=eval_tokens, misalign_tokens=misalign)
