"""The linear algebra of the safety residual space (the authors' src/utils/extract.py).

Per layer ℓ, with base activations X (n, d) and fine-tuned activations Y (n, d) of the same prompts:
    W = argmin ‖X W − Y‖_F          (the code's "matrix" fit, no intercept; np.linalg.lstsq)
    R = X W − X = X (W − I)          (the linear part of the shift applied to the base activations)
    R = U S Vᵀ                       (SVD without centring; rows of Vᵀ are the directions C1, C2, …)
    λ_i = s_i² / (n − 1)             (the component "eigenvalues")
    rank_τ = min{r : Σ_{i≤r} λ_i / Σ λ_i ≥ τ}   (effective rank, τ ∈ {0.4, 0.6, 0.7, 0.8, 0.9})
The sign of a singular vector is arbitrary; `orient` flips it so that the shift moves along +v on
average (Σ R v ≥ 0), which uses no labels (the authors project on −v, the sign LAPACK happened to give).
The SVD (`components`), the effective rank and the probe baseline are the task's (tasks/safety/_analyses.py: the
family's score computes the rank and the probe itself); the methods import them from the family's contract.
"""

from __future__ import annotations

import numpy as np

TAUS = (0.4, 0.6, 0.7, 0.8, 0.9)


def fit_shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(d, d) W minimising ‖X W − Y‖_F (minimum-norm solution when X is rank deficient)."""
    return np.linalg.lstsq(np.asarray(x, np.float64), np.asarray(y, np.float64), rcond=None)[0]


def shift_residual(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, d) R = X W − X, the part of the fine-tuning shift that is linear in the base activations."""
    x = np.asarray(x, np.float64)
    return x @ fit_shift(x, y) - x


def orient(v: np.ndarray, r: np.ndarray) -> np.ndarray:
    """v or −v, whichever the rows of R move along on average (Σ_i R_i·v ≥ 0)."""
    return v if float(np.sum(r @ v)) >= 0 else -v
