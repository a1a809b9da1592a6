"""Source-city mean: every target region gets the source city's mean indicator (the trivial transfer baseline).

docs/papers/core-urban.md (caution for honest claims): with the released embeddings and
protocol, CoRE's MAE is close to this baseline's (bj→xa population 621.3 vs 626.5), so it must be
on the board. Uses no mobility, no target information.

Fidelity: faithful (a constant predictor; nothing to approximate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from tasks.urban import TwoCityProblem, TwoCityResult

SWITCHED_OFF = ("a baseline (the source city's mean indicator for every target region): there is no mechanism of "
                "the paper to switch off")


@dataclass(frozen=True)
class Config:
    pass


@method(family="urban", config=Config)
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    mean = problem.source.labels.mean(axis=0)                                     # (L,) ȳ_source
    return TwoCityResult(predictions=np.tile(mean, (problem.target.n, 1)))
