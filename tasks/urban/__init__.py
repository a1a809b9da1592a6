"""Cross-city region embedding: predict a target city's socioeconomic indicators from a labelled source city.

Chen et al., "Cross-City Latent Space Alignment for Consistency Region Embedding" (CoRE), ICML 2025
(OpenReview u5yUsOm7qv; code AIMUrban/CoRE; docs/papers/core-urban.md).

Contract. A `TwoCityProblem` holds two cities: for each, the region-to-region origin–destination
flows (the `region_od_flow_*` matrix), the mobility graph's edge weights (the `.mob` file), region
attributes (synthetic: points-of-interest counts per category; real data: the `.geo` attribute
columns) and the indicators (population, GDP, CO2). The target city's indicators are for scoring
only: the protocol is zero-shot on the target. A method returns one prediction per target region
and indicator (`TwoCityResult`).

Scoring, as the released evaluator (`evaluator/evaluator_cross_city.py`): negative predictions are
clipped to 0, then per indicator

    MAE = mean |y − ŷ|,  RMSE = sqrt(mean (y − ŷ)²),  R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)²,
    MAPE = mean over the targets y ≠ 0 of |y − ŷ| / |y|

(R² uses the target city's own mean ȳ, so predicting the source city's mean gives R² ≤ 0). The
family's metrics `mae`, `rmse`, `r2`, `mape` are the means over the indicators; `mae` is primary.

`ridge_transfer` is the shared downstream protocol every embedding method uses: ridge regression
(α = 1, with intercept, as sklearn's `Ridge(alpha=1.0)`) fitted on the source embeddings and
labels, applied unchanged to the target embeddings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.spec import Metric

INDICATORS = ("population", "gdp", "co2")  # the released data's label files, in this order


@dataclass(frozen=True, eq=False)
class City:
    od: np.ndarray          # (n, n) origin–destination flows M_ij ≥ 0 (region_od_flow_*.npy)
    graph: np.ndarray       # (n, n) mobility-graph edge weights, 0 = no edge (.mob; no self loops)
    features: np.ndarray    # (n, p) region attributes: POI counts (synthetic) or .geo attributes (real)
    labels: np.ndarray      # (n, len(INDICATORS)) socioeconomic indicators
    latent: np.ndarray | None = None  # (n, K) the synthetic world's region-function mixtures π (positive controls
                                      # only: no method of the papers reads them); None on the released data

    def __post_init__(self) -> None:
        n = len(self.od)
        if self.od.shape != (n, n) or self.graph.shape != (n, n):
            raise ValueError(f"od and graph must be square (n, n); got {self.od.shape} and {self.graph.shape}")
        if len(self.features) != n or self.labels.shape != (n, len(INDICATORS)):
            raise ValueError(f"features need n = {n} rows and labels shape ({n}, {len(INDICATORS)}); "
                             f"got {self.features.shape} and {self.labels.shape}")
        if np.any(self.od < 0) or np.any(self.graph < 0):
            raise ValueError("od flows and graph weights must be non-negative")

    @property
    def n(self) -> int:
        return len(self.od)


@dataclass(frozen=True, eq=False)
class TwoCityProblem:
    source: City             # labels available to methods
    target: City             # labels for scoring only
    names: tuple[str, str]   # (source, target) city names, e.g. ("bj", "xa")
    released: tuple[np.ndarray, np.ndarray] | None = None  # the authors' aligned (source, target) embeddings for this
                                                           # pair, where their release has them (reference only)


@dataclass(frozen=True, eq=False)
class TwoCityResult:
    predictions: np.ndarray  # (n_target, len(INDICATORS)) predicted target indicators


def _metric_set(name: str, higher: bool, what: str) -> dict[str, Metric]:
    bounds = (None, 1.0) if name == "r2" else (0.0, None)  # R² ≤ 1; errors ≥ 0
    out = {name: Metric(higher, "", name == "mae",
                        f"{what}, mean over the indicators (negative predictions clipped to 0)", bounds)}
    out.update({f"{name}_{ind}": Metric(higher, "", False, f"{what} of {ind} on the target city", bounds)
                for ind in INDICATORS})
    return out


METRICS = {
    **_metric_set("mae", False, "mean absolute error"),
    **_metric_set("rmse", False, "root mean squared error"),
    **_metric_set("r2", True, "coefficient of determination R² (target city's own mean as reference)"),
    **_metric_set("mape", False, "mean absolute percentage error over the targets ≠ 0 (as a fraction)"),
}


def regression_metrics(truth: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """MAE, RMSE, R², MAPE of one indicator after clipping negative predictions to 0 (released evaluator)."""
    y, p = np.asarray(truth, float), np.clip(np.asarray(pred, float), 0.0, None)
    err = y - p
    sst = float(np.sum((y - y.mean()) ** 2))
    nonzero = y != 0
    return {
        "mae": float(np.mean(np.abs(err))),
        "rmse": float(np.sqrt(np.mean(err ** 2))),
        "r2": 1.0 - float(np.sum(err ** 2)) / sst if sst > 0 else float("nan"),
        "mape": float(np.mean(np.abs(err[nonzero]) / np.abs(y[nonzero]))) if nonzero.any() else float("nan"),
    }


def score(problem: TwoCityProblem, result: TwoCityResult) -> dict[str, float]:
    if not isinstance(problem, TwoCityProblem):
        raise TypeError(f"not an urban problem: {type(problem).__name__}")
    pred = np.asarray(result.predictions, float)
    if pred.shape != problem.target.labels.shape:
        raise ValueError(f"predictions must have shape {problem.target.labels.shape}, got {pred.shape}")
    if not np.all(np.isfinite(pred)):
        raise ValueError("predictions must be finite")
    scores: dict[str, float] = {}
    for k, ind in enumerate(INDICATORS):
        for name, value in regression_metrics(problem.target.labels[:, k], pred[:, k]).items():
            scores[f"{name}_{ind}"] = value
    for name in ("mae", "rmse", "r2", "mape"):
        values = [scores[f"{name}_{ind}"] for ind in INDICATORS]
        scores[name] = float(np.mean(values))
    return {k: v for k, v in scores.items() if np.isfinite(v)}


def ridge_transfer(source_emb: np.ndarray, source_labels: np.ndarray, target_emb: np.ndarray,
                   alpha: float = 1.0) -> np.ndarray:
    """sklearn `Ridge(alpha)` with intercept fitted on the source city, applied to the target city.

    w = (X̃ᵀX̃ + αI)⁻¹ X̃ᵀỸ on the centred source data X̃, Ỹ; b = ȳ − x̄ᵀw; ŷ_target = X_t w + b.
    """
    x, y, xt = (np.asarray(a, float) for a in (source_emb, source_labels, target_emb))
    mx, my = x.mean(0), y.mean(0)
    xc = x - mx
    w = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ (y - my))  # (d, L)
    return xt @ w + (my - mx @ w)
