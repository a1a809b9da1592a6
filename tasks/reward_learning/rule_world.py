"""Rule world: response pairs judged under K fine-grained rules, a hidden preference that depends on a few of them.

Li et al., "RuleAdapter: Dynamic Rules for training Safety Reward Models in RLHF", ICML 2025,
arXiv 2501.15453; the synthetic world of docs/papers/adaptive-rules.md, standing in for
the paper's 100-rule pool rated by a Llama-3-70B judge.

Per pair (prompt x, responses A, B):
* the prompt has a topic t (one of 10 clusters of K/10 rules) and a relevant set R(x) of 3–8
  rules of that cluster; rel_k(x) = 1 on R(x), `irrelevant_relevance` (0.1) elsewhere;
* adherence a_k(y) ∈ [−1, 1]: uniform on the relevant rules; near 1 on the others
  (1 − Exp(mean 0.15), capped at −1: most responses follow an irrelevant rule, a few break it);
* hidden truth Z = 1[Σ_k rel_k (a_k(A) − a_k(B)) + ξ > 0], ξ ~ Logistic(0, τ);
* judge scores s_k(y) = clip(a_k(y) + N(0, σ_k²), −1, 1), σ = `judge_noise` on relevant rules and
  `irrelevant_noise` on the others (the judge is unreliable where a rule does not apply);
* a single overall judgement o(y) = Σ_k rel_k a_k(y) + N(0, `overall_noise`²) (a holistic rating);
* the reward model sees f(y) = a(y) + N(0, `feature_noise`²) of a response and, of the prompt,
  the indicator of R(x) with each bit flipped with probability `prompt_noise` (its "text").
Categories of the held-out pairs, analogues of RewardBench's sections, by topic: safety (topics
0–2), reasoning (3–4), chat (5–7), chat-hard (8–9). A chat-hard pair is subtle and distracting:
B's relevant adherence is A's plus N(0, 0.2²), and one of the two responses breaks three irrelevant
rules (a = −1), a large difference the truth weighs by only 0.1.

Fidelity: approximate (our design; every constant is unverified). The paper's world is text
rated by an LLM judge; its "relevance" column is taken here as known exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.reward_learning import CATEGORIES, RuleWorldProblem

N_TOPICS = 10
CATEGORY_OF_TOPIC = np.array([2, 2, 2, 3, 3, 0, 0, 0, 1, 1])  # index into CATEGORIES
CHAT_HARD = CATEGORIES.index("chat_hard")

SMALLEST = {"n_train": 200, "n_test": 200}


@dataclass(frozen=True)
class Config:
    n_rules: int = 100                   # K, size of the rule pool (paper: 100)
    n_train: int = 1000                  # pairs labelled to train the reward model (paper: 1K)
    n_test: int = 2000                   # held-out pairs with the hidden preference
    relevant_min: int = 3                # |R(x)| ~ U{3..8} (our design)
    relevant_max: int = 8
    irrelevant_relevance: float = 0.1    # rel_k(x) off R(x)
    temperature: float = 0.1             # τ of the logistic noise ξ in the hidden preference
    judge_noise: float = 0.2             # σ on relevant rules (design: 0.2 or 0.5)
    irrelevant_noise: float = 0.5        # σ_irrel on irrelevant rules (design: heavy, ≥ 0.5)
    overall_noise: float = 1.0           # noise of the single overall judgement
    feature_noise: float = 0.2           # noise of the reward model's view of adherence
    prompt_noise: float = 0.01           # flip probability of the reward model's view of R(x)

    def __post_init__(self) -> None:
        if self.n_rules < 2 * N_TOPICS or self.n_rules % N_TOPICS:
            raise ValueError(f"n_rules must be a multiple of {N_TOPICS} and >= {2 * N_TOPICS}, got {self.n_rules}")
        if not 1 <= self.relevant_min <= self.relevant_max <= self.n_rules // N_TOPICS:
            raise ValueError(f"need 1 <= relevant_min <= relevant_max <= n_rules/{N_TOPICS} "
                             f"= {self.n_rules // N_TOPICS}")
        if self.n_train < 1 or self.n_test < 1:
            raise ValueError("n_train and n_test must be >= 1")
        noises = (self.temperature, self.judge_noise, self.irrelevant_noise, self.overall_noise, self.feature_noise)
        if min(noises) < 0 or not 0 <= self.irrelevant_relevance <= 1 or not 0 <= self.prompt_noise <= 0.5:
            raise ValueError("noise levels must be >= 0, irrelevant_relevance in [0, 1] and prompt_noise in [0, 0.5]")


def draw_pairs(config: Config, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """n pairs of the world; every array has the pairs on axis 0."""
    k, size = config.n_rules, config.n_rules // N_TOPICS
    topic = rng.integers(0, N_TOPICS, n)
    n_rel = rng.integers(config.relevant_min, config.relevant_max + 1, n)
    ranks = np.argsort(rng.random((n, size)), axis=1)                          # a random order of the cluster
    member = ranks < n_rel[:, None]                                             # (n, size) the first |R| rules
    relevant = np.zeros((n, k), dtype=bool)
    rows = np.repeat(np.arange(n), size)
    relevant[rows, (topic[:, None] * size + np.arange(size)).ravel()] = member.ravel()
    rel = np.where(relevant, 1.0, config.irrelevant_relevance)

    def adherence():
        return np.where(relevant, rng.uniform(-1, 1, (n, k)), np.maximum(1 - rng.exponential(0.15, (n, k)), -1.0))

    a, b = adherence(), adherence()
    hard = CATEGORY_OF_TOPIC[topic] == CHAT_HARD
    b = np.where(relevant & hard[:, None], np.clip(a + 0.2 * rng.standard_normal((n, k)), -1, 1), b)
    keys = rng.random((n, k)) + relevant                                        # relevant rules sort last
    distract = hard[:, None] & (keys.argsort(axis=1).argsort(axis=1) < 3)       # 3 random irrelevant rules
    a_breaks = rng.random(n) < 0.5
    a = np.where(distract & a_breaks[:, None], -1.0, a)
    b = np.where(distract & ~a_breaks[:, None], -1.0, b)
    utility_gap = np.sum(rel * (a - b), axis=1)
    xi = rng.logistic(0.0, config.temperature, n) if config.temperature > 0 else np.zeros(n)
    sigma = np.where(relevant, config.judge_noise, config.irrelevant_noise)

    def judged(adh):
        return np.clip(adh + sigma * rng.standard_normal((n, k)), -1.0, 1.0)

    def overall(adh):
        return np.sum(rel * adh, axis=1) + config.overall_noise * rng.standard_normal(n)

    def seen(adh):
        return adh + config.feature_noise * rng.standard_normal((n, k))

    prompt = (relevant ^ (rng.random((n, k)) < config.prompt_noise)).astype(float)
    return {"prompt": prompt, "relevance": rel, "preference": (utility_gap + xi > 0).astype(int),
            "scores_a": judged(a), "scores_b": judged(b), "overall_a": overall(a), "overall_b": overall(b),
            "features_a": seen(a), "features_b": seen(b), "category": CATEGORY_OF_TOPIC[topic]}


@task(family="reward_learning", config=Config, version=1, problem=RuleWorldProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> RuleWorldProblem:
    train = draw_pairs(config, config.n_train, ctx.rng)
    test = draw_pairs(config, config.n_test, ctx.rng)
    return RuleWorldProblem(
        scores_a=train["scores_a"], scores_b=train["scores_b"], relevance=train["relevance"],
        overall_a=train["overall_a"], overall_b=train["overall_b"], prompt_features=train["prompt"],
        features_a=train["features_a"], features_b=train["features_b"], preference=train["preference"],
        test_prompt_features=test["prompt"], test_features_a=test["features_a"], test_features_b=test["features_b"],
        test_preference=test["preference"], test_category=test["category"])
