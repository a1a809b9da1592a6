"""Shared-latent oracle: the positive control of the paired-retrieval world (the generator's latent, decoded).

The digits world decides relevance by a semantic key, digit × stroke × slant × width (tasks/multimodal/
paired_retrieval.py). Scoring the test pairs by their true keys would retrieve perfectly by construction, so this
oracle reads the truth only on the training pairs: their keys, which the alignment methods do not use. Per
modality and per key factor it fits an L2-regularised multinomial logistic regression (C = 0.1) on the frozen
features of the training pairs (image: its 9 tokens concatenated; text: the mean of its real tokens; both
standardised), and embeds every test item by its decoded factor distributions (the fitted probes are returned,
`DecodedLatent`, and the judge runs them on the test pairs). Image i and text j score the probability that their
keys agree,

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
from typing import Callable

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from bench.context import RunContext
from bench.registry import method
from tasks.multimodal import PairedProblem, RetrievalResult
from tasks.multimodal.paired_retrieval import NAMES, SLANT, STROKE, WIDTH

FACTORS = (len(NAMES), len(STROKE), len(SLANT), len(WIDTH))   # key = ((digit·3 + stroke)·3 + slant)·2 + width

SWITCHED_OFF = "an oracle (decodes the generator's shared latent keys), the world's positive control: none to remove"


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


def _flat(tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return tokens.reshape(len(tokens), -1)


@dataclass(frozen=True, eq=False)
class Probes:
    """One modality's decoder of the key: standardised features → p(value | features) per factor."""

    features: Callable[[np.ndarray, np.ndarray], np.ndarray]   # (tokens, mask) → (n, F)
    scaler: StandardScaler                                      # a statistic of the training features, not trained
    classifiers: tuple[LogisticRegression, ...]                 # one per factor (digit, stroke, slant, width)

    @classmethod
    def fit(cls, features: Callable[[np.ndarray, np.ndarray], np.ndarray], tokens: np.ndarray, mask: np.ndarray,
            factors: list[np.ndarray], config: Config) -> "Probes":
        train = features(tokens, mask)
        scaler = StandardScaler().fit(train)
        x = scaler.transform(train)
        return cls(features, scaler, tuple(LogisticRegression(C=config.C, max_iter=config.max_iter).fit(x, labels)
                                           for labels in factors))

    def decode(self, tokens: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
        """Per factor, the (n, radix) distribution of its value."""
        x = self.scaler.transform(self.features(tokens, mask))
        out = []
        for clf, radix in zip(self.classifiers, FACTORS):
            p = np.zeros((len(x), radix))
            p[:, clf.classes_] = clf.predict_proba(x)
            out.append(p)
        return out


@dataclass(frozen=True, eq=False)
class DecodedLatent:
    """The oracle behind the family's interface (tasks.multimodal.Aligner), run by the judge: sim[i, j] is the
    probability that image i's and text j's decoded keys agree. Under `shuffle` (the null), the decoded latents of the
    images are permuted among the images scored (a fixed permutation of the test images, drawn in solve)."""

    image: Probes
    text: Probes
    shuffle: np.ndarray | None = None   # the null's permutation of the test images

    def parameters(self) -> list[np.ndarray]:
        """The probes' weights and intercepts (the scalers' means and scales are statistics of the data)."""
        classifiers = (*self.image.classifiers, *self.text.classifiers)
        return [array for clf in classifiers for array in (clf.coef_, clf.intercept_)]

    def _images(self, images: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
        decoded = self.image.decode(images, mask)
        if self.shuffle is None:
            return decoded
        if len(self.shuffle) != len(images):
            raise ValueError(f"the null permutes the {len(self.shuffle)} test images; got {len(images)} images")
        return [p[self.shuffle] for p in decoded]

    def similarity(self, direction: str, queries: np.ndarray, query_mask: np.ndarray, candidates: np.ndarray,
                   candidate_mask: np.ndarray) -> np.ndarray:
        """Π_f Σ_v p_f(v | image) p_f(v | text); text→image is the transpose of image→text."""
        sides = ((queries, query_mask), (candidates, candidate_mask))
        images, texts = sides if direction == "i2t" else sides[::-1]
        sim = np.ones((len(images[0]), len(texts[0])))
        for p_img, p_txt in zip(self._images(*images), self.text.decode(*texts)):
            sim *= p_img @ p_txt.T
        return sim if direction == "i2t" else sim.T.copy()

    def class_similarity(self, images: np.ndarray, image_mask: np.ndarray, prompts: np.ndarray,
                         prompt_mask: np.ndarray) -> np.ndarray:
        """Σ_v p_digit(v | image) p_digit(v | prompt): the prompts name the digit only."""
        return self._images(images, image_mask)[0] @ self.text.decode(prompts, prompt_mask)[0].T


@method(family="multimodal", config=Config,
        reference="decodes the generator's shared latent keys (probes fitted on the training pairs): a control")
def solve(problem: PairedProblem, config: Config, ctx: RunContext) -> RetrievalResult:
    factors = key_factors(problem.train_keys)
    image_mask = np.ones(problem.train_image.shape[:2], bool)
    model = DecodedLatent(image=Probes.fit(_flat, problem.train_image, image_mask, factors, config),
                          text=Probes.fit(_pooled, problem.train_text, problem.train_text_mask, factors, config),
                          shuffle=ctx.rng.permutation(len(problem.test_image)) if config.shuffle else None)
    return RetrievalResult(model, trainable_params=int(sum(p.size for p in model.parameters())))
