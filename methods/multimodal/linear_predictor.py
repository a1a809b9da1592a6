"""Linear JEPA predictor: a closed-form ridge regression from one modality's embedding to the other's.

The simplest predictor in M3-JEPA's framework (Lei et al., ICML 2025, arXiv 2409.05929;
docs/papers/m3-jepa.md): no experts, no gate, no contrastive loss. Per direction d = (src → tgt),
on the mean-pooled frozen features x (source) and y (target) of the n training pairs,

    (W_d, b_d) = argmin_{W, b} (1/n) Σ_i ‖x_i W + b − y_i‖² + λ ‖W‖²_F
               = ((X − x̄)ᵀ(X − x̄) + nλ I)⁻¹ (X − x̄)ᵀ(Y − ȳ),  b_d = ȳ − x̄ W_d

i.e. the prediction ("regularisation") loss alone with a squared error in place of SmoothL1 (the two
agree for residuals below SmoothL1's β = 1), solved exactly. Retrieval scores cos(ŷ − ȳ, y − ȳ):
the prediction against each candidate, both centred by the training mean of the target modality
(without it the shared mean of all captions dominates the cosine). Zero-shot classification scores
the image→text prediction against the encoded class prompts the same way. The fitted predictors are
returned (`Ridge`: W_d and b_d are its parameters, the centres statistics) and the judge runs them.

Fidelity: approximate (a baseline of this platform, standing for the paper's "MLP predictor"
ablation at its simplest: linear instead of an MLP, least squares instead of SmoothL1 + InfoNCE).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from tasks.multimodal import PairedProblem, RetrievalResult

SWITCHED_OFF = "a baseline of the paper (the simplest JEPA predictor, ridge regression): no mechanism to remove"


@dataclass(frozen=True)
class Config:
    ridge: float = 1e-2     # λ, L2 penalty on W (per pair: the normal equations use nλ)

    def __post_init__(self) -> None:
        if not self.ridge >= 0:
            raise ValueError(f"ridge must be >= 0, got {self.ridge}")


def pooled(tokens: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """mean over the real tokens: (n, T, D) → (n, D)."""
    m = np.ones(tokens.shape[:2]) if mask is None else mask.astype(float)
    return (tokens * m[..., None]).sum(1) / np.clip(m.sum(1, keepdims=True), 1.0, None)


def fit_ridge(x: np.ndarray, y: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """(W (D_x, D_y), b (D_y,)) minimising (1/n)‖XW + b − Y‖² + λ‖W‖²."""
    x_mean, y_mean = x.mean(0), y.mean(0)
    xc, yc = x - x_mean, y - y_mean
    gram = xc.T @ xc + len(x) * ridge * np.eye(x.shape[1])
    w = np.linalg.lstsq(gram, xc.T @ yc, rcond=None)[0]   # lstsq: also exact when λ = 0 and X is rank-deficient
    return w, y_mean - x_mean @ w


def centred_cosine(pred: np.ndarray, candidates: np.ndarray, centre: np.ndarray) -> np.ndarray:
    a, b = pred - centre, candidates - centre
    a = a / np.clip(np.linalg.norm(a, axis=1, keepdims=True), 1e-12, None)
    b = b / np.clip(np.linalg.norm(b, axis=1, keepdims=True), 1e-12, None)
    return a @ b.T


@dataclass(frozen=True, eq=False)
class Ridge:
    """The fitted predictors behind the family's interface (tasks.multimodal.Aligner), run by the judge.

    Per direction: (W_d, b_d), the trained parameters, and the target modality's training mean ȳ, the centre of the
    cosine (a statistic of the data, like a norm's running mean: not counted as a parameter).
    """

    weights: dict[str, tuple[np.ndarray, np.ndarray]]   # direction -> (W_d, b_d)
    centres: dict[str, np.ndarray]                       # direction -> ȳ of its target modality

    def parameters(self) -> list[np.ndarray]:
        return [array for pair in self.weights.values() for array in pair]

    def similarity(self, direction: str, queries: np.ndarray, query_mask: np.ndarray, candidates: np.ndarray,
                   candidate_mask: np.ndarray) -> np.ndarray:
        """cos(ŷ − ȳ, y − ȳ) of each query's prediction against each candidate."""
        w, b = self.weights[direction]
        return centred_cosine(pooled(queries, query_mask) @ w + b, pooled(candidates, candidate_mask),
                              self.centres[direction])

    def class_similarity(self, images: np.ndarray, image_mask: np.ndarray, prompts: np.ndarray,
                         prompt_mask: np.ndarray) -> np.ndarray:
        """The image→text prediction against the encoded class prompts."""
        return self.similarity("i2t", images, image_mask, prompts, prompt_mask)


@method(family="multimodal", config=Config)
def solve(problem: PairedProblem, config: Config, ctx: RunContext) -> RetrievalResult:
    img, txt = pooled(problem.train_image), pooled(problem.train_text, problem.train_text_mask)
    model = Ridge(weights={"i2t": fit_ridge(img, txt, config.ridge), "t2i": fit_ridge(txt, img, config.ridge)},
                  centres={"i2t": txt.mean(0), "t2i": img.mean(0)})
    return RetrievalResult(model, trainable_params=sum(p.size for p in model.parameters()))
