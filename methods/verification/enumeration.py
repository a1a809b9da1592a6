"""Enumeration: exact probabilities by visiting every discrete input (the paper's "enumerate" baseline, MiniACSIncome).

Paper: Boetius et al., ICML 2025, arXiv 2405.17556, the MiniACSIncome comparison: "test every
discrete input value", exact because the inputs are discrete. Its cost is the size of the input
space (the product of the variables' cardinalities), which grows exponentially in the number of
variables; PV's cost does not have to.

Fidelity: faithful (the baseline is fully specified). Skips continuous input spaces and spaces
larger than `max_points`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.verification import (
    VerificationProblem,
    VerificationResult,
    decide,
    exact_probabilities,
    interval,
    one_thread,
)

SWITCHED_OFF = ("a baseline of the paper (exact enumeration of the discrete inputs): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config:
    max_points: int = 100_000_000   # the largest input space enumerated
    chunk: int = 1 << 16            # inputs evaluated per network call

    def __post_init__(self) -> None:
        if self.max_points < 1 or self.chunk < 1:
            raise ValueError("max_points and chunk must be >= 1")


def skip(problem: VerificationProblem, config: Config) -> str | None:
    if not problem.population.discrete:
        return "enumeration needs a discrete input space; this one has continuous variables"
    if problem.population.support_size() > config.max_points:
        return (f"the input space has {problem.population.support_size()} points, "
                f"more than max_points={config.max_points}")
    return None


@method(family="verification", config=Config, skip=skip)
@one_thread
def solve(problem: VerificationProblem, config: Config, ctx: RunContext) -> VerificationResult:
    start = time.perf_counter()
    values = exact_probabilities(problem.network, problem.population, problem.probabilities,
                                 ctx.check_deadline, config.chunk)
    bounds = {name: (v, v) for name, v in values.items()}
    verdict = decide(problem.spec, bounds) if problem.spec is not None else None
    return VerificationResult(verdict, bounds, interval(problem.target, bounds), 1, time.perf_counter() - start)
