"""RandomRules baseline: label each pair by `num_rules` rules drawn at random, train a reward model.

Li et al., "RuleAdapter", ICML 2025, arXiv 2501.15453, RandomRules baseline (the released code's
`--RandomRules`); strategy (c) of docs/papers/adaptive-rules.md. Rules are drawn without
replacement, per pair, from ctx.rng.

Fidelity: faithful to the code's definition; reward model as in adaptive_rules (linear BT, ours).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._rules import RewardModelConfig, labelled_result, labels_from_rules, rules_skip
from tasks.reward_learning import RuleWorldProblem, RuleWorldResult

SWITCHED_OFF = ("a baseline of the paper (RandomRules: labels from rules drawn at random): there is no mechanism of "
                "the paper to switch off")


@dataclass(frozen=True)
class Config(RewardModelConfig):
    num_rules: int = 5       # rules drawn per pair (code: num_rules=5)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_rules < 1:
            raise ValueError(f"num_rules must be >= 1, got {self.num_rules}")


def skip(problem, config: Config) -> str | None:
    return rules_skip(problem, config.num_rules, "random_rules")


@method(family="reward_learning", config=Config, skip=skip, accepts=RuleWorldProblem)
def solve(problem: RuleWorldProblem, config: Config, ctx: RunContext) -> RuleWorldResult:
    n, k = problem.scores_a.shape
    rules = np.argsort(ctx.rng.random((n, k)), axis=1)[:, : config.num_rules]   # k of K without replacement
    labels = labels_from_rules(problem.scores_a, problem.scores_b, rules)
    return labelled_result(problem, labels, config.num_rules, config.rm_l2)
