"""Autoregressive decoding with the target alone: one target forward pass per generated token (the baseline).

Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202: the "AR" rows every speedup of the paper
is divided by (hf-bench runs `generate()` without an assistant). Greedy (temperature 0)
takes argmax p(·|y); sampling draws from p(·|y) at temperature 1.

Fidelity: faithful. The target keeps its KV cache: each step reads one new token (the prompt once),
with no per-step work beyond the forward pass and one argmax or multinomial draw, as fast as
transformers' `generate` with its cache (benchmarks/decoding_speedup.py times both).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.decoding._cache import CachedLM
from methods.decoding._sd import Counts, cpu_generator, decode_all, sample, softmax
from tasks.decoding import DecodingProblem, DecodingResult

SMOKE: dict = {}

SWITCHED_OFF = "the paper's baseline (the target alone, the AR rows every speedup divides by): no mechanism to remove"


@dataclass(frozen=True)
class Config:
    do_sample: bool = False   # temperature 1 sampling (True) or greedy, T = 0 (False); the paper runs both

    def __post_init__(self) -> None:
        if not isinstance(self.do_sample, bool):
            raise ValueError(f"do_sample must be a bool, got {self.do_sample!r}")


@method(family="decoding", config=Config, smoke=SMOKE)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, target = cpu_generator(ctx), CachedLM(problem.target.model)

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        before = target.passes
        logits = target.next(ids)  # p(·|y) up to softmax
        counts.target_calls += target.passes - before
        return [sample(softmax(logits), generator) if config.do_sample else int(logits.argmax())]

    return decode_all(problem, step, not config.do_sample, ctx)
