"""No erasure: the original model unchanged (the reference every erasure method is compared with).

Fidelity: faithful (the identity edit).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.erasure import RESOURCES, ErasureProblem, ErasureResult

SWITCHED_OFF = "the reference (the original model unchanged): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    pass


@method(family="erasure", config=Config, hardware=("cpu", "cuda"), resources=RESOURCES)
def solve(problem: ErasureProblem, config: Config, ctx: RunContext) -> ErasureResult:
    return ErasureResult(transformer=problem.transformer)
