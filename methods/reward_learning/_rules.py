"""Rule-based preference labels and the Bradley–Terry reward model trained on them (rule_world).

Selection and labels follow the released code (XiaominLi1998/DynamicRules, `trainRuleAdapter.py`
/ `applyRuleAdapter.py`, the rule-selection and labelling steps):

    sel_k = relevance_k + 0.5·|s_k(A) − s_k(B)|,   top = sel.argsort()[::-1][:num_rules]
    reward_A = Σ_{k∈top} s_k(A);  A is chosen iff reward_A ≥ reward_B (argmax, first on ties)

The reward model stands in for the paper's Skywork-8B fine-tuned with TRL's RewardTrainer: a
Bradley–Terry model r(x, y) = Σ_k (u_k + v_k·ρ_k(x))·f_k(y) over the response features f and the
prompt features ρ (which rules the prompt triggers), loss mean −log σ(±(r(x,A) − r(x,B))) +
(l2/2)(‖u‖² + ‖v‖²), fitted by L-BFGS (convex; well under a second).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from tasks.reward_learning import RuleWorldProblem, RuleWorldResult, sigmoid


@dataclass(frozen=True)
class RewardModelConfig:
    """The settings every rule_world labelling method shares: those of the reward model it trains."""

    rm_l2: float = 1e-3      # L2 of the reward model (ours; the paper fine-tunes an 8B model with TRL)

    def __post_init__(self) -> None:
        if self.rm_l2 < 0:
            raise ValueError(f"rm_l2 must be >= 0, got {self.rm_l2}")


def rules_skip(problem, num_rules: int | None, name: str) -> str | None:
    """Why `name` cannot label this rule world: more rules asked for than the pool has."""
    if num_rules is not None and num_rules > problem.n_rules:
        return f"num_rules = {num_rules} exceeds the pool of {problem.n_rules} rules"
    return None


def top_rules(scores_a: np.ndarray, scores_b: np.ndarray, relevance: np.ndarray, num_rules: int,
              relevance_weight: float = 1.0, discrepancy_weight: float = 0.5) -> np.ndarray:
    """(n, num_rules) rule indices per pair, by decreasing relevance_weight·rel + discrepancy_weight·|Δs|."""
    sel = relevance_weight * relevance + discrepancy_weight * np.abs(scores_a - scores_b)
    return np.argsort(sel, axis=1)[:, ::-1][:, :num_rules]


def labels_from_rules(scores_a: np.ndarray, scores_b: np.ndarray, rules: np.ndarray) -> np.ndarray:
    """1 where the selected rules' summed scores favour A (ties: A, as argmax does)."""
    rows = np.arange(len(rules))[:, None]
    return (scores_a[rows, rules].sum(axis=1) >= scores_b[rows, rules].sum(axis=1)).astype(int)


def _design(prompt: np.ndarray, features: np.ndarray) -> np.ndarray:
    """(n, 2K) [f(y), ρ(x)·f(y)]: the reward is linear in these."""
    return np.hstack([features, prompt * features])


def fit_reward_model(problem: RuleWorldProblem, labels: np.ndarray, l2: float) -> np.ndarray:
    """θ = (u, v) of shape (2K,), the Bradley–Terry fit to `labels` (1: A chosen)."""
    diff = _design(problem.prompt_features, problem.features_a - problem.features_b)   # (n, 2K)
    sign = 2.0 * np.asarray(labels, float) - 1.0                                        # +1: A chosen

    def loss(theta):
        margin = sign * (diff @ theta)
        grad = diff.T @ (-sign * sigmoid(-margin)) / len(sign) + l2 * theta
        return float(np.mean(np.logaddexp(0.0, -margin)) + 0.5 * l2 * theta @ theta), grad

    return minimize(loss, np.zeros(diff.shape[1]), jac=True, method="L-BFGS-B",
                    options={"maxiter": 2000, "gtol": 1e-10, "ftol": 1e-15}).x


def labelled_result(problem: RuleWorldProblem, labels: np.ndarray, rules_used: float, l2: float) -> RuleWorldResult:
    """Train the reward model on `labels` and score the held-out responses with it."""
    theta = fit_reward_model(problem, labels, l2)
    return RuleWorldResult(labels=np.asarray(labels, int),
                           test_reward_a=_design(problem.test_prompt_features, problem.test_features_a) @ theta,
                           test_reward_b=_design(problem.test_prompt_features, problem.test_features_b) @ theta,
                           rules_used=float(rules_used))
