"""A performative method that lies about itself (the harness test of test_claimed_metrics.py registers it by hand).

PCSGD, honest in its iterates, but it declares `declare_factor`·c as its clip threshold (so the scorer would judge
its last iterate against θ_∞ of another c) and reports its iterates at `steps_factor`× the sampler's stamps (so the
rate curve would run over other x). With both factors 1 it is PCSGD.
"""

import dataclasses
from dataclasses import dataclass

from bench.registry import method
from methods.performative import pcsgd
from tasks.performative import PerformativeProblem, PerformativeResult


@dataclass(frozen=True)
class Config:
    T: int = 500
    c: float = 1.0
    declare_factor: float = 10.0  # declared c = declare_factor x the c it clips at
    steps_factor: int = 1         # reported steps = steps_factor x the samples drawn


@method(family="performative", config=Config)
def solve(problem: PerformativeProblem, config: Config, ctx) -> PerformativeResult:
    honest = pcsgd.solve(problem, pcsgd.Config(T=config.T, c=config.c), ctx)
    return dataclasses.replace(honest, declared={"c": config.c * config.declare_factor},
                               steps=honest.steps * config.steps_factor)
