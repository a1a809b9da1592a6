"""Bilinearly-coupled saddle-point problems: min_x max_y f(x) + ⟨y, Bx⟩ − g(y).

Contract of the family (Borodich, Gasnikov & Kovalev, ICML 2025, arXiv 2411.14601; problem of
the paper, protocol of docs/papers/bilinear-saddle.md): a task builds a quadratic instance

    f(x) = ½ xᵀAx − aᵀx,   g(y) = ½ yᵀCy − cᵀy,   A = U diag(λ_A) Uᵀ, C = V diag(λ_C) Vᵀ,
    B = P diag(s) Qᵀ        (U, V, P, Q Haar-random orthogonal, drawn from the run seed)

with its exact constants (L_x, μ_x, L_y, μ_y, L_xy, μ_xy, μ_yx, read off the spectra) and its
exact saddle point z* = (x*, y*), the solution of the KKT system

    [[A, Bᵀ], [B, −C]] [x; y] = [a; −c]     (∇f(x) + Bᵀy = 0,  ∇g(y) = Bx)

by `numpy.linalg.solve`. A method sees the functions only through `problem.oracle(...)`, an
`Oracle` that counts ∇f, ∇g, B·x and Bᵀ·y calls separately and records the relative error
‖z_k − z*‖² / ‖z_0 − z*‖² after each of the method's iterations (`oracle.record(x, y)`); the
recording is the measurement, it never feeds back into the method except to stop the run once
the error is at the task's target (ε = 1e-8) or the call budget is spent. `score` reads the
counts at which the target was first met and fits log-error against each counter, from the record of the oracle
the problem handed out (kept on the problem's `bench.observe.Meter`), never from a history the method wrote: a
SaddleResult whose history is not that record, or a solve that spent calls on another oracle, is a `Misreport`.

Effective strong convexity (UNVERIFIED reading of the paper's δ_x, δ_y): the curvature
B lends x is μ_yx²/L_y (max_y ⟨y,Bx⟩ − g(y) = g*(Bx) is (1/L_y)-strongly convex in Bx), the one
it lends y is μ_xy²/L_x, so

    δ_x = μ_x + μ_yx²/L_y,  δ_y = μ_y + μ_xy²/L_x,
    κ_x = L_x/δ_x,  κ_y = L_y/δ_y,  κ_xy = L_xy²/(δ_x δ_y).

It passes the consistency check (case f SC, g affine: √κ_xy = (L_xy/μ_xy)·√(L_x/μ_x),
OPAPC's B-count) and the known SC-SC bound. An affine f or g is L-smooth for every L ≥ 0; when
L_x = 0 or L_y = 0 would leave δ undefined (pure bilinear), the zero smoothness constant is
raised to the smallest value with L_x·L_y ≥ μ_xy·μ_yx (`effective_smoothness`), which gives the
bilinear bound √κ_xy = L_xy/μ_xy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.observe import Meter, Misreport
from bench.spec import Metric

COUNTERS = ("grad_f", "grad_g", "matvec")  # the three oracle classes of the paper (B and Bᵀ pooled)
TAIL_START = 1e-2  # window="tail" fits start at the first record with relative error ≤ this
_COLUMNS = {"grad_f": 0, "grad_g": 1, "b": 2, "bt": 3, "error": 4}


# ---- instance data -----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Quadratic:
    """f(x) = ½xᵀAx − aᵀx, g(y) = ½yᵀCy − cᵀy, coupling B (d_y × d_x). Read by the oracle and score."""

    A: np.ndarray  # (d_x, d_x) PSD
    a: np.ndarray  # (d_x,)
    C: np.ndarray  # (d_y, d_y) PSD
    c: np.ndarray  # (d_y,)
    B: np.ndarray  # (d_y, d_x)


@dataclass(frozen=True, eq=False)
class SaddleProblem:
    regime: str                   # sc_sc | constrained | bilinear | coupling_curvature (R1-R4 of our protocol)
    d_x: int
    d_y: int
    data: Quadratic               # methods must not read it: use oracle()
    x0: np.ndarray                # (d_x,) initial point
    y0: np.ndarray                # (d_y,)
    x_star: np.ndarray            # (d_x,) saddle point, KKT solve
    y_star: np.ndarray            # (d_y,)
    L_x: float                    # λ_max(A): f is L_x-smooth
    mu_x: float                   # λ_min(A): f is μ_x-strongly convex (0 allowed)
    L_y: float                    # λ_max(C)
    mu_y: float                   # λ_min(C)
    L_xy: float                   # ‖B‖ = σ_max(B)
    mu_xy: float                  # √λ_min(BBᵀ) (> 0 iff B has full row rank)
    mu_yx: float                  # √λ_min(BᵀB) (> 0 iff B has full column rank)
    delta_x: float                # δ_x = μ_x + μ_yx²/L_y (with effective smoothness)
    delta_y: float                # δ_y = μ_y + μ_xy²/L_x
    kappa_x: float                # L_x/δ_x
    kappa_y: float                # L_y/δ_y
    kappa_xy: float               # L_xy²/(δ_x δ_y)
    target: float                 # ε: the run is measured until ‖z−z*‖²/‖z0−z*‖² ≤ ε
    kkt_residual: float           # ‖K z* − rhs‖ / ‖rhs‖ of the linear solve
    meter: Meter = field(init=False, repr=False)  # keeps the oracles handed out, for score to read their records

    def __post_init__(self) -> None:
        object.__setattr__(self, "meter", Meter())

    def oracle(self, ctx: Any = None, max_calls: int = 2_000_000) -> "Oracle":
        """A fresh counting oracle for one run (ctx: progress and deadline checks)."""
        return self.meter.issue(Oracle(self, ctx, max_calls))


@dataclass(frozen=True, eq=False)
class SaddleResult:
    x: np.ndarray          # (d_x,) last iterate
    y: np.ndarray          # (d_y,)
    history: np.ndarray    # (K, 5): ∇f calls, ∇g calls, B calls, Bᵀ calls, relative error, per record (a copy of
                           # the oracle's record: score reads the oracle's own, and refuses a history that differs)
    stop_reason: str       # target | budget | diverged | finished


# ---- the counting oracle -------------------------------------------------------------------------

class Oracle:
    """∇f, ∇g, B·x and Bᵀ·y with separate counters, plus the error recorder.

    Every call is counted where it happens, so a method's reported complexity is exactly the
    number of oracle calls its code made: caching a product (e.g. reusing B·x_{k+1} as B·x_k)
    is allowed and counts once.
    """

    CHECK_EVERY = 256  # records between progress/deadline checks

    def __init__(self, problem: SaddleProblem, ctx: Any, max_calls: int) -> None:
        if max_calls < 1:
            raise ValueError(f"max_calls must be >= 1, got {max_calls}")
        d = problem.data
        self._A, self._a, self._C, self._c, self._B = (np.ascontiguousarray(m) for m in (d.A, d.a, d.C, d.c, d.B))
        self._BT = np.ascontiguousarray(d.B.T)
        self._x_star, self._y_star = problem.x_star, problem.y_star
        self._r0 = _sq(problem.x0 - problem.x_star) + _sq(problem.y0 - problem.y_star)
        if self._r0 == 0:
            raise ValueError("the initial point is the saddle point; the relative error is undefined")
        self.target = problem.target
        self.max_calls = int(max_calls)
        self.ctx = ctx
        self.grad_f_calls = self.grad_g_calls = self.b_calls = self.bt_calls = 0
        self._rows: list[tuple[int, int, int, int, float]] = []
        self.stop_reason = ""
        self.record(problem.x0, problem.y0)

    # oracles
    def grad_f(self, x: np.ndarray) -> np.ndarray:
        self.grad_f_calls += 1
        return self._A.dot(x) - self._a

    def grad_g(self, y: np.ndarray) -> np.ndarray:
        self.grad_g_calls += 1
        return self._C.dot(y) - self._c

    def B(self, x: np.ndarray) -> np.ndarray:
        self.b_calls += 1
        return self._B.dot(x)

    def BT(self, y: np.ndarray) -> np.ndarray:
        self.bt_calls += 1
        return self._BT.dot(y)

    @property
    def matvec_calls(self) -> int:
        return self.b_calls + self.bt_calls

    @property
    def total_calls(self) -> int:
        return self.grad_f_calls + self.grad_g_calls + self.b_calls + self.bt_calls

    # measurement
    def record(self, x: np.ndarray, y: np.ndarray) -> bool:
        """Log the relative error of (x, y) at the current counts; True when the run should stop."""
        dx, dy = x - self._x_star, y - self._y_star
        err = float(dx.dot(dx) + dy.dot(dy)) / self._r0
        self._rows.append((self.grad_f_calls, self.grad_g_calls, self.b_calls, self.bt_calls, err))
        if not math.isfinite(err) or err > 1e12:
            self.stop_reason = "diverged"
        elif err <= self.target:
            self.stop_reason = "target"
        elif self.total_calls >= self.max_calls:
            self.stop_reason = "budget"
        if self.ctx is not None and len(self._rows) % self.CHECK_EVERY == 0:
            self.ctx.progress(self.total_calls / self.max_calls)
            self.ctx.check_deadline()
        return bool(self.stop_reason)

    @property
    def done(self) -> bool:
        return bool(self.stop_reason)

    def result(self, x: np.ndarray, y: np.ndarray) -> SaddleResult:
        """The run's SaddleResult; (x, y) is recorded unless it is the point recorded last."""
        counts = (self.grad_f_calls, self.grad_g_calls, self.b_calls, self.bt_calls)
        err = (_sq(x - self._x_star) + _sq(y - self._y_star)) / self._r0
        if self._rows[-1][:4] != counts or self._rows[-1][4] != err:
            self.record(x, y)
        return SaddleResult(x=np.array(x, dtype=float), y=np.array(y, dtype=float),
                      history=np.array(self._rows, dtype=float), stop_reason=self.stop_reason or "finished")


