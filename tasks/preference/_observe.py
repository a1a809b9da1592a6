"""What `score` measures itself on a preference run, instead of taking the method's word (issue 23,
docs/metrics-audit.md): the on-policy share of the training pairs, the implicit reward on the probe set, and the
external benchmarks.

* The labeller. The problem's `annotate` hook is wrapped (`Labeller`) so that every list it ranks during the solve is
  kept on the problem's meter (`problem.meter.issued`, reset and frozen around the solve by the harness). A method
  returns the pairs it trained on, on-policy and off-policy apart; `training_share` checks that each on-policy pair is
  a preference the labeller gave during the solve (chosen ranked above rejected for that prompt), each off-policy pair
  one of the problem's own off-policy lists, and computes the share. A pair of neither kind, or a reported share that
  differs, is a Misreport.
* The implicit reward r_θ = β(log πθ − log π_ref) (EPA's Table 1, docs/papers/epa.md) on the probe set: `probe_rewards`
  runs the returned policy and the reference itself, π_ref loaded from the problem's π_SFT (`sft_path`, the task's
  `model`: no method chooses its reference), with the β the method declares; the harness checks that declaration
  against the run's config (bench.observe.check_declared; a declaration of any other field, such as a reference
  model, names no field of the method's config and is refused too).
* `external_scores`: the problem's `external_eval` hook (lm-evaluation-harness, LOGO's LongBench) run on the returned
  policy by the scorer.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from bench.observe import Meter, Misreport, check_report
from bench.toolkit.causal_lm import load_causal_lm, sequence_logprobs


class Labeller:
    """The problem's annotator as the method calls it: (prompt, responses, rng) -> indices best first, each ranked
    list kept on the meter as (prompt, responses best first)."""

    def __init__(self, annotate: Callable, meter: Meter):
        self.annotate = annotate.annotate if isinstance(annotate, Labeller) else annotate  # a replace()d problem
        self.meter = meter

    def __call__(self, prompt: str, responses, rng: np.random.Generator):
        order = self.annotate(prompt, responses, rng)
        self.meter.issue((prompt, tuple(responses[int(i)] for i in order)))
        return order


def _ranked_above(lists: dict[str, list[tuple[str, ...]]], pair: tuple[str, str, str]) -> bool:
    """Whether one of the prompt's lists ranks `chosen` above `rejected` (its first `chosen` before its last
    `rejected`; the same text at both ends of a list is the off-policy data's own tie)."""
    prompt, chosen, rejected = pair
    for ranked in lists.get(prompt, ()):
        if chosen in ranked and rejected in ranked:
            if ranked.index(chosen) < len(ranked) - 1 - ranked[::-1].index(rejected):
                return True
    return False


def _by_prompt(rows) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for prompt, ranked in rows:
        out.setdefault(prompt, []).append(tuple(ranked))
    return out


def training_share(problem, result) -> float | None:
    """The share of on-policy pairs among the pairs the result says it trained on, each pair checked against where
    it must come from; None when the result returns no pairs (a method without a mixture: no metric)."""
    on, off = tuple(result.on_policy_pairs), tuple(result.off_policy_pairs)
    if not on and not off:
        if result.on_policy_fraction is not None:
            raise Misreport(f"the method reports an on-policy share of {result.on_policy_fraction} but returns none "
                            "of its training pairs, so the share cannot be measured")
        return None
    labelled = _by_prompt(problem.meter.issued)
    offered = _by_prompt(zip(problem.train_prompts, problem.off_policy))
    for kind, pairs, lists in (("on-policy", on, labelled), ("off-policy", off, offered)):
        wrong = [pair for pair in pairs if not _ranked_above(lists, tuple(pair))]
        if wrong:
            source = ("the problem's annotator did not rank during the solve" if kind == "on-policy"
                      else "is not in the problem's off-policy lists")
            raise Misreport(f"{len(wrong)} of the {len(pairs)} {kind} pairs the method returns are a preference "
                            f"that {source}, e.g. {wrong[0]!r}")
    share = len(on) / max(1, len(on) + len(off))
    if result.on_policy_fraction is not None:
        check_report("as the on-policy share of its training pairs", result.on_policy_fraction, share)
    return share


def _device(model) -> str:
    return str(next(model.parameters()).device)


def probe_rewards(problem, model, beta: float) -> np.ndarray:
    """(P, K) r_θ = β(log πθ(y|x) − log π_ref(y|x)) of the returned policy on the probe set, π_ref the problem's π_SFT
    (`problem.sft_path`) with its tokenizer; each response follows its prompt after a space, as the training data's
    do. Computed in float32 as the methods' own evaluation always did, then widened."""
    device = _device(model)
    ref, tokenizer = load_causal_lm(problem.sft_path, device=device)
    prompts = [p for p, rs in zip(problem.probe_prompts, problem.probe_responses) for _ in rs]
    texts = [" " + r for rs in problem.probe_responses for r in rs]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            diff = (sequence_logprobs(model, tokenizer, prompts, texts, device=device)
                    - sequence_logprobs(ref, tokenizer, prompts, texts, device=device))
    finally:
        model.train(was_training)
    return (beta * diff).view(len(problem.probe_prompts), -1).cpu().numpy().astype(float)


def returned_model(result) -> Any:
    if result.model is None or result.tokenizer is None:
        raise ValueError("PreferenceResult.model and .tokenizer must hold the trained policy: score evaluates the "
                         "implicit reward and the external benchmarks on it")
    return result.model


def external_scores(problem, result) -> dict[str, float]:
    """The problem's external benchmarks (lm_eval_<task>_<metric>, longbench_*) of the returned policy."""
    model = returned_model(result)
    return dict(problem.external_eval(model, result.tokenizer, _device(model)))
