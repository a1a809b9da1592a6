"""Shared-latent oracle: the positive control of the paired-retrieval world (the generator's latent, decoded).

The digits world decides relevance by a semantic key, digit × stroke × slant × width (tasks/multimodal/
paired_retrieval.py). Scoring the test pairs by their true keys would retrieve perfectly by construction, so this
oracle reads the truth only on the training pairs: their keys, which the alignment methods do not use. Per
modality and per key factor it fits an L2-regularised multinomial logistic regression (C = 0.1) on the frozen
features of the training pairs (image: its 9 tokens concatenated; text: the mean of its real tokens; both
standardised), and embeds every test item by its decoded factor distributions. Image i and text j score the
probability that their keys agree,

    sim[i, j] = Π_f Σ_v p_f(v | image i) · p_f(v | text j),

and a class prompt scores Σ_v p_digit(v | image) · p_digit(v | prompt). This measures how much of the shared latent
the frozen encoders carry (a reference, not a strict upper bound: a better decoder could do more): if it cannot
retrieve at the claims' bars, or above the best baseline, the world gives an alignment learned on these features no
room to show M3-JEPA's effect, and the gated claims read inconclusive (leaderboard/papers/m3-jepa.yaml, `controls:`;
docs/papers/m3-jepa.md).

`shuffle`: the null. The test images' decoded latents are permuted among the test images, so the embedding keeps its
distribution but loses its pairing with the images; retrieval and zero-shot accuracy must fall to chance.

Fidelity: not a paper's method (a control of our world); needs the training pairs' semantic keys
(`PairedProblem.train_keys`) and the key's factor structure (the digits world's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from bench.context import RunContext
from bench.registry import method
from tasks.multimodal import PairedProblem, RetrievalResult
from tasks.multimodal.paired_retrieval import NAMES, SLANT, STROKE, WIDTH

FACTORS = (len(NAMES), len(STROKE), len(SLANT), len(WIDTH))   # key = ((digit·3 + stroke)·3 + slant)·2 + width


@dataclass(frozen=True)
class Config:
    C: float = 0.1               # inverse L2 strength of the logistic probes (sklearn's C)
    max_iter: int = 3000         # lbfgs iterations per probe
    shuffle: bool = False        # the null: the test images' decoded latents permuted among the test images

    def __post_init__(self) -> None:
        if not self.C > 0 or self.max_iter < 1:
            raise ValueError(f"need C > 0 and max_iter >= 1, got C={self.C}, max_iter={self.max_iter}")


def key_factors(keys: np.ndarray) -> list[np.ndarray]:
    """The semantic key's factors (digit, stroke, slant, width), inverting paired_retrieval.semantic_keys."""
    rest, out = np.asarray(keys, dtype=int), []
    for radix in reversed(FACTORS):
        out.append(rest % radix)
        rest = rest // radix
    return out[::-1]


def _pooled(tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask.astype(float)
    return (tokens * m[..., None]).sum(1) / np.clip(m.sum(1, keepdims=True), 1.0, None)


def _probes(train: np.ndarray, factors: list[np.ndarray], queries: list[np.ndarray], config: Config):
    """Per factor, p(value | features) for each array of `queries` (one (n_q, radix) matrix per factor and query)."""
    scaler = StandardScaler().fit(train)
    x = scaler.transform(train)
    out, params = [[] for _ in queries], 0
    for labels, radix in zip(factors, FACTORS):
        clf = LogisticRegression(C=config.C, max_iter=config.max_iter).fit(x, labels)
        params += clf.coef_.size + clf.intercept_.size
        for k, q in enumerate(queries):
            p = np.zeros((len(q), radix))
            p[:, clf.classes_] = clf.predict_proba(scaler.transform(q))
            out[k].append(p)
    return out, params


@method(family="multimodal", config=Config,
        reference="decodes the generator's shared latent keys (probes fitted on the training pairs): a control")
def solve(problem: PairedProblem, config: Config, ctx: RunContext) -> RetrievalResult:
    factors = key_factors(problem.train_keys)
    flat = lambda t: t.reshape(len(t), -1)  # noqa: E731
    (test_img,), img_params = _probes(flat(problem.train_image), factors, [flat(problem.test_image)], config)
    (test_txt, prompts), txt_params = _probes(
        _pooled(problem.train_text, problem.train_text_mask), factors,
        [_pooled(problem.test_text, problem.test_text_mask), _pooled(problem.class_text, problem.class_text_mask)],
        config)
    if config.shuffle:
        perm = ctx.rng.permutation(len(problem.test_image))
        test_img = [p[perm] for p in test_img]
    sim = np.ones((len(problem.test_image), len(problem.test_text)))
    for p_img, p_txt in zip(test_img, test_txt):
        sim *= p_img @ p_txt.T
    return RetrievalResult(sim_i2t=sim, sim_t2i=sim.T.copy(), class_sim=test_img[0] @ prompts[0].T,
                           trainable_params=int(img_params + txt_params))
