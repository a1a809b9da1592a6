"""SLEM, String-Level Exact Match: drafts cross between vocabularies as text (paper Algorithm 2).

Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202, Algorithm 2. One round, with target ids y:
1. the drafter's context is the text of y re-encoded with the drafter tokenizer, z = enc_D(dec_T(y))
   (only the text added since the last round is decoded and re-encoded, `_vocab.Retokenizer`);
2. the drafter proposes d_1..d_k (k ≤ num_assistant_tokens; it stops early when its top probability
   falls below the confidence threshold);
3. s = dec_D(d_1..d_k) (special tokens skipped); the candidates t_1..t_m are the part of
   enc_T(dec_T(y[-L_t:]) + s) beyond the re-encoded look-behind window y[-L_t:] (the longest window
   whose re-encoding reproduces y's own tail ids; enc_T(s) alone if none does);
4. one target forward on y + t_1..t_m;
5. greedy: keep t_i while t_i = argmax p(·|y, t_<i), then emit the target's argmax;
   sampling (the paper's SLEM with sampling, not HF's path): the target samples x_i ~ p(·|y, t_<i)
   and t_i survives iff x_i = t_i; the first x_i that differs (or a last sample from p) is emitted.
Every emitted token is the target's own choice, so the output equals target-only decoding (exactly
under greedy, in law under sampling); the drafts decide only how many tokens one forward confirms.

Both models keep their KV caches and roll them back to the longest prefix still valid, so the
drafter reads the newly synced ids and its own drafts, the target the last token and the candidates.

Fidelity: faithful to the algorithm. Deviations: the target-side alignment is a prefix match of the
re-encoded look-behind window rather than HF's longest common diagonal; a fixed confidence threshold
replaces HF's online-adapted one. These change cost, never the output.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.decoding._cache import CachedLM
from methods.decoding._sd import Counts, cpu_generator, decode_all, draft_tokens, verify
from methods.decoding._vocab import Retokenizer, encode, text_of
from tasks.decoding import LM, DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 4}

SWITCHED_OFF = ("the algorithm is the method: no setting removes its cross-vocabulary drafting (k >= 1, and the "
                "confidence rule keeps the first draft token) or swaps its exact-match rule for another; without "
                "drafts it is autoregressive decoding, a different method")


@dataclass(frozen=True)
class Config:
    do_sample: bool = False             # temperature 1 (True) or greedy, T = 0 (False, the paper's SLEM runs)
    num_assistant_tokens: int = 20      # k, drafter tokens per round (HF default 20)
    confidence_threshold: float = 0.4   # drafter stops when max q < this (HF assistant_confidence_threshold)
    target_lookbehind: int = 10         # L_t, target tokens re-encoded with the draft (HF target_lookbehind)

    def __post_init__(self) -> None:
        if self.num_assistant_tokens < 1 or self.target_lookbehind < 0:
            raise ValueError(f"num_assistant_tokens must be >= 1 and target_lookbehind >= 0, got "
                             f"{self.num_assistant_tokens}, {self.target_lookbehind}")
        if not 0.0 <= self.confidence_threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be in [0, 1], got {self.confidence_threshold}")


def to_target_candidates(target: LM, ids: list[int], draft_text: str, lookbehind: int) -> list[int]:
    """Target tokens continuing y with `draft_text`: re-encode a look-behind window of y with it (step 3)."""
    for window in range(min(lookbehind, len(ids)), 0, -1):
        tail = ids[-window:]
        joined = encode(target, text_of(target, tail) + draft_text)
        if joined[:window] == tail:  # the window re-tokenises to y's own ids: the rest extends y
            return joined[window:]
    return encode(target, draft_text)


@method(family="decoding", config=Config, smoke=SMOKE)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, greedy = cpu_generator(ctx), not config.do_sample
    target, drafter = problem.target, problem.drafter
    target_lm, drafter_lm, to_drafter = CachedLM(target.model), CachedLM(drafter.model), Retokenizer(target, drafter)

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        k = min(config.num_assistant_tokens, remaining - 1)
        candidates: list[int] = []
        if k > 0:
            context = to_drafter(ids)  # z = enc_D(dec_T(y))
            draft, _ = draft_tokens(drafter_lm, context, k, greedy, config.confidence_threshold, counts, generator,
                                    drafter.tokenizer.eos_token_id)
            draft_text = text_of(drafter, draft)
            if draft_text:
                candidates = to_target_candidates(target, ids, draft_text, config.target_lookbehind)[:k]
        return verify(target_lm, ids, candidates, counts, greedy, generator)  # q_rows None: exact match

    return decode_all(problem, step, greedy, ctx)
