"""The CoRE authors' own aligned embeddings, scored by our protocol: the reference row of the real cities.

AIMUrban/CoRE releases, for the pairs bj→xa, cd→bj and cd→xa, the 128-dimensional region embeddings its CoRE
learned for both cities (`save_emb/<source>-<target>/<city>_region_emb.npy`). This method reads them from the problem
(`TwoCityProblem.released`, filled by the task `urban_cities`) and applies the family's transfer protocol, as the
release's `evaluator/evaluator_cross_city.py` does: ridge (α = 1) fitted on the source city's embeddings and
indicators, applied to the target city's; the judge clips negatives and scores MAE, RMSE, R², MAPE. Scored so, the
embeddings give the authors' evaluator's numbers (tests/tasks/urban/test_urban_cities.py keeps theirs, computed once
from their code).

`shuffle`: the null of the real-cities world's positive control. The target's embedding rows are permuted among its
regions, so the embeddings keep their distribution but lose their link to the regions; the source ridge applied to
them must not beat the source-city mean.

Fidelity: not a method we train. The authors' released artefact under their protocol (exact); skipped where the
release has no embeddings for the pair (any other pair, or the synthetic world).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from tasks.urban import TwoCityProblem, TwoCityResult, ridge_transfer

SWITCHED_OFF = ("a reference, not a method we train (the authors' released embeddings scored by our evaluator): "
                "there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    ridge_alpha: float = 1.0     # α of the downstream Ridge (evaluator_cross_city.py: Ridge(alpha=1.0))
    shuffle: bool = False        # the null: target embedding rows permuted among its regions

    def __post_init__(self) -> None:
        if self.ridge_alpha < 0:
            raise ValueError(f"ridge_alpha must be >= 0, got {self.ridge_alpha}")


def skip(problem, config: Config) -> str | None:
    if not isinstance(problem, TwoCityProblem):
        return f"released_core takes TwoCityProblem, not {type(problem).__name__}"
    if problem.released is None:
        return (f"the CoRE release has no embeddings for {'→'.join(problem.names)} (it has bj→xa, cd→bj and cd→xa, "
                "on the task urban_cities)")
    return None


@method(family="urban", config=Config, skip=skip,
        reference="the authors' released CoRE embeddings under their evaluation protocol: the published reference")
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    source, target = problem.released
    if config.shuffle:
        target = target[ctx.rng.permutation(len(target))]
    return TwoCityResult(predictions=ridge_transfer(source, problem.source.labels, target, config.ridge_alpha))
