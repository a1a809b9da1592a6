"""No erasure: the original model unchanged (the reference every erasure method is compared with).

Fidelity: faithful (the identity edit).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.erasure import RESOURCES, ErasureProblem, ErasureResult


@dataclass(frozen=True)
class Config:
    pass


@method(family="erasure", config=Config, hardware=("cpu", "cuda"), resources=RESOURCES)
def solve(problem: ErasureProblem, config: Config, ctx: RunContext) -> ErasureResult:
    return ErasureResult(transformer=problem.transformer)
