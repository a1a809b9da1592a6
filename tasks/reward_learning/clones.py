"""Approximate clones: themed alternatives, Bradley–Terry annotator types, near-duplicates added at distance ε.

Procaccia, Schiffer & Zhang, "Clone-Robust AI Alignment", ICML 2025, arXiv 2501.09254; the CPU
world of docs/papers/rlhf-clones.md, modelled on the paper's "Describe Paris" case
study (themes romance / art / food; clones are "restaurant" answers near the food ones).

World. S = [−1, 1]^d. Three theme centres on the first axis at −⅔, 0, ⅔ (romance, art, food), so
the Voronoi cells of the centres are three equal slabs; `per_theme` alternatives per theme at
centre + N(0, spread²·I). Four annotator types i (population shares α_i) rank the themes with
utilities U_i ∈ {+g, 0, −g}:

    food > romance > art (0.30), romance > art > food (0.40), art > food > romance (0.15),
    food > art > romance (0.15),

and share a Lipschitz term: r_i(x) = U_i[theme(x)] + L·⟨u, x⟩ with u = e_2 (e_1 when d = 1).
With hard preferences (g → ∞) this is exactly our target p(rom ≻ art) = 0.70,
p(rom ≻ food) = 0.40, p(art ≻ food) = 0.55; with g = 4 it is 0.690 / 0.408 / 0.543.
Preferences: p(a ≻ b) = Σ_i α_i σ(r_i(a) − r_i(b)) (a mixture of Bradley–Terry models, which no
single BT reward fits: this is why clones move the MLE). The population-average reward
Σ_i α_i r_i ranks romance > food > art.

Clones: k points x' = x + ε·v (v a uniform random unit vector) next to the alternatives of
`clone_theme`, round-robin; a clone inherits its original's theme (its preferences are the
Lipschitz model's, so they differ from the original's by O(ε)). `comparisons = 0` gives the
population probabilities (the noise-free p_D); K > 0 draws K comparisons per pair, and the
dataset with clones reuses the original dataset's draws on the original pairs (so the two fits
differ only by what the clones add).

Fidelity: reconstructed. The paper's annotator personas (its Table 4), embeddings
(text-embedding-3-small + PCA) and 1000 comparisons are replaced by this synthetic world, whose
theme-level preferences are our design target, not values read from the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.reward_learning import ClonesProblem, sigmoid

THEMES = ("romance", "art", "food")
CENTRES_X = (-2.0 / 3.0, 0.0, 2.0 / 3.0)
# annotator types: share α_i and the theme order (best first)
TYPES = ((0.30, ("food", "romance", "art")), (0.40, ("romance", "art", "food")),
         (0.15, ("art", "food", "romance")), (0.15, ("food", "art", "romance")))

SMALLEST = {"per_theme": 1, "clones": 2}


@dataclass(frozen=True)
class Config:
    per_theme: int = 10          # alternatives per theme (CPU world: 10)
    clones: int = 20             # k, near-duplicates added (plan: 5, 10, 20; 20 triples the food mass)
    distance: float = 1e-3       # ε, distance of each clone from its original (plan: 0.1 … 0.001, 0)
    dim: int = 2                 # d, embedding dimension
    spread: float = 0.05         # std of the alternatives around their theme centre (plan: 0.05)
    lipschitz: float = 0.5       # L, slope of the shared within-theme reward term
    gap: float = 4.0             # g, utility gap between consecutive themes of a type
    comparisons: int = 0         # K comparisons per pair; 0: exact population probabilities
    clone_theme: str = "food"    # which theme's alternatives get the clones (the paper: food → restaurant)

    def __post_init__(self) -> None:
        if self.per_theme < 1 or self.clones < 0 or self.dim < 1 or self.comparisons < 0:
            raise ValueError(f"per_theme >= 1, clones >= 0, dim >= 1 and comparisons >= 0 are required, got "
                             f"{self.per_theme}, {self.clones}, {self.dim}, {self.comparisons}")
        if not 0 <= self.distance <= 0.25 or self.spread < 0 or self.lipschitz < 0 or self.gap <= 0:
            raise ValueError("need 0 <= distance <= 0.25, spread >= 0, lipschitz >= 0, gap > 0")
        if self.clone_theme not in THEMES:
            raise ValueError(f"clone_theme {self.clone_theme!r} unknown; allowed: {', '.join(THEMES)}")


def type_rewards(points: np.ndarray, themes: np.ndarray, config: Config) -> tuple[np.ndarray, np.ndarray]:
    """(α (n_types,), r (n_types, n)): each type's reward r_i(x) = U_i[theme] + L⟨u, x⟩."""
    alpha = np.array([share for share, _ in TYPES])
    utility = np.array([[config.gap * (1 - order.index(t)) for t in THEMES] for _, order in TYPES])  # (T, 3)
    direction = np.zeros(points.shape[1])
    direction[1 if points.shape[1] > 1 else 0] = 1.0
    return alpha, utility[:, themes] + config.lipschitz * (points @ direction)[None, :]


def population_win(alpha: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """p(a ≻ b) = Σ_i α_i σ(r_i(a) − r_i(b)); the diagonal is ½."""
    return np.einsum("i,iab->ab", alpha, sigmoid(rewards[:, :, None] - rewards[:, None, :]))


def sampled_win(p: np.ndarray, k: int, rng: np.random.Generator, base: np.ndarray | None = None) -> np.ndarray:
    """Empirical win fractions of K comparisons per unordered pair; pairs inside `base` keep its draws."""
    n = len(p)
    wins = rng.binomial(k, np.clip(np.triu(p, 1), 0.0, 1.0)) / k
    out = np.triu(wins, 1)
    if base is not None:
        out[: len(base), : len(base)] = np.triu(base, 1)
    out = out + np.tril(1.0 - out.T, -1)
    out[np.diag_indices(n)] = 0.5
    return out


@task(family="reward_learning", config=Config, version=1, problem=ClonesProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> ClonesProblem:
    rng = ctx.rng
    themes = np.repeat(np.arange(len(THEMES)), config.per_theme)
    centres = np.zeros((len(THEMES), config.dim))
    centres[:, 0] = CENTRES_X
    points = np.clip(centres[themes] + config.spread * rng.standard_normal((len(themes), config.dim)), -1.0, 1.0)
    targets = np.flatnonzero(themes == THEMES.index(config.clone_theme))
    clone_of = targets[np.arange(config.clones) % len(targets)]
    v = rng.standard_normal((config.clones, config.dim))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    clone_points = np.vstack([points, np.clip(points[clone_of] + config.distance * v, -1.0, 1.0)])
    clone_themes = np.concatenate([themes, themes[clone_of]])
    alpha, rewards = type_rewards(clone_points, clone_themes, config)
    p_all = population_win(alpha, rewards)
    m = len(points)
    if config.comparisons:
        win = sampled_win(p_all[:m, :m], config.comparisons, rng)
        clone_win = sampled_win(p_all, config.comparisons, rng, base=win)
    else:
        win, clone_win = p_all[:m, :m].copy(), p_all
    return ClonesProblem(points=points, win=win, clone_points=clone_points, clone_win=clone_win,
                         clone_of=clone_of, true_reward=alpha @ rewards[:, :m], themes=themes,
                         theme_names=THEMES, box=(-1.0, 1.0))
