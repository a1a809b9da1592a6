"""Adaptive rule selection (RuleAdapter's oracle): label each pair by its max-discrepancy rules, train a reward model.

Li et al., "RuleAdapter: Dynamic Rules for training Safety Reward Models in RLHF", ICML 2025,
arXiv 2501.15453; the released code's selection and labelling steps; strategy (a) of docs/papers/adaptive-rules.md.
Per pair the `num_rules` rules with the largest relevance_k + 0.5·|s_k(A) − s_k(B)| are kept, the
response with the larger summed score on them is "chosen", and a Bradley–Terry reward model is
trained on the labels (methods/reward_learning/_rules.py). Selecting the rules where the two
responses differ most maximises the information of the label about the hidden preference (the
paper's mutual-information argument).

Fidelity: faithful to the released code's selection rule and label (`sum_terms.argsort()[::-1][:5]`).
Deviations: the oracle selection is used directly instead of the learned Rule Adapter (a Llama-3.2-3B
multi-label classifier imitating it); the reward model is a linear BT model over synthetic response
features, not Skywork-Reward-Llama-3.1-8B fine-tuned with TRL. relevance_weight = 0 gives pure
max-discrepancy (strategy (b)).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._rules import RewardModelConfig, labelled_result, labels_from_rules, rules_skip, top_rules
from tasks.reward_learning import RuleWorldProblem, RuleWorldResult

# Adaptive selection off: with both selection weights 0 every rule scores 0 in _rules.top_rules, so every pair is
# labelled by the same fixed rules (the sort's tie order, not the pair's relevance or discrepancy): static rules in
# place of the paper's dynamic, per-pair ones; the labelling and the reward model are unchanged
SWITCHED_OFF = {"fixed rules (selection weights 0)": {"relevance_weight": 0.0, "discrepancy_weight": 0.0}}


@dataclass(frozen=True)
class Config(RewardModelConfig):
    num_rules: int = 5                 # rules selected per pair (code: num_rules=5)
    relevance_weight: float = 1.0      # weight of relevance_k in the selection score (code: 1)
    discrepancy_weight: float = 0.5    # weight of |s_k(A) − s_k(B)| (code: 0.5)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_rules < 1 or self.relevance_weight < 0 or self.discrepancy_weight < 0:
            raise ValueError(f"num_rules must be >= 1 and the selection weights >= 0, got {self.num_rules}, "
                             f"{self.relevance_weight}, {self.discrepancy_weight}")


def skip(problem, config: Config) -> str | None:
    return rules_skip(problem, config.num_rules, "adaptive_rules")


@method(family="reward_learning", config=Config, skip=skip, accepts=RuleWorldProblem)
def solve(problem: RuleWorldProblem, config: Config, ctx: RunContext) -> RuleWorldResult:
    rules = top_rules(problem.scores_a, problem.scores_b, problem.relevance, config.num_rules,
                      config.relevance_weight, config.discrepancy_weight)
    labels = labels_from_rules(problem.scores_a, problem.scores_b, rules)
    return labelled_result(problem, labels, config.num_rules, config.rm_l2)
