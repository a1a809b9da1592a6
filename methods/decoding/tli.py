"""TLI, Token-Level Intersection: speculative sampling with the drafter restricted to T ∩ D (paper Algorithm 4).

Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202, Algorithm 4. I = T ∩ D, tokens identified
by their string after the space marker is normalised (`▁` and byte-level `Ġ` both read as " ", as
HF's AssistantToTargetTranslator does). The drafter's distribution is renormalised on I,

    q'(x) = q(x)·1[x ∈ I] / Σ_{y∈I} q(y),

drafts x_1..x_k ~ q' (or argmax q' under greedy) are mapped to target ids, the target scores
y + x_1..x_k in one forward pass and the standard rule verifies them: accept with probability
min(1, p(x)/q'(x)), else sample the residual ∝ max(0, p − q'); greedy keeps the argmax matches.
Lossless because q' is supported inside T. Acceptance Σ_{x∈I} min(p, q') ≥ Σ_{x∈I} min(p, q), the
acceptance of the union-vocabulary baseline (the paper's theorem).

The drafter context is the text of y re-encoded for the drafter, the new text only (`_vocab.Retokenizer`;
HF maps only the newest token), and both models keep KV caches rolled back after a rejection.

Fidelity: faithful. Deviation: a fixed confidence threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from methods.decoding._cache import CachedLM
from methods.decoding._sd import Counts, cpu_generator, decode_all, draft_tokens, verify
from methods.decoding._vocab import Retokenizer, output_size, token_strings
from tasks.decoding import LM, DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 4}

SWITCHED_OFF = ("the algorithm is the method: the restriction to T ∩ D is what lets the target verify another "
                "vocabulary's drafts, and no setting removes it or drafting (k >= 1, the confidence rule keeps the "
                "first draft token); its acceptance rule is already standard SD's")


@dataclass(frozen=True)
class Config:
    do_sample: bool = True              # temperature 1 (True, HF's TLI path) or greedy, T = 0 (False)
    num_assistant_tokens: int = 20      # k, draft length (HF default 20)
    confidence_threshold: float = 0.4   # drafter stops when max q' < this (HF assistant_confidence_threshold)

    def __post_init__(self) -> None:
        if self.num_assistant_tokens < 1:
            raise ValueError(f"num_assistant_tokens must be >= 1, got {self.num_assistant_tokens}")
        if not 0.0 <= self.confidence_threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be in [0, 1], got {self.confidence_threshold}")


def intersection(target: LM, drafter: LM, target_size: int, drafter_size: int) -> torch.Tensor:
    """drafter id -> target id of the same string, −1 outside I = T ∩ D: (|D|,) long."""
    index = {}
    for i, s in enumerate(token_strings(target, target_size)):
        if s and "\ufffd" not in s:  # partial UTF-8 bytes have no string of their own
            index.setdefault(s, i)
    d2t = torch.full((drafter_size,), -1, dtype=torch.long)
    seen = set()
    for j, s in enumerate(token_strings(drafter, drafter_size)):
        if s in index and index[s] not in seen:
            d2t[j] = index[s]
            seen.add(index[s])
    return d2t


@method(family="decoding", config=Config, smoke=SMOKE)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, greedy = cpu_generator(ctx), not config.do_sample
    target, drafter = problem.target, problem.drafter
    t_size = output_size(target)
    d2t = intersection(target, drafter, t_size, output_size(drafter))
    in_i = d2t >= 0
    if not bool(in_i.any()):
        raise ValueError("TLI needs a non-empty vocabulary intersection; these tokenizers share no token string")

    d_ids, t_ids = torch.nonzero(in_i)[:, 0], d2t[in_i]
    d2t_list = d2t.tolist()
    target_lm, drafter_lm, to_drafter = CachedLM(target.model), CachedLM(drafter.model), Retokenizer(target, drafter)

    def to_target(dists: list[torch.Tensor]) -> list[torch.Tensor]:  # q' over D, zero outside I -> the same law over T
        if not dists:
            return []
        out = torch.zeros(len(dists), t_size, dtype=torch.float64)
        out[:, t_ids] = torch.stack(dists)[:, d_ids]
        return list(out)

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        k = min(config.num_assistant_tokens, remaining - 1)
        draft, dists = draft_tokens(drafter_lm, to_drafter(ids), k, greedy, config.confidence_threshold, counts,
                                    generator, drafter.tokenizer.eos_token_id, mask=in_i) if k > 0 else ([], [])
        candidates = [d2t_list[d] for d in draft]
        return verify(target_lm, ids, candidates, counts, greedy, generator, q_rows=to_target(dists))

    return decode_all(problem, step, greedy, ctx)
