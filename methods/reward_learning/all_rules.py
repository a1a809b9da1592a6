"""AllRules baseline: label each pair by its summed judge scores over the whole rule pool, train a reward model.

Li et al., "RuleAdapter", ICML 2025, arXiv 2501.15453, AllRules baseline (the
released code's `--RandomRules` with num_rules = 100 takes range(100), i.e. every rule); strategy
(e) of docs/papers/adaptive-rules.md. The sum and the average give the same label.

Fidelity: faithful to the code's definition; reward model as in adaptive_rules (linear BT, ours).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._rules import RewardModelConfig, labelled_result, labels_from_rules, rules_skip
from tasks.reward_learning import RuleWorldProblem, RuleWorldResult

SWITCHED_OFF = ("a baseline of the paper (AllRules: labels from the whole rule pool): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config(RewardModelConfig):
    pass  # rm_l2 only


def skip(problem, config: Config) -> str | None:
    return rules_skip(problem, None, "all_rules")


@method(family="reward_learning", config=Config, skip=skip, accepts=RuleWorldProblem)
def solve(problem: RuleWorldProblem, config: Config, ctx: RunContext) -> RuleWorldResult:
    every = np.broadcast_to(np.arange(problem.n_rules), problem.scores_a.shape)
    labels = labels_from_rules(problem.scores_a, problem.scores_b, every)
    return labelled_result(problem, labels, problem.n_rules, config.rm_l2)
