"""Single overall judgement baseline: label each pair by one holistic judge score per response, train a reward model.

Li et al., "RuleAdapter", ICML 2025, arXiv 2501.15453: the conventional alternative to rule-based
labels, a single holistic preference judgement (the paper's motivation). In the
rule world the judge's overall score is the true utility plus noise (`overall_noise` of the task),
so the label is A iff o(A) ≥ o(B).

Fidelity: approximate. The paper's holistic judge is an LLM asked for an overall preference; its
noise relative to rule-based ratings is a design choice of the task ([U]).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._rules import RewardModelConfig, labelled_result, rules_skip
from tasks.reward_learning import RuleWorldProblem, RuleWorldResult

SWITCHED_OFF = ("a baseline of the paper (one holistic judgement per response): there is no mechanism of the paper "
                "to switch off")


@dataclass(frozen=True)
class Config(RewardModelConfig):
    pass  # rm_l2 only


def skip(problem, config: Config) -> str | None:
    return rules_skip(problem, None, "overall_judgement")


@method(family="reward_learning", config=Config, skip=skip, accepts=RuleWorldProblem)
def solve(problem: RuleWorldProblem, config: Config, ctx: RunContext) -> RuleWorldResult:
    labels = (problem.overall_a >= problem.overall_b).astype(int)
    return labelled_result(problem, labels, 0, config.rm_l2)