def _sq(v: np.ndarray) -> float:
    return float(np.dot(v, v))


# ---- instance generator (our protocol) ----------------------------------------------------------

def haar_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed n×n orthogonal matrix (QR of a Gaussian matrix, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def spectrum(n: int, low: float, high: float, zero_fraction: float = 0.0) -> np.ndarray:
    """n eigenvalues: round(n·zero_fraction) zeros, the rest geometrically spaced in [low, high]
    (both endpoints included, so the constants of the instance are exactly low and high)."""
    if not 0.0 <= zero_fraction <= 1.0:
        raise ValueError(f"zero_fraction must lie in [0, 1], got {zero_fraction}")
    zeros = int(round(n * zero_fraction))
    k = n - zeros
    if k == 0:
        return np.zeros(n)
    if high < 0 or low < 0 or low > high:
        raise ValueError(f"need 0 <= low <= high, got low={low}, high={high}")
    if high == 0:
        body = np.zeros(k)
    elif low == 0:
        body = np.linspace(0.0, high, k)
    else:
        body = np.geomspace(low, high, k) if k > 1 else np.array([high])
    return np.concatenate([np.zeros(zeros), body])


def effective_smoothness(L_x: float, L_y: float, mu_xy: float, mu_yx: float) -> tuple[float, float]:
    """Smoothness constants for δ and κ: a zero L (affine f or g) is raised so that
    L_x·L_y ≥ μ_xy·μ_yx (module docstring); positive ones are kept."""
    m = mu_xy * mu_yx
    if m > 0 and L_x == 0 and L_y == 0:
        return math.sqrt(m), math.sqrt(m)
    if m > 0 and L_x == 0:
        return m / L_y, L_y
    if m > 0 and L_y == 0:
        return L_x, m / L_x
    return L_x, L_y


def condition_numbers(L_x, mu_x, L_y, mu_y, L_xy, mu_xy, mu_yx) -> dict[str, float]:
    """δ_x, δ_y, κ_x, κ_y, κ_xy of our reading (module docstring)."""
    Lx, Ly = effective_smoothness(L_x, L_y, mu_xy, mu_yx)
    lend_x = 0.0 if mu_yx == 0 else (math.inf if Ly == 0 else mu_yx**2 / Ly)
    lend_y = 0.0 if mu_xy == 0 else (math.inf if Lx == 0 else mu_xy**2 / Lx)
    delta_x, delta_y = mu_x + lend_x, mu_y + lend_y
    if delta_x == 0 or delta_y == 0:
        raise ValueError("no linear convergence: δ_x or δ_y is 0 (neither f/g nor B supplies curvature)")
    return {
        "delta_x": delta_x, "delta_y": delta_y,
        "kappa_x": Lx / delta_x, "kappa_y": Ly / delta_y,
        "kappa_xy": L_xy**2 / (delta_x * delta_y),
    }


def make_problem(regime: str, *, lam_A: np.ndarray, lam_C: np.ndarray, s: np.ndarray, d_x: int, d_y: int,
                 rng: np.random.Generator, target: float, offset_scale: float = 1.0,
                 shared_bases: bool = False) -> SaddleProblem:
    """Assemble the instance from its spectra (random bases and offsets from rng) and solve KKT.

    shared_bases=False (the default generator): U, V, P, Q independent. shared_bases=True: B's
    singular vectors are the eigenvectors of A and C (Q = U, P = V), so coordinate i of the
    rotated problem is the 2×2 game ½λ_A,i x² + s_i xy − ½λ_C,i y²; the caller's ordering of
    lam_A, lam_C against s (ascending) then fixes which curvature meets which singular value.
    """
    if not 0 < target < 1:
        raise ValueError(f"target must lie in (0, 1), got {target}")
    if len(lam_A) != d_x or len(lam_C) != d_y or len(s) != min(d_x, d_y):
        raise ValueError("spectrum sizes must be d_x, d_y and min(d_x, d_y)")
    U, V = haar_orthogonal(d_x, rng), haar_orthogonal(d_y, rng)
    P, Q = (V, U) if shared_bases else (haar_orthogonal(d_y, rng), haar_orthogonal(d_x, rng))
    A = (U * lam_A) @ U.T
    C = (V * lam_C) @ V.T
    S = np.zeros((d_y, d_x))
    S[np.arange(len(s)), np.arange(len(s))] = s
    B = P @ S @ Q.T
    A, C = 0.5 * (A + A.T), 0.5 * (C + C.T)  # exact symmetry
    a = offset_scale * rng.standard_normal(d_x)
    c = offset_scale * rng.standard_normal(d_y)
    K = np.block([[A, B.T], [B, -C]])
    rhs = np.concatenate([a, -c])
    z = np.linalg.solve(K, rhs)
    kkt_residual = float(np.linalg.norm(K @ z - rhs) / np.linalg.norm(rhs))
    x_star, y_star = z[:d_x], z[d_x:]

    L_x, mu_x = float(np.max(lam_A)), float(np.min(lam_A))
    L_y, mu_y = float(np.max(lam_C)), float(np.min(lam_C))
    L_xy = float(np.max(s))
    smin = float(np.min(s))
    mu_xy = smin if d_y <= d_x else 0.0   # BBᵀ (d_y×d_y) is nonsingular iff rank B = d_y
    mu_yx = smin if d_x <= d_y else 0.0   # BᵀB (d_x×d_x) is nonsingular iff rank B = d_x
    kappas = condition_numbers(L_x, mu_x, L_y, mu_y, L_xy, mu_xy, mu_yx)
    return SaddleProblem(
        regime=regime, d_x=d_x, d_y=d_y, data=Quadratic(A, a, C, c, B),
        x0=np.zeros(d_x), y0=np.zeros(d_y), x_star=x_star, y_star=y_star,
        L_x=L_x, mu_x=mu_x, L_y=L_y, mu_y=mu_y, L_xy=L_xy, mu_xy=mu_xy, mu_yx=mu_yx,
        target=float(target), kkt_residual=kkt_residual, **kappas,
    )


# ---- metrics -------------------------------------------------------------------------------------

METRICS = {
    "total_calls": Metric(False, "calls", True, "∇f + ∇g + B + Bᵀ calls until ‖z−z*‖²/‖z0−z*‖² ≤ ε (unit costs)",
                          bounds=(0.0, None)),
    "grad_f_calls": Metric(False, "calls", False, "∇f evaluations until the relative error ≤ ε", bounds=(0.0, None)),
    "grad_g_calls": Metric(False, "calls", False, "∇g evaluations until the relative error ≤ ε", bounds=(0.0, None)),
    "matvec_calls": Metric(False, "calls", False, "B·x plus Bᵀ·y products until the relative error ≤ ε",
                           bounds=(0.0, None)),
    "reached": Metric(True, "", False, "1 if the relative error reached ε within the budget, else 0",
                      bounds=(0.0, 1.0)),
    "final_rel_error": Metric(False, "", False, "‖z_T − z*‖²/‖z_0 − z*‖² at the last iterate", bounds=(0.0, None)),
    **{f"log10_slope_{c}": Metric(False, "decades/call", False,
                                  f"slope of log10(relative error) against the {c} count (last 50 % of the run)")
       for c in COUNTERS},
    **{f"r2_{c}": Metric(True, "", False, f"R² of that linear fit against the {c} count (1 = exactly linear)",
                          bounds=(None, 1.0))
       for c in COUNTERS},
    **{f"r2_tail_{c}": Metric(True, "", False,
                              f"R² of log10(error) against the {c} count from error 1e-2 to ε (six decades)",
                              bounds=(None, 1.0))
       for c in COUNTERS},
    "kappa_x": Metric(True, "", False, "κ_x = L_x/δ_x of the instance", bounds=(0.0, None)),
    "kappa_y": Metric(True, "", False, "κ_y = L_y/δ_y of the instance", bounds=(0.0, None)),
    "kappa_xy": Metric(True, "", False, "κ_xy = L_xy²/(δ_x δ_y) of the instance", bounds=(0.0, None)),
    "coupling_condition": Metric(True, "", False, "L_xy/μ with μ = max(μ_xy, μ_yx): condition number of B",
                                 bounds=(0.0, None)),
    "kkt_residual": Metric(False, "", False, "relative residual of the KKT solve that gives z*", bounds=(0.0, None)),
}


def _counter_column(history: np.ndarray, counter: str) -> np.ndarray:
    if counter == "matvec":
        return history[:, _COLUMNS["b"]] + history[:, _COLUMNS["bt"]]
    return history[:, _COLUMNS[counter]]


def first_reach(history: np.ndarray, target: float) -> int | None:
    """Index of the first record with relative error ≤ target, or None."""
    hits = np.nonzero(history[:, _COLUMNS["error"]] <= target)[0]
    return int(hits[0]) if len(hits) else None


def linear_fit(history: np.ndarray, counter: str, stop: int | None = None,
               window: str = "half") -> tuple[float, float] | None:
    """(slope, R²) of log10(error) against `counter`, the run taken up to `stop` (the first record
    at the target) or its end.

    window="half" (our protocol): the last 50 % of the counter's range. Over a window that short a
    sublinear 1/k² decay is also nearly straight (R² 0.992), so window="tail" fits every record
    from the first with error ≤ 1e-2 on (six decades to ε = 1e-8): 1/k² gives R² ≈ 0.6 there.
    None when the counter never moves or fewer than 5 distinct counts fall in the window.
    """
    h = history[: (stop + 1 if stop is not None else len(history))]
    x = _counter_column(h, counter)
    err = h[:, _COLUMNS["error"]]
    end = x[-1]
    if window == "half":
        keep = x >= 0.5 * end
    elif window == "tail":
        below = np.nonzero(err <= TAIL_START)[0]
        keep = np.zeros(len(h), bool)
        if len(below):
            keep[below[0]:] = True
    else:
        raise ValueError(f"window must be half or tail, got {window!r}")
    keep &= (err > 0) & np.isfinite(err)
    if end <= 0 or len(np.unique(x[keep])) < 5:
        return None
    xs, ys = x[keep], np.log10(err[keep])
    slope, intercept = np.polyfit(xs, ys, 1)
    resid = ys - (slope * xs + intercept)
    total = float(np.sum((ys - ys.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / total if total > 0 else 0.0
    return float(slope), r2


def observed_history(problem: SaddleProblem, result: SaddleResult) -> np.ndarray:
    """The record of the oracle this problem handed out whose copy the result carries (the oracle's own rows, task
    code's counts); Misreport when no issued oracle kept that record, or when, in a solve the harness delimited,
    another oracle was spent on that the result does not account for."""
    claimed = np.asarray(result.history, dtype=float)
    issued = list(problem.meter.issued)
    for oracle in reversed(issued):
        rows = np.array(oracle._rows, dtype=float)
        if rows.shape == claimed.shape and np.array_equal(rows, claimed):
            break
    else:
        raise Misreport(f"the result's history ({claimed.shape[0]} records) is not the record of any of the "
                        f"{len(issued)} oracle(s) this problem handed out: the counts would be the method's word")
    if problem.meter.reading().delimited:
        hidden = sum(o.total_calls for o in issued if o is not oracle)
        if hidden:
            raise Misreport(f"the solve spent {hidden} oracle calls on other oracles than the one whose record the "
                            "result carries")
    return rows


def score(problem: SaddleProblem, result: SaddleResult) -> dict[str, float]:
    return score_record(problem, result.x, result.y, observed_history(problem, result))


def score_record(problem: SaddleProblem, x: np.ndarray, y: np.ndarray, h: np.ndarray) -> dict[str, float]:
    """The metrics of a run ending at (x, y) whose oracle recorded `h` (score, after checking where h came from)."""
    final = (_sq(x - problem.x_star) + _sq(y - problem.y_star)) / (
        _sq(problem.x0 - problem.x_star) + _sq(problem.y0 - problem.y_star))
    hit = first_reach(h, problem.target)
    scores = {
        "reached": 1.0 if hit is not None else 0.0,
        "final_rel_error": float(final),
        "kappa_x": problem.kappa_x, "kappa_y": problem.kappa_y, "kappa_xy": problem.kappa_xy,
        "kkt_residual": problem.kkt_residual,
    }
    mu_b = max(problem.mu_xy, problem.mu_yx)
    if mu_b > 0:
        scores["coupling_condition"] = problem.L_xy / mu_b
    if hit is not None:
        row = h[hit]
        scores["grad_f_calls"] = float(row[0])
        scores["grad_g_calls"] = float(row[1])
        scores["matvec_calls"] = float(row[2] + row[3])
        scores["total_calls"] = float(row[0] + row[1] + row[2] + row[3])
    for counter in COUNTERS:
        fit = linear_fit(h, counter, hit)
        if fit is not None:
            scores[f"log10_slope_{counter}"], scores[f"r2_{counter}"] = fit
        tail = linear_fit(h, counter, hit, window="tail")
        if tail is not None:
            scores[f"r2_tail_{counter}"] = tail[1]
    return scores


def trace(problem: SaddleProblem, result: SaddleResult, points: int = 200) -> dict[str, list[tuple[int, float]]]:
    """Curves err_vs_<counter>: relative error against each oracle count (≤ `points` each), from the oracle's record
    (`trace_record`)."""
    return trace_record(observed_history(problem, result), points)


def trace_record(h: np.ndarray, points: int = 200) -> dict[str, list[tuple[int, float]]]:
    """The curves of an oracle record `h`: for each distinct count the last error recorded at that count is kept;
    the counts are then thinned to about `points`, evenly spaced, always keeping the first and the last."""
    err = h[:, _COLUMNS["error"]]
    curves = {}
    for counter in COUNTERS:
        x = _counter_column(h, counter).astype(np.int64)
        last = np.nonzero(np.append(x[1:] != x[:-1], True))[0]  # last record of each count
        xs, es = x[last], err[last]
        if len(xs) > points:
            grid = np.linspace(xs[0], xs[-1], points)
            idx = np.unique(np.searchsorted(xs, grid).clip(0, len(xs) - 1))
            xs, es = xs[idx], es[idx]
        curves[f"err_vs_{counter}"] = [(int(s), float(e)) for s, e in zip(xs, es)]
    return curves
