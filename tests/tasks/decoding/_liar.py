"""A decoding method that lies about its cost (the harness test of test_observed_costs.py registers it by hand).

Standard speculative decoding, honest in everything but its report: it scales its target calls by `factor`.
"""

import dataclasses
from dataclasses import dataclass

from bench.registry import method
from methods.decoding import speculative
from tasks.decoding import DecodingProblem, DecodingResult


@dataclass(frozen=True)
class Config:
    factor: float = 0.5  # reported target calls = factor x the calls made


@method(family="decoding", config=Config)
def solve(problem: DecodingProblem, config: Config, ctx) -> DecodingResult:
    honest = speculative.solve(problem, speculative.Config(num_assistant_tokens=4), ctx)
    return dataclasses.replace(honest, target_calls=int(honest.target_calls * config.factor))
