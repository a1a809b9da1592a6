"""Rule oracle: label each pair by the rules its hidden preference is generated from (a positive control of rule_world).

The rule world (tasks/reward_learning/rule_world.py, docs/papers/adaptive-rules.md) generates the hidden preference
of a pair from the adherence gap on the prompt's relevant rules R(x) (weight 1; every other rule weighs
`irrelevant_relevance`, 0.1). This method reads R(x) as the rules of the pair's largest relevance in the problem's
relevance matrix (the generator's own rel_k(x), known exactly here), labels A as chosen iff the judge's summed scores
over R(x) favour it (ties: A, as the paper's code), and trains the same Bradley–Terry reward model as the rule
strategies (methods/reward_learning/_rules.py). It is the best any choice of rules can do with the judges' noisy
scores, without the selection's guess of which rules matter: an upper bound for adaptive selection, not a paper's
method.

Use: the positive control `true-rules-beat-random-rules` of leaderboard/papers/adaptive-rules.yaml. If labels from the
true rules did not beat labels from random rules by the claims' 3 points in every seed (a preference that ignores the
rules, judges too noisy to read them), no rule selection could show its gain in this world.

`shuffle`: the null. Each pair is labelled by the relevant rules of another pair (the relevance rows permuted among
the training pairs, ctx.rng): as many rules per label, chosen without the pair's own relevance.

Fidelity: not a paper's method (a control of our world); reads the generator's relevance rel_k(x) as the true rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._rules import RewardModelConfig, labelled_result
from tasks.reward_learning import RuleWorldProblem, RuleWorldResult

SWITCHED_OFF = ("a reference, not a paper's method (reads the generator's relevant rules: the rule world's positive "
                "control): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config(RewardModelConfig):
    shuffle: bool = False    # the null: each pair labelled by another pair's true rules


def true_rules(relevance: np.ndarray) -> np.ndarray:
    """(n, K) mask of R(x): the rules of each pair's largest relevance (all rules where every relevance is equal)."""
    return relevance >= relevance.max(axis=1, keepdims=True)


def labels_from_mask(scores_a: np.ndarray, scores_b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """1 where the masked rules' summed scores favour A (ties: A)."""
    return (np.sum(np.where(mask, scores_a, 0.0), axis=1) >= np.sum(np.where(mask, scores_b, 0.0), axis=1)).astype(int)


@method(family="reward_learning", config=Config, accepts=RuleWorldProblem,
        reference="reads the generator's relevant rules of each pair: the world's positive control")
def solve(problem: RuleWorldProblem, config: Config, ctx: RunContext) -> RuleWorldResult:
    mask = true_rules(problem.relevance)
    if config.shuffle:
        mask = mask[ctx.rng.permutation(len(mask))]
    labels = labels_from_mask(problem.scores_a, problem.scores_b, mask)
    return labelled_result(problem, labels, float(mask.sum(axis=1).mean()), config.rm_l2)
