"""Lossless speculative decoding, with target and drafter of the same or of different vocabularies.

Contract of the family (Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding
Algorithms for Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202; our report
docs/papers/hetero-vocab-sd.md). A `DecodingProblem` holds a target causal LM, a drafter with a
different tokenizer, optionally a smaller drafter sharing the target's tokenizer (standard SD), and
prompts. Every method continues each prompt with the target's tokens (ids of the target vocabulary)
and reports its forward passes (`DecodingResult`).

The costs are observed, not taken from the report: the problem hooks its models (tasks/decoding/_meter.py, on
`bench.observe.Meter`), and the harness delimits the count to the method's solve. A target forward pass counts once;
a drafter forward counts once per sequence in its batch (SLRS's batched paths each count, as the paper's lemma
does). `self_drafter` is the target's weights behind a handle counted as a drafter (the self-drafting control). A
reported count that differs from the observed one is a `Misreport`: the run fails instead of being scored.

Scored (`score`, the only judge):
* `target_calls_per_token` (primary): observed target forward passes per generated token; 1 for
  autoregressive decoding, 1/(mean tokens per verification) for speculative decoding;
* `acceptance_rate`: accepted draft tokens / drafted tokens, counted in target tokens, as the method reports
  them (no forward hook sees which tokens were drafts); checked against the observation: at most every drafted
  token is accepted, and every generated token is an accepted draft or the one token of a target call;
* `tokens_per_second` and `speedup`: the solve's wall clock as the harness timed it, against the target-only
  greedy decoding the task timed when it built the problem (hf-bench's tok/s ratio), so noisy on a shared CPU;
* `modelled_speedup`: tokens / (target calls + c·drafter calls) with c = c_D/c_T (docs/papers/hetero-vocab-sd.md);
* `greedy_exact_match`: under greedy decoding, the fraction of prompts whose continuation equals
  the target's own greedy continuation id for id (losslessness; 1.0 for every lossless method).
Continuations end at the target's EOS or after `max_new_tokens` tokens; longer outputs are cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.observe import Meter, Misreport, check_report
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
    meter: Meter = field(init=False, repr=False)   # forward passes of the models below, counted by hooks
    self_drafter: LM = field(init=False, repr=False)  # the target's weights, counted as a drafter (self-drafting)

    def __post_init__(self) -> None:
        from tasks.decoding._meter import wire

        meter = Meter()
        drafters = [self.drafter.model] + ([self.same_drafter.model] if self.same_drafter is not None else [])
        view = wire(meter, self.target.model, drafters)
        object.__setattr__(self, "meter", meter)
        object.__setattr__(self, "self_drafter", LM(view, self.target.tokenizer, f"{self.target.name} (as drafter)"))

    def prompt_ids(self, index: int) -> list[int]:
        return list(self.target.tokenizer.encode(self.prompts[index], add_special_tokens=False))


@dataclass(frozen=True, eq=False)
class DecodingResult:
    outputs: tuple[tuple[int, ...], ...]  # generated target ids per prompt (prompt excluded)
    target_calls: int                     # reported target forward passes (checked against the observed ones)
    drafter_calls: int                    # reported drafter forward passes, one per sequence of a batch (checked)
    drafted: int                          # draft tokens put to the target, in target tokens
    accepted: int                         # of those, accepted
    seconds: float                        # the method's own clock of its decoding (not scored: the harness times)
    greedy: bool                          # temperature 0 (else sampling at temperature 1)


METRICS = {
    "target_calls_per_token": Metric(False, "", True,
                                     "target forward passes per generated token (1 for autoregressive)",
                                         bounds=(0.0, None)),
    "acceptance_rate": Metric(True, "", False, "accepted / drafted draft tokens, in target tokens", bounds=(0.0, 1.0)),
    "tokens_per_call": Metric(True, "", False, "generated tokens per target forward pass (block efficiency)",
                              bounds=(0.0, None)),
    "drafter_calls_per_token": Metric(False, "", False, "drafter forward passes per generated token (a batched "
                                      "forward counts each sequence)", bounds=(0.0, None)),
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


def observed(problem: DecodingProblem, result: DecodingResult) -> tuple[int, int, float]:
    """(target forward passes, drafter sequence forwards, seconds) of the solve as the problem's meter saw them;
    Misreport when the result's own counts differ."""
    reading = problem.meter.reading()
    check_report("target forward passes", result.target_calls, reading["target"])
    check_report("drafter forward passes", result.drafter_calls, reading["drafter_rows"])
    return reading["target"], reading["drafter_rows"], reading.seconds


def score(problem: DecodingProblem, result: DecodingResult) -> dict[str, float]:
    if not isinstance(problem, DecodingProblem):
        raise TypeError(f"not a decoding problem: {type(problem).__name__}")
    if len(result.outputs) != len(problem.prompts):
        raise ValueError(f"{len(result.outputs)} outputs for {len(problem.prompts)} prompts")
    tokens = sum(len(o) for o in result.outputs)
    ref_tokens = sum(len(r) for r in problem.reference)
    target_calls, drafter_calls, seconds = observed(problem, result)
    scores = {
        "new_tokens": float(tokens),
        "target_calls_per_token": target_calls / max(tokens, 1),
        "tokens_per_call": tokens / max(target_calls, 1),
        "drafter_calls_per_token": drafter_calls / max(tokens, 1),
        "modelled_speedup": tokens / max(target_calls + problem.cost_ratio * drafter_calls, 1e-12),
    }
    if not 0 <= result.accepted <= result.drafted:
        raise Misreport(f"the method reports {result.accepted} accepted of {result.drafted} drafted tokens")
    if tokens > result.accepted + target_calls:
        raise Misreport(f"{tokens} tokens generated, but the method reports {result.accepted} accepted drafts and the "
                        f"harness observed {target_calls} target calls (each gives at most one token of its own)")
    if result.drafted:
        scores["acceptance_rate"] = result.accepted / result.drafted
    if seconds > 0 and problem.ar_seconds > 0:
        scores["tokens_per_second"] = tokens / seconds
        if ref_tokens:
            scores["speedup"] = (tokens / seconds) / (ref_tokens / problem.ar_seconds)
    if result.greedy:
        same = [tuple(o) == tuple(r) for o, r in zip(result.outputs, problem.reference)]
        scores["greedy_exact_match"] = sum(same) / len(same)
    return scores
