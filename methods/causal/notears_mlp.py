"""NOTEARS-MLP (Zheng, Dan, Aragam, Ravikumar & Xing, AISTATS 2020): continuous DAG learning with MLPs.

One MLP per variable, x̂_j = MLP_j(x); the first layer is split into non-negative parts W⁺ − W⁻ with
bounds that exclude x_j from its own MLP. The adjacency is A_ij = ‖first-layer weights from x_i into
MLP_j‖₂ and acyclicity h(A∘A) = tr(exp(A∘A)) − d = 0 is enforced by the augmented Lagrangian

    min  1/(2n)‖X̂ − X‖² + ρ/2·h² + α·h + λ₂/2·‖W‖² + λ₁·Σ(W⁺ + W⁻)

with L-BFGS-B (bounds) for each primal step, ρ ×10 until h drops below h/4, then α += ρh; stop when
h ≤ h_tol or ρ ≥ ρ_max; finally A_ij < w_threshold is cut. A port of the original `notears_nonlinear.py`
with gcastle's `NotearsNonlinear` defaults (hidden (10, 1), λ₁ = λ₂ = 0.01, w_threshold 0.3), as the GENE
paper runs it (Table 1, Fig. 4). The squared loss is scale dependent, which is why standardising hurts
(§5.1.2).

Fidelity: faithful to the original algorithm; trace(expm) from torch instead of scipy; initial weights
from torch.nn.Linear's law clipped into the bounds (what scipy does to x0).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.optimize
import torch

from bench.context import RunContext
from bench.registry import method
from tasks.causal import CausalProblem, CausalResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"max_iter": 2, "max_inner": 20, "rho_max": 1000.0}


SWITCHED_OFF = "a baseline of the paper (NOTEARS-MLP): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    hidden: int = 10              # m₁, hidden units of each variable's MLP (gcastle: (10, 1))
    lambda1: float = 0.01         # λ₁, ℓ1 weight on the first layer
    lambda2: float = 0.01         # λ₂, ℓ2 weight on all weights
    max_iter: int = 100           # outer dual-ascent iterations
    max_inner: int = 15000        # L-BFGS-B iterations per primal solve (scipy's default)
    h_tol: float = 1e-8           # stop when h(W) ≤ h_tol
    rho_max: float = 1e16         # stop when ρ ≥ ρ_max
    w_threshold: float = 0.3      # cut A_ij below this

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.max_iter < 1 or self.max_inner < 1:
            raise ValueError("hidden, max_iter and max_inner must be >= 1; "
                             f"got {self.hidden}, {self.max_iter}, {self.max_inner}")
        if min(self.lambda1, self.lambda2, self.w_threshold) < 0 or self.h_tol <= 0:
            raise ValueError("lambda1, lambda2 and w_threshold must be >= 0 and h_tol > 0")


class _Model:
    """Flat parameter vector <-> (W⁺, b⁺, W⁻, b⁻, V, c): first layer (d·m, d), locally connected (d, m)."""

    def __init__(self, d: int, m: int, generator: torch.Generator):
        self.d, self.m = d, m
        self.shapes = [(d * m, d), (d * m,), (d * m, d), (d * m,), (d, m), (d,)]
        fans = [d, d, d, d, m, m]
        parts = [(torch.rand(s, generator=generator, dtype=torch.float64) * 2 - 1) / f**0.5
                 for s, f in zip(self.shapes, fans)]
        self.x0 = torch.cat([p.reshape(-1) for p in parts]).numpy()
        diag = np.zeros((d, m, d), dtype=bool)                         # [j, m, i]: input i of MLP j
        diag[np.arange(d), :, np.arange(d)] = True
        weight_bounds = [(0.0, 0.0) if z else (0.0, None) for z in diag.reshape(-1)]
        free = [(None, None)] * (d * m)
        self.bounds = weight_bounds + free + weight_bounds + free + [(None, None)] * (d * m + d)
        lo = np.array([b[0] if b[0] is not None else -np.inf for b in self.bounds])
        hi = np.array([b[1] if b[1] is not None else np.inf for b in self.bounds])
        self.x0 = np.clip(self.x0, lo, hi)

    def unpack(self, flat: torch.Tensor) -> list[torch.Tensor]:
        out, start = [], 0
        for s in self.shapes:
            size = int(np.prod(s))
            out.append(flat[start:start + size].view(s))
            start += size
        return out

    def adjacency_sq(self, wp, wn) -> torch.Tensor:
        w = (wp - wn).view(self.d, self.m, self.d)                      # [j, m, i]
        return torch.sum(w * w, dim=1).t()                              # [i, j]

    def forward(self, x, wp, bp, wn, bn, v, c) -> torch.Tensor:
        hidden = torch.sigmoid((x @ (wp - wn).t() + bp - bn).view(-1, self.d, self.m))   # [n, d, m]
        return torch.einsum("ndm,dm->nd", hidden, v) + c                              # [n, d]


def _primal(model: _Model, x: torch.Tensor, flat0: np.ndarray, rho: float, alpha: float, config: Config):
    n = x.shape[0]

    def objective(flat: np.ndarray):
        theta = torch.from_numpy(flat).requires_grad_()
        wp, bp, wn, bn, v, c = model.unpack(theta)
        loss = 0.5 / n * torch.sum((model.forward(x, wp, bp, wn, bn, v, c) - x) ** 2)
        h = torch.trace(torch.linalg.matrix_exp(model.adjacency_sq(wp, wn))) - model.d
        l2 = torch.sum((wp - wn) ** 2) + torch.sum(v**2)
        total = loss + 0.5 * rho * h * h + alpha * h + 0.5 * config.lambda2 * l2 + config.lambda1 * torch.sum(wp + wn)
        total.backward()
        return total.item(), theta.grad.numpy().copy()

    sol = scipy.optimize.minimize(objective, flat0, jac=True, method="L-BFGS-B", bounds=model.bounds,
                                  options={"maxiter": config.max_inner})
    return sol.x


def _h_value(model: _Model, flat: np.ndarray) -> tuple[float, np.ndarray]:
    with torch.no_grad():
        wp, _, wn, *_ = model.unpack(torch.from_numpy(flat))
        a2 = model.adjacency_sq(wp, wn)
        return float(torch.trace(torch.linalg.matrix_exp(a2)) - model.d), np.sqrt(a2.numpy())


@method(family="causal", config=Config, smoke=SMOKE)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    model = _Model(problem.d, config.hidden, ctx.torch_generator)
    x = torch.as_tensor(problem.data, dtype=torch.float64)
    flat, rho, alpha, h = model.x0, 1.0, 0.0, np.inf
    for it in range(config.max_iter):
        while rho < config.rho_max:                      # dual_ascent_step; the model is updated in place
            flat = _primal(model, x, flat, rho, alpha, config)
            h_new, _ = _h_value(model, flat)
            if h_new > 0.25 * h:
                rho *= 10
            else:
                break
        alpha += rho * h_new
        h = h_new
        ctx.log(it + 1, h=h, rho=rho)
        ctx.check_deadline()
        if h <= config.h_tol or rho >= config.rho_max:
            break
    _, weights = _h_value(model, flat)
    adj = (weights >= config.w_threshold).astype(int)
    np.fill_diagonal(adj, 0)
    return CausalResult(adjacency=adj, runtime_s=time.perf_counter() - t0)
