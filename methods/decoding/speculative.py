"""Standard speculative decoding: a drafter sharing the target's vocabulary (the paper's same-tokenizer rows).

Leviathan et al. 2023 / Chen et al. 2023, as run by Timor et al. (ICML 2025, arXiv 2502.05202) for
same-tokenizer pairs (Leviathan et al. 2023; hf-bench's "same-tokenizer references"). Each round the drafter proposes
k ≤ num_assistant_tokens tokens (stopping early when its top probability is below the confidence
threshold), the target scores y + x_1..x_k in one forward pass, and
* greedy: draft tokens are kept while they equal argmax p, then the target's argmax is emitted;
* sampling: x_i is accepted with probability min(1, p(x_i)/q(x_i)), else the target samples from
  r ∝ max(0, p − q), and after k acceptances one more token from p.

Both models keep their KV caches (the drafter's and the target's roll back to the accepted prefix
after a rejection), so the drafter reads one token per draft step and the target the new block.

Fidelity: faithful to the algorithm; HF's online adaptation of the confidence threshold is replaced
by a fixed threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.decoding._cache import CachedLM
from methods.decoding._sd import Counts, cpu_generator, decode_all, draft_tokens, verify
from tasks.decoding import DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 4}

SWITCHED_OFF = "a baseline of the paper (standard SD, same-vocabulary drafter): no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    do_sample: bool = False             # temperature 1 (True) or greedy, T = 0 (False)
    num_assistant_tokens: int = 20      # k, draft length (HF default 20)
    confidence_threshold: float = 0.4   # drafter stops when max q < this (HF assistant_confidence_threshold)

    def __post_init__(self) -> None:
        if self.num_assistant_tokens < 1:
            raise ValueError(f"num_assistant_tokens must be >= 1, got {self.num_assistant_tokens}")
        if not 0.0 <= self.confidence_threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be in [0, 1], got {self.confidence_threshold}")


def skip(problem: DecodingProblem, config: Config) -> str | None:
    return None if problem.same_drafter is not None else "the task has no drafter sharing the target's vocabulary"


@method(family="decoding", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, drafter, greedy = cpu_generator(ctx), problem.same_drafter, not config.do_sample
    if problem.target.tokenizer.get_vocab() != drafter.tokenizer.get_vocab():
        raise ValueError("standard SD needs one vocabulary: the target's and same_drafter's tokenizers differ")

    target, draft_lm, eos = CachedLM(problem.target.model), CachedLM(drafter.model), drafter.tokenizer.eos_token_id

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        k = min(config.num_assistant_tokens, remaining - 1)
        draft, dists = draft_tokens(draft_lm, ids, k, greedy, config.confidence_threshold, counts, generator, eos)
        return verify(target, ids, draft, counts, greedy, generator, q_rows=dists)

    return decode_all(problem, step, greedy, ctx)
