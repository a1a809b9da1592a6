"""Online episodic CMDPs with bandit feedback, stochastic or adversarial rewards and constraints.

Contract of the family (Stradi, Lunghi, Castiglioni, Marchesi & Gatti, ICML 2025, arXiv 2410.02269):
a task builds a layered CMDP (unknown to the learner: methods may read only `P` through sampled
trajectories, and rewards/costs only through `sample_*`), the per-episode mean vectors, the
thresholds α and the ground truth OPT = max_{q ∈ Q(P)} r̄ᵀq s.t. Ḡq ≤ α (linear programme over
occupancy measures, r̄, Ḡ the means averaged over the T episodes) and ρ (Slater parameter).
A method returns the policy π_t it played in every episode; `score` is the only judge:

    R_t = t·OPT − Σ_{s≤t} r_sᵀ q^{P,π_s}                     (cumulative regret)
    V_t = max_i Σ_{s≤t} (G_s q^{P,π_s} − α)_i                 (cumulative violation)

with r_s, G_s the *mean* vectors of episode s (pseudo-regret; the per-episode mean is the
adversary's choice in the adversarial regime).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import log_spaced_steps
from bench.spec import Metric

# what the family's methods may use of its worlds, beyond the problem and result types (they import no private
# task module: tests/test_layers.py)
from tasks.cmdp._model import flow_matrix as flow_matrix
from tasks.cmdp._model import occupancy


@dataclass(frozen=True, eq=False)
class CMDPProblem:
    n_layers: int                 # L, decision steps per episode (= H, episode length)
    layers: list                  # state index slices of layers X_0..X_{L-1}
    n_actions: int                # |A|
    P: np.ndarray                 # (S, A, S) transition kernel (unknown to the learner)
    r_means: np.ndarray           # (K, S, A) reward means of the K phases, in [0, 1]
    g_means: np.ndarray           # (K, m, S, A) cost means of the K phases, in [0, 1]
    phase: np.ndarray             # (T,) phase index of each episode
    alpha: np.ndarray             # (m,) thresholds α
    T: int                        # number of episodes
    opt: float                    # OPT of the averaged problem (LP)
    q_opt: np.ndarray             # (S, A) an optimal occupancy measure
    rho: float                    # ρ, Slater parameter of the averaged problem (scale [0, L])
    adversarial: bool             # whether the means change over episodes

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def m(self) -> int:
        return len(self.alpha)

    def sample_rewards(self, t: int, rng: np.random.Generator) -> np.ndarray:
        """The realised reward vector r_t ∈ {0,1}^{S×A} of episode t (Bernoulli of its means)."""
        return (rng.random(self.r_means.shape[1:]) < self.r_means[self.phase[t]]).astype(float)

    def sample_costs(self, t: int, rng: np.random.Generator) -> np.ndarray:
        """The realised cost vectors G_t ∈ {0,1}^{m×S×A} of episode t."""
        return (rng.random(self.g_means.shape[1:]) < self.g_means[self.phase[t]]).astype(float)


@dataclass(frozen=True, eq=False)
class CMDPResult:
    policies: np.ndarray          # (T, S, A) π_t played in episode t
    lambdas: np.ndarray | None    # (T, m) Lagrange multipliers λ_t (None: no dual variable)


METRICS = {
    "regret": Metric(False, "", True, "R_T = T·OPT − Σ_t r_tᵀq^{π_t}, cumulative (pseudo-)regret"),
    "violation": Metric(False, "", False, "V_T = max_i Σ_t (G_t q^{π_t} − α)_i, cumulative violation"),
    "regret_slope": Metric(False, "", False, "log-log slope of max(1, R_t) over t ∈ [T/10, T]"),
    "violation_slope": Metric(False, "", False, "log-log slope of max(1, V_t) over t ∈ [T/10, T]"),
    "reward_ratio": Metric(True, "", False, "Σ_t r_tᵀq^{π_t} / (T·OPT), fraction of the optimal reward"),
    "ratio_bound": Metric(True, "", False, "ρ/(ρ+L), the adversarial-regime guarantee on reward_ratio",
                          bounds=(0.0, 1.0)),
    "reward_ratio_margin": Metric(True, "", False, "reward_ratio − ρ/(ρ+L) (≥ 0 when the guarantee holds)"),
    "max_lambda": Metric(False, "", False, "max_t ‖λ_t‖_∞ (0 for methods without multipliers)", bounds=(0.0, None)),
    "lambda_bound": Metric(False, "", False, "Λ = 112·m·L²/ρ², the claimed multiplier bound", bounds=(0.0, None)),
    "rho": Metric(True, "", False, "ρ, Slater parameter of the (averaged) instance", bounds=(0.0, None)),
    "horizon": Metric(True, "", False, "T, the number of episodes (the x of rates fitted across horizons)",
                      bounds=(0.0, None)),
}


def cumulative(problem: CMDPProblem, result: CMDPResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R_t, V_t, Σ_{s≤t} r_sᵀq_s) for t = 1..T."""
    if result.policies.shape != (problem.T, problem.n_states, problem.n_actions):
        raise ValueError(f"policies must have shape (T, S, A) = {(problem.T, problem.n_states, problem.n_actions)}, "
                         f"got {result.policies.shape}")
    q = occupancy(problem.P, problem.layers, result.policies)                        # (T, S, A)
    reward = np.einsum("tsa,tsa->t", q, problem.r_means[problem.phase])               # (T,)
    cost = np.einsum("tsa,tisa->ti", q, problem.g_means[problem.phase])               # (T, m)
    t = np.arange(1, problem.T + 1)
    gained = np.cumsum(reward)
    regret = t * problem.opt - gained
    violation = np.max(np.cumsum(cost - problem.alpha, axis=0), axis=1)
    return regret, violation, gained


