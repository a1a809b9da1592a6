"""TLI, Token-Level Intersection: speculative sampling with the drafter restricted to T ∩ D (paper Algorithm 4).

Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202 (spec §3.3). I = T ∩ D, tokens identified
by their string after the space marker is normalised (`▁` and byte-level `Ġ` both read as " ", as
HF's AssistantToTargetTranslator does). The drafter's distribution is renormalised on I,

    q'(x) = q(x)·1[x ∈ I] / Σ_{y∈I} q(y),

drafts x_1..x_k ~ q' (or argmax q' under greedy) are mapped to target ids, the target scores
y + x_1..x_k in one forward pass and the standard rule verifies them: accept with probability
min(1, p(x)/q'(x)), else sample the residual ∝ max(0, p − q'); greedy keeps the argmax matches.
Lossless because q' is supported inside T. Acceptance Σ_{x∈I} min(p, q') ≥ Σ_{x∈I} min(p, q), the
acceptance of the union-vocabulary baseline (the paper's theorem).

Fidelity: faithful. Deviations: the drafter context is the full text of y re-encoded each round (HF
maps only the newest token and rolls the drafter cache back); a fixed confidence threshold; no KV caches.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from methods.decoding._sd import Counts, cpu_generator, decode_all, draft_tokens, encode, text_of, verify
from tasks.decoding import LM, DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 4}


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


def token_strings(lm: LM, size: int) -> list[str | None]:
    """The text of each id (None for ids beyond the tokenizer); `▁` read as a space, byte-level decoded."""
    tok, out = lm.tokenizer, []
    for i in range(size):
        raw = tok.convert_ids_to_tokens(i) if i < len(tok) else None
        out.append(None if raw is None else raw.replace("▁", " ") if "▁" in raw else tok.decode([i]))
    return out


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


def output_size(lm: LM) -> int:
    return int(lm.model.get_output_embeddings().weight.shape[0]) if hasattr(lm.model, "get_output_embeddings") \
        else int(lm.model.vocab_size)


@method(family="decoding", config=Config)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, greedy = cpu_generator(ctx), not config.do_sample
    target, drafter = problem.target, problem.drafter
    t_size = output_size(target)
    d2t = intersection(target, drafter, t_size, output_size(drafter))
    in_i = d2t >= 0
    if not bool(in_i.any()):
        raise ValueError("TLI needs a non-empty vocabulary intersection; these tokenizers share no token string")

    def to_target(q: torch.Tensor) -> torch.Tensor:  # q' over D, zero outside I -> the same law over T
        out = torch.zeros(t_size, dtype=q.dtype)
        out[d2t[in_i]] = q[in_i]
        return out

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        k = min(config.num_assistant_tokens, remaining - 1)
        context = encode(drafter, text_of(target, ids))  # z = enc_D(dec_T(y))
        draft, dists = draft_tokens(drafter, context, k, greedy, config.confidence_threshold, counts, generator,
                                    mask=in_i) if k > 0 else ([], [])
        candidates = [int(d2t[d]) for d in draft]
        return verify(problem, ids, candidates, counts, greedy, generator, q_rows=[to_target(q) for q in dists])

    return decode_all(problem, step, greedy, ctx)
