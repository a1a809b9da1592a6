"""Shared machinery of the decoding methods: counters, verification rules on tensors, drafting, the loop.

Speculative sampling (Leviathan et al. 2023; Chen et al. 2023): a draft token x from a proposal q is
accepted with probability min(1, p(x)/q(x)); at the first rejection the target samples from the
residual r(x) ∝ max(0, p(x) − q(x)); after k acceptances it samples one more token from p. Each
emitted token is then exactly p-distributed. Greedy verification keeps draft tokens while they equal
argmax p and then emits the target's own argmax, so the output is the target's greedy decoding.
Every method calls the target once per round on y + candidates, through a KV cache
(`_cache.CachedLM`) that keeps y and drops the rejected part of the previous block, so the call
reads only the last emitted token and the new candidates. The counts a method reports are the forward
passes its caches ran (`target_calls`; `drafter_calls` one per sequence of a batched pass), so a read served
from a cache's stored tail costs nothing: they must equal what the task's hooks observe (tasks/decoding).
The rules below work on whole blocks of rows at once: one uniform per candidate, one comparison, one
residual draw.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch

from methods.decoding._cache import CachedLM
from tasks.decoding import DecodingProblem, DecodingResult


@dataclass
class Counts:
    """Tallies of one solve() call (local state, never shared between runs)."""

    target_calls: int = 0
    drafter_calls: int = 0
    drafted: int = 0
    accepted: int = 0


def cpu_generator(ctx) -> torch.Generator:
    """The run's sampling stream on the CPU, where the verification maths runs (ctx.torch_generator may be CUDA)."""
    return torch.Generator().manual_seed(int(ctx.rng.integers(2**62)))


def softmax(logits: torch.Tensor) -> torch.Tensor:
    """Probabilities in float64 (the verification ratios p/q are taken in double precision)."""
    return torch.softmax(logits.double(), dim=-1)


def sample(dist: torch.Tensor, generator: torch.Generator) -> int:
    return int(torch.multinomial(dist, 1, generator=generator))


def fit(q: torch.Tensor, size: int) -> torch.Tensor:
    """A proposal over the first `size` ids (padded with zeros; models may pad their output layer)."""
    return q[:size] if len(q) >= size else torch.cat([q, q.new_zeros(size - len(q))])


def first_mismatch(candidates: list[int], choices: list[int]) -> int:
    """Index of the first candidate that differs from the target's choice there, len(candidates) if none."""
    return next((i for i, (c, x) in enumerate(zip(candidates, choices)) if c != x), len(candidates))


def greedy_verify(p_rows: torch.Tensor, candidates: list[int]) -> tuple[int, list[int]]:
    """(accepted, emitted): keep candidates equal to argmax p, then the target's own argmax."""
    best = torch.argmax(p_rows, dim=-1).tolist()
    i = first_mismatch(candidates, best)
    return i, candidates[:i] + [best[i]]


def sampling_verify(p_rows: torch.Tensor, q_rows: list[torch.Tensor], candidates: list[int],
                    generator: torch.Generator) -> tuple[int, list[int]]:
    """Speculative sampling with proposals q_rows[i] over the target vocabulary (candidate −1: outside it)."""
    m, size = len(candidates), p_rows.shape[-1]
    if m:
        q = torch.stack([fit(r, size) for r in q_rows[:m]])  # (m, |T|)
        c = torch.tensor(candidates)
        at = torch.arange(m), c.clamp(min=0)
        pc, qc = p_rows[:m][at], q[at]
        ratio = torch.where(qc > 0, pc / torch.where(qc > 0, qc, 1.0), 1.0).masked_fill(c < 0, 0.0)
        rejected = torch.nonzero(torch.rand(m, generator=generator, dtype=torch.float64) >= ratio)
        i = int(rejected[0, 0]) if len(rejected) else m
        if i < m:
            residual = torch.clamp(p_rows[i] - q[i], min=0.0)  # r ∝ max(0, p − q)
            total = float(residual.sum())
            return i, candidates[:i] + [sample(residual / total if total > 0 else p_rows[i], generator)]
    return m, candidates + [sample(p_rows[m], generator)]


def match_verify(p_rows: torch.Tensor, candidates: list[int], generator: torch.Generator) -> tuple[int, list[int]]:
    """Exact-match verification under sampling: the target samples x_i ~ p_i; a candidate survives iff x_i equals it.

    All x_i are drawn at once; those after the first mismatch are discarded, which leaves the law of
    the emitted tokens unchanged (each x_i is drawn from p given the candidates before it)."""
    xs = torch.multinomial(p_rows, 1, generator=generator)[:, 0].tolist()
    i = first_mismatch(candidates, xs)
    return i, candidates[:i] + [xs[i]]


def verify(target: CachedLM, ids: list[int], candidates: list[int], counts: Counts, greedy: bool,
           generator: torch.Generator, q_rows: list[torch.Tensor] | None = None) -> list[int]:
    """One target forward on ids + candidates (a trailing −1, 'none', is not fed), then the verification rule;
    returns the emitted tokens."""
    real = candidates[:-1] if candidates and candidates[-1] < 0 else candidates
    before = target.passes
    logits = target.rows(ids + real, len(ids))  # (len(real) + 1, |T|): p(·|y), p(·|y, t_1), ...
    counts.target_calls += target.passes - before
    if greedy:
        accepted, emitted = greedy_verify(logits, candidates)
    elif q_rows is None:
        accepted, emitted = match_verify(softmax(logits), candidates, generator)
    else:
        accepted, emitted = sampling_verify(softmax(logits), q_rows, candidates, generator)
    counts.drafted += len(candidates)
    counts.accepted += accepted
    return emitted


def draft_tokens(drafter: CachedLM, context: list[int], k: int, greedy: bool, threshold: float, counts: Counts,
                 generator: torch.Generator, eos: int | None, mask: torch.Tensor | None = None
                 ) -> tuple[list[int], list[torch.Tensor]]:
    """Up to k drafter tokens (argmax or sampled from q, restricted to `mask` if given), stopping early when
    the drafter's top probability falls below `threshold` (HF's assistant confidence rule; the low-confidence
    token is kept) or at `eos`. Returns the tokens and the proposal distribution each was drawn from."""
    tokens, dists = [], []
    for _ in range(k):
        before = drafter.sequences
        q = softmax(drafter.next(context + tokens))
        counts.drafter_calls += drafter.sequences - before  # 0 when the cache already held this context's logits
        if mask is not None:  # q'(x) = q(x)·1[x ∈ I] / Σ_{y∈I} q(y)
            q = q * mask
            total = float(q.sum())
            if total <= 0:
                break
            q = q / total
        token = int(torch.argmax(q)) if greedy else sample(q, generator)
        tokens.append(token)
        dists.append(q)
        if float(q.max()) < threshold or token == eos:
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
