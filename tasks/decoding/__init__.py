"""Lossless speculative decoding, with target and drafter of the same or of different vocabularies.

Contract of the family (Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding
Algorithms for Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202; our report
docs/papers/hetero-vocab-sd.md). A `DecodingProblem` holds a target causal LM, a drafter with a
different tokenizer, optionally a smaller drafter sharing the target's tokenizer (standard SD), and
prompts. Every method continues each prompt with the target's tokens (ids of the target vocabulary)
and counts its forward passes (`DecodingResult`).

Scored (`score`, the only judge):
* `target_calls_per_token` (primary): target forward passes per generated token; 1 for
  autoregressive decoding, 1/(mean tokens per verification) for speculative decoding;
* `acceptance_rate`: accepted draft tokens / drafted tokens, counted in target tokens;
* `tokens_per_second` and `speedup`: wall clock, against the target-only greedy decoding the task
  timed when it built the problem (hf-bench's tok/s ratio), so noisy on a shared CPU;
* `modelled_speedup`: tokens / (target calls + c·drafter calls) with c = c_D/c_T (docs/papers/hetero-vocab-sd.md);
* `greedy_exact_match`: under greedy decoding, the fraction of prompts whose continuation equals
  the target's own greedy continuation id for id (losslessness; 1.0 for every lossless method).
Continuations end at the target's EOS or after `max_new_tokens` tokens; longer outputs are cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.spec import Metric


@dataclass(frozen=True, eq=False)
class LM:
    model: Any      # a causal LM: model(input_ids (1, n)).logits -> (1, n, |V|)
    tokenizer: Any  # its tokenizer (PreTrainedTokenizerFast): encode / decode / eos_token_id
    name: str


@dataclass(frozen=True, eq=False)
class DecodingProblem:
    target: LM                      # M_p over vocabulary T
    drafter: LM                     # M_q over a different vocabulary D
    same_drafter: LM | None         # a drafter over T itself (standard SD); None if not provided
    prompts: tuple[str, ...]
    kinds: tuple[str, ...]          # summarisation / code / long_context, one per prompt
    max_new_tokens: int
    reference: tuple[tuple[int, ...], ...]  # the target's own greedy continuation of each prompt
    ar_seconds: float               # wall clock of that target-only greedy decoding (all prompts)
    cost_ratio: float = 0.05        # c_D / c_T for the modelled speedup

    def prompt_ids(self, index: int) -> list[int]:
        return list(self.target.tokenizer.encode(self.prompts[index], add_special_tokens=False))


@dataclass(frozen=True, eq=False)
class DecodingResult:
    outputs: tuple[tuple[int, ...], ...]  # generated target ids per prompt (prompt excluded)
    target_calls: int                     # target forward passes
    drafter_calls: int                    # drafter forward passes (batched enumerations count once)
    drafted: int                          # draft tokens put to the target, in target tokens
    accepted: int                         # of those, accepted
    seconds: float                        # wall clock of the whole decoding
    greedy: bool                          # temperature 0 (else sampling at temperature 1)


METRICS = {
    "target_calls_per_token": Metric(False, "", True,
                                     "target forward passes per generated token (1 for autoregressive)",
                                         bounds=(0.0, None)),
    "acceptance_rate": Metric(True, "", False, "accepted / drafted draft tokens, in target tokens", bounds=(0.0, 1.0)),
    "tokens_per_call": Metric(True, "", False, "generated tokens per target forward pass (block efficiency)",
                              bounds=(0.0, None)),
    "drafter_calls_per_token": Metric(False, "", False, "drafter forward passes per generated token",
                                      bounds=(0.0, None)),
    "tokens_per_second": Metric(True, "tok/s", False, "generated tokens per second of wall clock", bounds=(0.0, None)),
    "speedup": Metric(True, "x", False, "tok/s over the target-only greedy decoding timed when the task was built",
                      bounds=(0.0, None)),
    "modelled_speedup": Metric(True, "x", False, "tokens / (target calls + c_D/c_T · drafter calls)",
                               bounds=(0.0, None)),
    "greedy_exact_match": Metric(True, "", False,
                                 "greedy only: fraction of prompts whose output equals the target's own greedy output",
                                     bounds=(0.0, 1.0)),
    "new_tokens": Metric(True, "", False, "tokens generated over all prompts", bounds=(0.0, None)),
}


def score(problem: DecodingProblem, result: DecodingResult) -> dict[str, float]:
    if not isinstance(problem, DecodingProblem):
        raise TypeError(f"not a decoding problem: {type(problem).__name__}")
    if len(result.outputs) != len(problem.prompts):
        raise ValueError(f"{len(result.outputs)} outputs for {len(problem.prompts)} prompts")
    tokens = sum(len(o) for o in result.outputs)
    ref_tokens = sum(len(r) for r in problem.reference)
    scores = {
        "new_tokens": float(tokens),
        "target_calls_per_token": result.target_calls / max(tokens, 1),
        "tokens_per_call": tokens / max(result.target_calls, 1),
        "drafter_calls_per_token": result.drafter_calls / max(tokens, 1),
        "modelled_speedup": tokens / max(result.target_calls + problem.cost_ratio * result.drafter_calls, 1e-12),
    }
    if result.drafted:
        scores["acceptance_rate"] = result.accepted / result.drafted
    if result.seconds > 0 and problem.ar_seconds > 0:
        scores["tokens_per_second"] = tokens / result.seconds
        scores["speedup"] = (tokens / result.seconds) / (ref_tokens / problem.ar_seconds)
    if result.greedy:
        same = [tuple(o) == tuple(r) for o, r in zip(result.outputs, problem.reference)]
        scores["greedy_exact_match"] = sum(same) / len(same)
    return scores
