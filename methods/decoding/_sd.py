"""Shared machinery of the decoding methods: forward passes with counters, verification rules, the loop.

Speculative sampling (Leviathan et al. 2023; Chen et al. 2023; spec §2): a draft token x from a
proposal q is accepted with probability min(1, p(x)/q(x)); at the first rejection the target
samples from the residual r(x) ∝ max(0, p(x) − q(x)); after k acceptances it samples one more token
from p. Each emitted token is then exactly p-distributed. Greedy verification keeps draft tokens
while they equal argmax p and then emits the target's own argmax, so the output is the target's
greedy decoding. Every method calls the target on y + candidates once per round (`target_calls`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch

from tasks.decoding import LM, DecodingProblem, DecodingResult


@dataclass
class Counts:
    """Tallies of one solve() call (local state, never shared between runs)."""

    target_calls: int = 0
    drafter_calls: int = 0
    drafted: int = 0
    accepted: int = 0


def probs(lm: LM, ids: list[int] | torch.Tensor) -> torch.Tensor:
    """Next-token distributions after every position of `ids` (float64, CPU): (n, |V|)."""
    device = next(lm.model.parameters()).device
    batch = torch.as_tensor(ids, device=device)
    single = batch.dim() == 1
    with torch.no_grad():
        logits = lm.model(batch[None] if single else batch).logits  # (B, n, |V|)
    out = torch.softmax(logits.double().cpu(), dim=-1)
    return out[0] if single else out


def cpu_generator(ctx) -> torch.Generator:
    """The run's sampling stream on the CPU, where the verification maths runs (ctx.torch_generator may be CUDA)."""
    return torch.Generator().manual_seed(int(ctx.rng.integers(2**62)))


def sample(dist: torch.Tensor, generator: torch.Generator) -> int:
    return int(torch.multinomial(dist, 1, generator=generator))


def fit(q: torch.Tensor, size: int) -> torch.Tensor:
    """A proposal over the first `size` ids (padded with zeros; models may pad their output layer)."""
    return q[:size] if len(q) >= size else torch.cat([q, q.new_zeros(size - len(q))])


def greedy_verify(p_rows: torch.Tensor, candidates: list[int]) -> tuple[int, list[int]]:
    """(accepted, emitted): keep candidates equal to argmax p, then the target's own argmax."""
    for i, c in enumerate(candidates):
        best = int(torch.argmax(p_rows[i]))
        if best != c:
            return i, candidates[:i] + [best]
    return len(candidates), candidates + [int(torch.argmax(p_rows[len(candidates)]))]


def sampling_verify(p_rows: torch.Tensor, q_rows: list[torch.Tensor], candidates: list[int],
                    generator: torch.Generator) -> tuple[int, list[int]]:
    """Speculative sampling with proposals q_rows[i] over the target vocabulary (candidate −1: outside it)."""
    for i, c in enumerate(candidates):
        p, q = p_rows[i], fit(q_rows[i], p_rows.shape[-1])
        ratio = 0.0 if c < 0 else float(p[c] / q[c]) if q[c] > 0 else 1.0
        if float(torch.rand((), generator=generator, dtype=torch.float64)) < min(1.0, ratio):
            continue
        residual = torch.clamp(p - q, min=0.0)  # r ∝ max(0, p − q)
        total = float(residual.sum())
        return i, candidates[:i] + [sample(residual / total if total > 0 else p, generator)]
    return len(candidates), candidates + [sample(p_rows[len(candidates)], generator)]


def match_verify(p_rows: torch.Tensor, candidates: list[int], generator: torch.Generator) -> tuple[int, list[int]]:
    """Exact-match verification under sampling: the target samples x_i ~ p_i; a candidate survives iff x_i equals it."""
    for i, c in enumerate(candidates):
        x = sample(p_rows[i], generator)
        if x != c:
            return i, candidates[:i] + [x]
    return len(candidates), candidates + [sample(p_rows[len(candidates)], generator)]


def verify(problem: DecodingProblem, ids: list[int], candidates: list[int], counts: Counts, greedy: bool,
           generator: torch.Generator, q_rows: list[torch.Tensor] | None = None) -> list[int]:
    """One target forward on ids + candidates, then the verification rule; returns the emitted tokens."""
    p_rows = probs(problem.target, ids + candidates)[len(ids) - 1:]  # (m+1, |T|)
    counts.target_calls += 1
    if greedy:
        accepted, emitted = greedy_verify(p_rows, candidates)
    elif q_rows is None:
        accepted, emitted = match_verify(p_rows, candidates, generator)
    else:
        accepted, emitted = sampling_verify(p_rows, q_rows, candidates, generator)
    counts.drafted += len(candidates)
    counts.accepted += accepted
    return emitted


def text_of(lm: LM, ids: list[int]) -> str:
    return lm.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)


def encode(lm: LM, text: str) -> list[int]:
    return list(lm.tokenizer.encode(text, add_special_tokens=False))


def draft_tokens(drafter: LM, context: list[int], k: int, greedy: bool, threshold: float, counts: Counts,
                 generator: torch.Generator, mask: torch.Tensor | None = None) -> tuple[list[int], list[torch.Tensor]]:
    """Up to k drafter tokens (argmax or sampled from q, restricted to `mask` if given), stopping early when
    the drafter's top probability falls below `threshold` (HF's assistant confidence rule; the low-confidence
    token is kept). Returns the tokens and the proposal distribution each was drawn from."""
    tokens, dists = [], []
    for _ in range(k):
        q = probs(drafter, context + tokens)[-1]
        counts.drafter_calls += 1
        if mask is not None:  # q'(x) = q(x)·1[x ∈ I] / Σ_{y∈I} q(y)
            q = torch.where(mask, q, torch.zeros_like(q))
            if float(q.sum()) <= 0:
                break
            q = q / q.sum()
        token = int(torch.argmax(q)) if greedy else sample(q, generator)
        tokens.append(token)
        dists.append(q)
        if float(q.max()) < threshold or token == drafter.tokenizer.eos_token_id:
            break
    return tokens, dists


def decode_all(problem: DecodingProblem, step: Callable[[list[int], int, Counts], list[int]], greedy: bool,
               ctx) -> DecodingResult:
    """Continue every prompt with `step(ids, remaining, counts) -> emitted target tokens` until EOS or the budget."""
    counts, outputs = Counts(), []
    eos, budget = problem.target.tokenizer.eos_token_id, problem.max_new_tokens
    start = time.perf_counter()
    for index in range(len(problem.prompts)):
        prompt = problem.prompt_ids(index)
        ids = list(prompt)
        while len(ids) - len(prompt) < budget and eos not in ids[len(prompt):]:
            ctx.check_deadline()
            emitted = step(ids, budget - (len(ids) - len(prompt)), counts)
            assert emitted, "a round always emits at least one token"
            ids += emitted
        out = ids[len(prompt):]
        if eos in out:
            out = out[: out.index(eos) + 1]
        outputs.append(tuple(out[:budget]))
        ctx.progress((index + 1) / len(problem.prompts))
    return DecodingResult(outputs=tuple(outputs), target_calls=counts.target_calls,
                          drafter_calls=counts.drafter_calls, drafted=counts.drafted, accepted=counts.accepted,
                          seconds=time.perf_counter() - start, greedy=greedy)
