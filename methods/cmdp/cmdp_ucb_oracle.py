"""Known-model UCB oracle: optimistic LP over occupancy measures with the true kernel and costs (a positive control).

A learner with a textbook √T regret rate in the stochastic CMDP world (tasks/cmdp/cmdp_stochastic.py,
docs/papers/cmdp-bobw.md). It reads what a bandit learner must estimate, the true kernel P and the true cost means
ḡ (so its constraint is exact and every policy it plays is feasible: no violation, regret ≥ 0 episode by episode),
and learns only the reward means r̄ from bandit feedback (the rewards at the visited pairs, as bobw_po sees them):

    r̃_t(x,a) = min{1, r̂_t(x,a) + b·√(log(2·S·A·T) / (2·n_t(x,a)))}     (r̃ = 1 while n_t(x,a) = 0)
    q_t = argmax_{q ∈ Q(P)} r̃_tᵀq  s.t.  ḡ_i q ≤ α_i,   π_t(a|x) = q_t(x,a)/Σ_a q_t(x,a)

with the Hoeffding bonus at b = 1 (not tuned), re-solved in UCRL2-style epochs (whenever some pair's count has
doubled since the last solve). This is UCB over the fixed polytope {q ∈ Q(P): Ḡq ≤ α} with semi-bandit
feedback, whose regret is Õ(√(L·S·A·T)): optimism gives OPT − r̄ᵀq_t ≤ (r̃_t − r̄)ᵀq_t ≤ 2·Σ_{x,a} q_t(x,a)·b_t(x,a),
and the bonuses summed along the visits are Σ_{x,a} Σ_{j ≤ N(x,a)} O(1/√j) = O(√(S·A·L·T)). It is an upper bound
for a bandit primal–dual learner (which must also learn P and ḡ), not a paper's method.

Use: the positive control `known-model-ucb-regret-sqrt-t` of leaderboard/papers/cmdp-bobw.yaml. If this learner's
regret did not read as a slope in [0, 0.7] across the claim's horizons T ∈ {1250, …, 10⁴} at its 3 seeds (horizons
too short for a √T learner to leave its exploration phase, rewards too noisy), no learner's Õ(√T) regret could be
seen in this world, and bobw_po's regret claim would be inconclusive.

`bonus_scale = 0`: the null. Greedy on the empirical means (unvisited pairs still count as reward 1): without the
confidence bonus it commits to a policy that only looks best on few samples and keeps a constant per-episode regret,
so its regret grows linearly (measured slope 0.76 across the claim's horizons at seeds 0–2, 0.93 at seeds 3–5).

Fidelity: not a paper's method (a control of our world); reads the generator's P and ḡ, so it runs only in the
stochastic regime (one phase: the means the LP reads are the episodes' means).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from bench.context import RunContext
from bench.registry import method
from methods.cmdp import _common
from tasks.cmdp import CMDPProblem, CMDPResult, flow_matrix

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE: dict = {}


SWITCHED_OFF = ("a reference, not a paper's method (a known-model UCB learner: the world's positive control): there "
                "is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    bonus_scale: float = 1.0    # b, multiplier of the Hoeffding bonus (1: the textbook bonus); 0: the greedy null

    def __post_init__(self) -> None:
        if not self.bonus_scale >= 0:
            raise ValueError(f"bonus_scale must be >= 0, got {self.bonus_scale}")


def skip(problem, config: Config) -> str | None:
    if getattr(problem, "adversarial", False):
        return "cmdp_ucb_oracle reads fixed cost means ḡ: stochastic regime only (the adversarial means switch)"
    return None


def constrained_lp(P: np.ndarray, layers: list, r: np.ndarray, G: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """argmax_{q ∈ Q(P)} rᵀq s.t. G_i q ≤ α_i (HiGHS), as an (S, A) occupancy measure."""
    A_eq, b_eq = flow_matrix(P, layers)
    res = linprog(-r.reshape(-1), A_ub=G.reshape(len(G), -1), b_ub=alpha, A_eq=A_eq, b_eq=b_eq,
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"constrained LP failed ({res.message})")
    return res.x.reshape(r.shape)


def policy_of(q: np.ndarray) -> np.ndarray:
    """π(a|x) = q(x,a)/q(x); uniform where q(x) = 0 (states the policy never reaches)."""
    mass = q.sum(axis=1, keepdims=True)
    return np.where(mass > 1e-12, q / np.maximum(mass, 1e-12), 1.0 / q.shape[1])


def optimistic_rewards(r_sum: np.ndarray, n: np.ndarray, T: int, scale: float) -> np.ndarray:
    """r̃ = min{1, r̂ + scale·√(log(2SAT)/(2n))}, and 1 where n = 0."""
    bonus = scale * np.sqrt(np.log(2 * n.size * T) / (2 * np.maximum(n, 1.0)))
    return np.where(n > 0, np.minimum(1.0, r_sum / np.maximum(n, 1.0) + bonus), 1.0)


@method(family="cmdp", config=Config, skip=skip, smoke=SMOKE,
        reference="reads the generator's kernel and cost means: the world's positive control")
def solve(problem: CMDPProblem, config: Config, ctx: RunContext) -> CMDPResult:
    T, S, A = problem.T, problem.n_states, problem.n_actions
    g_true = problem.g_means[0]                               # (m, S, A), the one phase's cost means
    n, r_sum = np.zeros((S, A)), np.zeros((S, A))
    n_solved = np.zeros((S, A))
    pi = None
    policies = np.empty((T, S, A))
    for t in range(T):
        if pi is None or np.any(n >= 2.0 * np.maximum(n_solved, 1.0)):   # a new epoch: some count doubled
            r_tilde = optimistic_rewards(r_sum, n, T, config.bonus_scale)
            pi = policy_of(constrained_lp(problem.P, problem.layers, r_tilde, g_true, problem.alpha))
            n_solved = n.copy()
        policies[t] = pi
        states, actions = _common.sample_episode(problem, pi, ctx.rng)
        r = problem.sample_rewards(t, ctx.rng)
        for x, a in zip(states, actions):                     # bandit feedback: the visited pairs' rewards
            n[x, a] += 1.0
            r_sum[x, a] += r[x, a]
        if t % 1000 == 0:
            ctx.check_deadline()
            ctx.progress(t / T)
    return CMDPResult(policies=policies, lambdas=None)
