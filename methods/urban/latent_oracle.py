"""Latent oracle: the positive control of the two-city world (an upper bound no paper method can reach).

Ridge regression (α = 1, as `ridge_transfer`) fitted on the source city's *true* region-function mixtures π
and labels, applied to the target city's π. The synthetic world maps π to the indicators the same way in both
cities (up to the target's label scale), so a perfectly aligned representation transfers; this method is that
representation, read off the generator. If it cannot beat the source-mean predictor, the world has no
transferable structure and no embedding method's "beats the source mean" can be measured in it: CoRE's claims
are then inconclusive (leaderboard/papers/core-urban.yaml, `controls:`).

`shuffle`: the null. The target's π rows are permuted among its regions, so the representation keeps its
distribution but loses its alignment with the regions; it must not beat the source mean.

Fidelity: not a paper's method (a control of our world); needs the synthetic world's π (`City.latent`), so it
is skipped on the released city data.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.urban import TwoCityProblem, TwoCityResult, ridge_transfer

SWITCHED_OFF = ("a reference, not a paper's method (reads the synthetic world's true region mixtures: the world's "
                "positive control): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    ridge_alpha: float = 1.0     # α of the downstream Ridge (the protocol's)
    shuffle: bool = False        # the null: target π rows permuted among its regions

    def __post_init__(self) -> None:
        if self.ridge_alpha < 0:
            raise ValueError(f"ridge_alpha must be >= 0, got {self.ridge_alpha}")


def skip(problem, config: Config) -> str | None:
    if not isinstance(problem, TwoCityProblem):
        return f"latent_oracle takes TwoCityProblem, not {type(problem).__name__}"
    if problem.source.latent is None or problem.target.latent is None:
        return "latent_oracle needs the synthetic world's π (the released city data has none)"
    return None


@method(family="urban", config=Config, skip=skip,
        reference="reads the generator's true region-function mixtures: the world's positive control")
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    target = problem.target.latent
    if config.shuffle:
        target = target[ctx.rng.permutation(len(target))]
    return TwoCityResult(predictions=ridge_transfer(problem.source.latent, problem.source.labels, target,
                                                    config.ridge_alpha))
