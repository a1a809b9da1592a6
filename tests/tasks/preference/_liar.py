"""A preference method that misdeclares its β (test_claimed_metrics.py registers it by hand).

DPO on the bandit world, honest in its training and its table, but its result declares β · `factor`: the β that
scales every implicit reward score reads (slope1_error, reward_pearson, slope1_error_at_kl).
"""

import dataclasses
from dataclasses import dataclass

from bench.registry import method
from methods.preference import dpo
from tasks.preference import BanditPreferenceProblem, BanditPreferenceResult


@dataclass(frozen=True)
class Config:
    beta: float = 0.1           # the β it trains with (the declaration the harness checks)
    factor: float = 2.0         # declared β = factor · beta
    bandit_steps: int = 50


@method(family="preference", config=Config, accepts=BanditPreferenceProblem)
def solve(problem: BanditPreferenceProblem, config: Config, ctx) -> BanditPreferenceResult:
    honest = dpo.solve(problem, dpo.Config(beta=config.beta, bandit_steps=config.bandit_steps), ctx)
    return dataclasses.replace(honest, beta=config.beta * config.factor)
