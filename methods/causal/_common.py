"""Helpers shared by the causal baselines: reading causal-learn graphs, sort-and-regress, splines.

Sort-and-regress is CausalDisco's `sort_regress` (Reisach, Seiler & Weichwald, "Beware of the Simulated
DAG!", NeurIPS 2021, and "A Scale-Invariant Sorting Criterion...", NeurIPS 2023): order the variables by a
score, then regress each on its predecessors with an adaptive lasso (OLS weights, LassoLarsIC BIC).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.linear_model import LassoLarsIC, LinearRegression
from sklearn.preprocessing import SplineTransformer

from tasks.causal import CausalResult


def from_causallearn(graph: np.ndarray) -> np.ndarray:
    """causal-learn's GeneralGraph matrix -> our adjacency.

    causal-learn writes i → j as G[i, j] = −1, G[j, i] = 1; i — j as −1 both ways; i ↔ j as 1 both
    ways. Directed edges become A[i, j] = 1; undirected and bidirected ones A[i, j] = A[j, i] = 1
    (the undirected CPDAG edge of tasks/causal's score).
    """
    g = np.asarray(graph)
    directed = (g == -1) & (g.T == 1)
    both = ((g == -1) & (g.T == -1)) | ((g == 1) & (g.T == 1))
    return (directed | both).astype(int)


def sort_regress(data: np.ndarray, scores: np.ndarray, runtime_from: float) -> CausalResult:
    """CausalDisco `sort_regress`: increasing score order, adaptive-lasso regression on predecessors."""
    d = data.shape[1]
    order = np.argsort(scores, kind="stable")
    weights = np.zeros((d, d))
    for k in range(1, d):
        cov, target = order[:k], order[k]
        ols = LinearRegression().fit(data[:, cov], data[:, target])
        scale = np.abs(ols.coef_)
        lasso = LassoLarsIC(criterion="bic").fit(data[:, cov] * scale, data[:, target])
        weights[cov, target] = lasso.coef_ * scale
    return CausalResult(adjacency=(weights != 0).astype(int), order=order, runtime_s=time.perf_counter() - runtime_from)


def r2_coefficients(data: np.ndarray) -> np.ndarray:
    """(d,) R² of the linear regression of each variable on all others: 1 − 1/diag(corr⁻¹) (CausalDisco)."""
    return 1.0 - 1.0 / np.diag(np.linalg.inv(np.corrcoef(data.T)))


def spline_bases(data: np.ndarray, n_basis: int) -> list[np.ndarray]:
    """Per column an (n, n_basis − 1) cubic B-spline basis (the constant is left to the intercept)."""
    transformer = SplineTransformer(n_knots=n_basis - 2, degree=3, include_bias=False)
    return [transformer.fit_transform(data[:, [v]]) for v in range(data.shape[1])]


def additive_rss(bases: list[np.ndarray], target: np.ndarray, parents) -> tuple[float, int]:
    """(residual sum of squares, number of coefficients) of the additive spline fit on `parents`."""
    design = np.column_stack([np.ones(len(target))] + [bases[p] for p in parents])
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    resid = target - design @ coef
    return float(resid @ resid), design.shape[1]
