"""A CPU-bound toy method for the Ray benchmark: a pure-Python loop of `iterations` steps."""

from dataclasses import dataclass

from bench_toy import Result

from bench.registry import method


@dataclass(frozen=True)
class Config:
    iterations: int = 10_000_000


@method(family="toy", config=Config)
def solve(problem, config: Config, ctx):
    total = 0
    for i in range(config.iterations):
        total += i & 7
    return Result(problem.target + (total % 2) * 0.0)
