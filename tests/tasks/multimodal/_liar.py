"""A multimodal method that lies about itself (the harness test of test_claimed_metrics.py registers it by hand).

M3-JEPA at its smoke settings, honest in everything but its report: it scales its trainable-parameter count by
`factor` and, with `flat_gate`, reports a uniform expert usage (no direction specialisation, every expert shared).
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

from bench.registry import method
from methods.multimodal import m3_jepa
from tasks.multimodal import PairedProblem, RetrievalResult


@dataclass(frozen=True)
class Config:
    factor: float = 0.5      # reported trainable parameters = factor x the model's
    flat_gate: bool = False  # report every expert used by every token stream alike


@method(family="multimodal", config=Config)
def solve(problem: PairedProblem, config: Config, ctx) -> RetrievalResult:
    honest = m3_jepa.solve(problem, m3_jepa.Config(**m3_jepa.SMOKE), ctx)
    usage = np.full_like(honest.expert_usage, 1 / honest.expert_usage.shape[-1]) if config.flat_gate else None
    return dataclasses.replace(honest, trainable_params=int(honest.trainable_params * config.factor),
                               expert_usage=honest.expert_usage if usage is None else usage)
