"""Knowledge-guided transfer under Wasserstein DRO: a small target sample plus source knowledge.

Contract of the family (Wang, Wang, Liu & Si, "Knowledge-Guided Wasserstein Distributionally
Robust Optimization", ICML 2025, arXiv 2502.08146, §5 simulations):
a task builds a `DROProblem` holding the target training sample, a validation sample of the same
size (for choosing the radius δ and other tuning values), a large test sample, the source
knowledge Θ (the source coefficient vectors, one column each), the raw source samples (for the
Trans-* baselines, which need data rather than coefficients) and the ground truth: the target's
true coefficient vector β. A method returns a `DROResult` with its estimate β̂.

`score` is the only judge: test accuracy (classification designs) or out-of-sample R²
(regression designs) on the task's test sample, and ‖β̂ − β‖₂ against the true β.
No design has an intercept (x is centred by construction), so no method fits one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.spec import Metric

KINDS = ("classification", "regression")


@dataclass(frozen=True, eq=False)
class DROProblem:
    kind: str                      # "classification" (y ∈ {±1}, logistic model) or "regression"
    penalty_norm: int              # p of the design: 1 (sparse / lasso-type) or 2 (ridge-type)
    x_train: np.ndarray            # (N, d) target training covariates
    y_train: np.ndarray            # (N,) target training responses
    x_val: np.ndarray              # (N, d) validation covariates (same size as training, as in the paper)
    y_val: np.ndarray              # (N,)
    x_test: np.ndarray             # (n_test, d) independent test sample from the target model
    y_test: np.ndarray             # (n_test,)
    theta: np.ndarray              # (d, M) source knowledge Θ = [θ_1 … θ_M]
    x_source: tuple[np.ndarray, ...]  # M arrays (n_S, d): raw source covariates (Trans-* baselines)
    y_source: tuple[np.ndarray, ...]  # M arrays (n_S,): raw source responses
    beta: np.ndarray               # (d,) ground truth: the target's true coefficients β

    @property
    def dim(self) -> int:
        return int(self.x_train.shape[1])

    @property
    def num_sources(self) -> int:
        return int(self.theta.shape[1])


@dataclass(frozen=True, eq=False)
class DROResult:
    coef: np.ndarray               # (d,) the estimate β̂
    tuning: float | None = None    # the tuning value the method selected (δ, a penalty level); None if none


METRICS = {
    "coef_error": Metric(False, "", True, "‖β̂ − β‖₂, distance to the target's true coefficients", bounds=(0.0, None)),
    "test_accuracy": Metric(True, "", False, "accuracy of sign(xᵀβ̂) on the test sample (classification)",
                            bounds=(0.0, 1.0)),
    "test_r2": Metric(True, "", False, "out-of-sample R² = 1 − Σ(y − xᵀβ̂)²/Σ(y − ȳ)² (regression)",
                      bounds=(None, 1.0)),
    "oracle_score": Metric(True, "", False, "test accuracy or R² of the true β (the ceiling of the instance)"),
}


def accuracy(x: np.ndarray, y: np.ndarray, coef: np.ndarray) -> float:
    """Fraction of y ∈ {±1} predicted by sign(xᵀβ̂) (a zero score counts as +1)."""
    pred = np.where(x @ coef >= 0, 1.0, -1.0)
    return float(np.mean(pred == y))


def r_squared(x: np.ndarray, y: np.ndarray, coef: np.ndarray) -> float:
    resid = y - x @ coef
    return float(1.0 - resid @ resid / np.sum((y - y.mean()) ** 2))


def score(problem: DROProblem, result: DROResult) -> dict[str, float]:
    coef = np.asarray(result.coef, dtype=float)
    if coef.shape != problem.beta.shape:
        raise ValueError(f"DROResult.coef has shape {coef.shape}; expected {problem.beta.shape}")
    scores = {"coef_error": float(np.linalg.norm(coef - problem.beta))}
    if problem.kind == "classification":
        scores["test_accuracy"] = accuracy(problem.x_test, problem.y_test, coef)
        scores["oracle_score"] = accuracy(problem.x_test, problem.y_test, problem.beta)
    else:
        scores["test_r2"] = r_squared(problem.x_test, problem.y_test, coef)
        scores["oracle_score"] = r_squared(problem.x_test, problem.y_test, problem.beta)
    return scores