def loglog_slope(curve: np.ndarray, lo_frac: float = 0.1) -> float:
    """Slope of log max(1, curve_t) against log t over log-spaced t ∈ [lo_frac·T, T]."""
    T = len(curve)
    steps = log_spaced_steps(T, 200)
    steps = steps[steps >= max(2, int(lo_frac * T))]
    if len(steps) < 2:
        return float("nan")
    return float(np.polyfit(np.log(steps), np.log(np.maximum(1.0, curve[steps - 1])), 1)[0])


def score(problem: CMDPProblem, result: CMDPResult) -> dict[str, float]:
    regret, violation, gained = cumulative(problem, result)
    ratio_bound = problem.rho / (problem.rho + problem.n_layers)
    ratio = float(gained[-1] / (problem.T * problem.opt)) if problem.opt > 0 else float("nan")
    lam = 0.0 if result.lambdas is None else float(np.max(result.lambdas))
    return {
        "regret": float(regret[-1]),
        "violation": float(violation[-1]),
        "regret_slope": loglog_slope(regret),
        "violation_slope": loglog_slope(violation),
        "reward_ratio": ratio,
        "ratio_bound": ratio_bound,
        "reward_ratio_margin": ratio - ratio_bound,
        "max_lambda": lam,
        "lambda_bound": (112.0 * problem.m * problem.n_layers ** 2 / problem.rho ** 2 if problem.rho > 0
                         else float("nan")),
        "rho": problem.rho,
        "horizon": float(problem.T),
    }


def trace(problem: CMDPProblem, result: CMDPResult) -> dict[str, list[tuple[int, float]]]:
    """Curves `regret` (R_t) and `violation` (V_t) on a log-spaced grid of episodes."""
    regret, violation, _ = cumulative(problem, result)
    steps = log_spaced_steps(problem.T, 100)
    return {"regret": [(int(s), float(regret[s - 1])) for s in steps],
            "violation": [(int(s), float(violation[s - 1])) for s in steps]}
