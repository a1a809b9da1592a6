"""Clone oracle: the Bradley–Terry MLE that counts each clone group once (a positive control of the clones world).

The clones world (tasks/reward_learning/clones.py, docs/papers/rlhf-clones.md) knows which original each clone
duplicates (`ClonesProblem.clone_of`). This method reads it and fits the regularised BT objective of
methods/reward_learning/_bt.py (paper Eq. 2's form) with weights w_a = 1/|G(a)|, G(a) the group of an original and
its clones: every group weighs as one alternative, whatever its number of copies (the original data have no clones,
so there the fit is the standard MLE's, w ≡ 1). It is a clone-robust aggregator by construction: with exact
duplicates the objective over group-constant rewards is the original one plus a constant, so the fit on the originals
does not move at all; approximate clones move it by O(ε). A real dataset does not label its clones, so no paper's
method can do this; the weighted MLE approximates these weights by Voronoi volumes.

Use: the positive control `dedup-oracle-separates-from-mle` of leaderboard/papers/rlhf-clones.yaml. If this oracle
did not stay far below the standard MLE on the same data, the world could not separate a clone-robust aggregator from
a clone-counting one (no heterogeneity for clones to exploit, or clones that change the preferences themselves), and
the paper's claims could not be shown in it.

`shuffle`: the null. Each clone is attributed to an original drawn uniformly at random (ctx.rng) instead of the one it
duplicates, and the groups' weights are built from that attribution: the same number of down-weighted copies, none
of the information about which alternatives are clones.

Fidelity: not a paper's method (a control of our world); reads the generator's clone attribution `clone_of`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._bt import fit_bt
from tasks.reward_learning import ClonesProblem, ClonesResult

SWITCHED_OFF = ("a reference, not a paper's method (reads the generator's clone attribution: the clones world's "
                "positive control): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    lam: float = 0.01        # λ, L2 coefficient (weighted by w), as mle and weighted_mle
    shuffle: bool = False    # the null: clones attributed to random originals

    def __post_init__(self) -> None:
        if not self.lam > 0:
            raise ValueError(f"lam must be > 0, got {self.lam}")


def group_weights(m: int, clone_of: np.ndarray) -> np.ndarray:
    """(m + k,) w = 1/|G| for the originals 0..m−1 followed by their k clones (clone j duplicates clone_of[j])."""
    group = np.concatenate([np.arange(m), np.asarray(clone_of, dtype=int)])
    size = np.bincount(group, minlength=m)
    return 1.0 / size[group]


@method(family="reward_learning", config=Config, accepts=ClonesProblem,
        reference="reads the generator's clone attribution: the world's positive control")
def solve(problem: ClonesProblem, config: Config, ctx: RunContext) -> ClonesResult:
    m, k = len(problem.points), len(problem.clone_of)
    clone_of = ctx.rng.integers(0, m, size=k) if config.shuffle else problem.clone_of
    ones, clone_weights = np.ones(m), group_weights(m, clone_of)
    return ClonesResult(reward=fit_bt(problem.win, ones, config.lam),
                        clone_reward=fit_bt(problem.clone_win, clone_weights, config.lam),
                        weights=ones, clone_weights=clone_weights, lam=config.lam)
