"""Reward learning from pairwise preferences: clone robustness, rule-based labels, RewardBench.

Contract of the family. Three kinds of instance, one typed problem each; a method states in its
`skip` which kind it takes, and `score` (the only judge) dispatches on the problem's type.

* `ClonesProblem` (Procaccia, Schiffer & Zhang, "Clone-Robust AI Alignment", ICML 2025, arXiv
  2501.09254; docs/papers/rlhf-clones.md). Alternatives are points of a box S ⊂ ℝ^d with a
  population of Bradley–Terry annotator types; two preference datasets are given as win-rate
  matrices p_D(a ≻ b): the original alternatives M, and M plus near-duplicates ("clones") at
  distance ε of some originals. A method returns one learned reward per alternative for each
  dataset (`ClonesResult`). Scored: how much the reward of the originals moves when the clones are
  added, the clone–original gap, rank correlation and top-1 agreement with the population-average
  reward, and the first-order (weighted win-rate) residual of the method's own objective (§2.3):
      λ r_a = Σ_b w_b [p_D(a ≻ b) − σ(r_a − r_b)]   for every a with w_a > 0,
  at the λ of the method's Config field `lam` (the result declares it; the harness checks the declaration against
  the cell's config) and the weights w the result states (the method computes them: Voronoi volumes drawn with the
  run's rng, the clone groups, or 1).
* `RuleWorldProblem` (Li et al., "RuleAdapter: Dynamic Rules for training Safety Reward Models in
  RLHF", ICML 2025, arXiv 2501.15453; docs/papers/adaptive-rules.md). Response pairs
  judged under K fine-grained rules with a hidden true preference; a method labels the training
  pairs and trains a reward model over response features (`RuleWorldResult`). Scored: label
  accuracy and the mutual information between labels and the hidden preference, and the reward
  model's accuracy on held-out pairs, overall and per category (chat, chat-hard, safety,
  reasoning analogues).
* `RewardBenchProblem` (Lambert et al., RewardBench; the protocol of allenai/reward-bench): prompt /
  chosen / rejected triples with their subset; a method returns a score per response
  (`RewardBenchResult`). Scored as the official code does (see tasks/reward_learning/_rewardbench.py):
  a triple is correct iff score(chosen) > score(rejected) strictly (ties count as wrong), subset
  accuracy is the mean over its triples, each section the EXAMPLE_COUNTS-weighted mean of its subsets'
  accuracies, and the overall score the mean of the sections present.
The family's primary metric, `pairwise_accuracy`, exists for every kind: the fraction of evaluation
pairs the learned reward orders as the truth does (clones: pairs of originals by the population-average
reward, fit on the data with clones; rule_world: held-out pairs by the hidden preference; RewardBench:
all triples, unweighted). All accuracies are fractions in [0, 1] (the official leaderboard prints ×100).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from bench.spec import Metric
from tasks.reward_learning._rewardbench import SUBSET_METRICS, rewardbench_scores

# ---- clones ------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class ClonesProblem:
    points: np.ndarray         # (m, d) embeddings of the original alternatives M
    win: np.ndarray            # (m, m) p_D(a ≻ b) on M; p_ab + p_ba = 1 off the diagonal
    clone_points: np.ndarray   # (m + k, d) M followed by the k clones
    clone_win: np.ndarray      # (m + k, m + k) p_D on the dataset with clones
    clone_of: np.ndarray       # (k,) index in M of the alternative each clone duplicates
    true_reward: np.ndarray    # (m,) population-average reward Σ_i α_i r_i(x) on M
    themes: np.ndarray         # (m,) theme index of each original (for the theme-level top-1)
    theme_names: tuple[str, ...]
    box: tuple[float, float]   # S = [lo, hi]^d, the space the Voronoi weights are measured in

    def __post_init__(self) -> None:
        m, k = len(self.points), len(self.clone_of)
        if self.win.shape != (m, m) or self.clone_win.shape != (m + k, m + k) or len(self.clone_points) != m + k:
            raise ValueError("inconsistent shapes: points (m, d), win (m, m), clone_points (m+k, d), "
                             "clone_win (m+k, m+k)")


@dataclass(frozen=True, eq=False)
class ClonesResult:
    reward: np.ndarray          # (m,) learned reward on the original dataset
    clone_reward: np.ndarray    # (m + k,) learned reward on the dataset with clones
    weights: np.ndarray         # (m,) the weights w of the method's objective (all 1: standard MLE)
    clone_weights: np.ndarray   # (m + k,)
    lam: float                  # λ, the L2 coefficient of the objective: the method's Config field `lam`

    @property
    def declared(self) -> dict[str, float]:
        """λ is configuration: the harness checks it against the cell's config field `lam`
        (bench.observe.check_declared), so the kkt_residual is taken at the λ the cell ran with."""
        return {"lam": self.lam}


# ---- rule world --------------------------------------------------------------------------------

CATEGORIES = ("chat", "chat_hard", "safety", "reasoning")


@dataclass(frozen=True, eq=False)
class RuleWorldProblem:
    scores_a: np.ndarray        # (n, K) judge scores s_k(A) ∈ [−1, 1] of the training pairs
    scores_b: np.ndarray        # (n, K) judge scores s_k(B)
    relevance: np.ndarray       # (n, K) rel_k(x) of each pair's prompt (the rated data's relevance column)
    overall_a: np.ndarray       # (n,) a single overall (holistic) judge score of A
    overall_b: np.ndarray       # (n,) the same for B
    prompt_features: np.ndarray  # (n, K) what the reward model sees of the prompt (which rules it triggers, noisy)
    features_a: np.ndarray      # (n, K) what the reward model sees of A (a noisy view of its adherence)
    features_b: np.ndarray      # (n, K)
    preference: np.ndarray      # (n,) hidden truth Z = 1[A ≻ B] of the training pairs (scoring only)
    test_prompt_features: np.ndarray  # (n_test, K)
    test_features_a: np.ndarray  # (n_test, K)
    test_features_b: np.ndarray  # (n_test, K)
    test_preference: np.ndarray  # (n_test,) hidden truth of the held-out pairs (scoring only)
    test_category: np.ndarray   # (n_test,) index into CATEGORIES

    @property
    def n_rules(self) -> int:
        return int(self.scores_a.shape[1])


@dataclass(frozen=True, eq=False)
class RuleWorldResult:
    labels: np.ndarray          # (n,) 1 if the method labels A as chosen
    test_reward_a: np.ndarray   # (n_test,) the trained reward model's r(x, A) on the held-out pairs
    test_reward_b: np.ndarray   # (n_test,)
    rules_used: float           # mean number of rules behind one label


# ---- RewardBench -------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class RewardBenchProblem:
    prompts: tuple[str, ...]
    chosen: tuple[str, ...]
    rejected: tuple[str, ...]
    subsets: tuple[str, ...]
    ids: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.prompts)


@dataclass(frozen=True, eq=False)
class RewardBenchResult:
    scores_chosen: np.ndarray    # (n,) reward of prompt + chosen
    scores_rejected: np.ndarray  # (n,) reward of prompt + rejected


METRICS = {
    # every task: the primary
    "pairwise_accuracy": Metric(True, "", True, "fraction of evaluation pairs the learned reward orders as the truth "
                                "does: clones: pairs of M by the true reward (fit on the data with clones); "
                                "rule_world: held-out pairs by the hidden preference; rewardbench: all triples, "
                                "unweighted", bounds=(0.0, 1.0)),
    # clones
    "clone_shift": Metric(False, "", False, "max over the originals of |r_clones(x) − r_original(x)|, "
                          "the paper's robustness quantity", bounds=(0.0, None)),
    "clone_shift_centred": Metric(False, "", False, "the same after removing each fit's mean over the originals "
                                  "(ranking-relevant part)", bounds=(0.0, None)),
    "clone_gap": Metric(False, "", False, "max over the clones of |r(x') − r(x)|, x the alternative x' duplicates",
                        bounds=(0.0, None)),
    "rank_corr_original": Metric(True, "", False, "Spearman correlation of the learned and the population-average "
                                 "reward on M (original data)", bounds=(-1.0, 1.0)),
    "rank_corr_clones": Metric(True, "", False, "the same for the fit on the data with clones", bounds=(-1.0, 1.0)),
    "top1_original": Metric(True, "", False, "1 if the learned top alternative of M is the true one (original data)",
                            bounds=(0.0, 1.0)),
    "top1_clones": Metric(True, "", False, "the same for the fit on the data with clones", bounds=(0.0, 1.0)),
    "top_theme_flip": Metric(False, "", False, "1 if the theme with the highest mean learned reward differs "
                             "between the two datasets", bounds=(0.0, 1.0)),
    "kkt_residual": Metric(False, "", False, "max |λ r_a − Σ_b w_b (p_ab − σ(r_a − r_b))| over a with w_a > 0, "
                           "both fits", bounds=(0.0, None)),
    # rule world
    "label_accuracy": Metric(True, "", False, "agreement of the training labels with the hidden preference",
                             bounds=(0.0, 1.0)),
    "label_mutual_information": Metric(True, "nats", False, "plug-in I(label; hidden preference) "
                                       "on the training pairs", bounds=(0.0, None)),
    "rules_used": Metric(False, "", False, "mean number of rules aggregated into one label", bounds=(0.0, None)),
    # RewardBench (and the rule world's category analogues share the section names)
    "rewardbench_score": Metric(True, "", False, "mean of the section scores present "
                                "(Chat, Chat Hard, Safety, Reasoning)", bounds=(0.0, 1.0)),
    "chat": Metric(True, "", False, "Chat section (RewardBench) / chat analogue (rule_world): accuracy",
                   bounds=(0.0, 1.0)),
    "chat_hard": Metric(True, "", False, "Chat Hard section / chat-hard analogue: accuracy", bounds=(0.0, 1.0)),
    "safety": Metric(True, "", False, "Safety section / safety analogue: accuracy", bounds=(0.0, 1.0)),
    "reasoning": Metric(True, "", False, "Reasoning section (math-prm weighted as all code subsets) / analogue: "
                        "accuracy", bounds=(0.0, 1.0)),
    **{name: Metric(True, "", False, f"RewardBench subset {subset}: accuracy")
       for subset, name in SUBSET_METRICS.items()},
}


# ---- helpers shared by methods and the judge -----------------------------------------------------

def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))  # stable for any |x|


def kkt_residual(win: np.ndarray, weights: np.ndarray, reward: np.ndarray, lam: float) -> float:
    """max_a |λ r_a − Σ_{b≠a} w_b (p_ab − σ(r_a − r_b))| over the alternatives with w_a > 0 (§2.3)."""
    diff = sigmoid(reward[:, None] - reward[None, :])
    off = ~np.eye(len(reward), dtype=bool)
    rhs = np.sum(np.where(off, weights[None, :] * (win - diff), 0.0), axis=1)
    res = np.abs(lam * reward - rhs)
    return float(res[weights > 0].max())


def mutual_information(x: np.ndarray, y: np.ndarray) -> float:
    """Plug-in I(X; Y) in nats of two binary arrays (0 log 0 = 0)."""
    x, y = np.asarray(x).astype(int), np.asarray(y).astype(int)
    joint = np.array([[np.mean((x == i) & (y == j)) for j in (0, 1)] for i in (0, 1)])
    px, py = joint.sum(1), joint.sum(0)
    mask = joint > 0
    return float(np.sum(joint[mask] * np.log(joint[mask] / np.outer(px, py)[mask])))


def _top_theme(problem: ClonesProblem, reward: np.ndarray) -> int:
    means = [reward[problem.themes == t].mean() for t in range(len(problem.theme_names))]
    return int(np.argmax(means))


def _score_clones(problem: ClonesProblem, result: ClonesResult) -> dict[str, float]:
    m = len(problem.points)
    r0, r1 = np.asarray(result.reward, float), np.asarray(result.clone_reward, float)
    if r0.shape != (m,) or r1.shape != (len(problem.clone_points),):
        raise ValueError(f"ClonesResult rewards must have shapes ({m},) and ({len(problem.clone_points)},)")
    orig = r1[:m]
    upper = np.triu(np.ones((m, m), dtype=bool), 1)
    truth = np.sign(problem.true_reward[:, None] - problem.true_reward[None, :])[upper]
    scores = {
        "pairwise_accuracy": float(np.mean(np.sign(orig[:, None] - orig[None, :])[upper] == truth)) if m > 1 else 1.0,
        "clone_shift": float(np.max(np.abs(orig - r0))),
        "clone_shift_centred": float(np.max(np.abs((orig - orig.mean()) - (r0 - r0.mean())))),
        "clone_gap": float(np.max(np.abs(r1[m:] - r1[problem.clone_of]))) if len(problem.clone_of) else 0.0,
        "top1_original": float(np.argmax(r0) == np.argmax(problem.true_reward)),
        "top1_clones": float(np.argmax(orig) == np.argmax(problem.true_reward)),
        "top_theme_flip": float(_top_theme(problem, r0) != _top_theme(problem, orig)),
        "kkt_residual": max(kkt_residual(problem.win, np.asarray(result.weights, float), r0, result.lam),
                            kkt_residual(problem.clone_win, np.asarray(result.clone_weights, float), r1, result.lam)),
    }
    if m > 2:
        scores["rank_corr_original"] = float(spearmanr(r0, problem.true_reward).statistic)
        scores["rank_corr_clones"] = float(spearmanr(orig, problem.true_reward).statistic)
    return scores


def _score_rules(problem: RuleWorldProblem, result: RuleWorldResult) -> dict[str, float]:
    labels = np.asarray(result.labels).astype(int)
    if labels.shape != problem.preference.shape:
        raise ValueError(f"RuleWorldResult.labels must have shape {problem.preference.shape}")
    margin = np.asarray(result.test_reward_a, float) - np.asarray(result.test_reward_b, float)
    correct = (margin > 0) == problem.test_preference.astype(bool)  # a tie counts as wrong
    scores = {
        "pairwise_accuracy": float(correct.mean()),
        "label_accuracy": float(np.mean(labels == problem.preference)),
        "label_mutual_information": mutual_information(labels, problem.preference),
        "rules_used": float(result.rules_used),
    }
    for index, name in enumerate(CATEGORIES):
        in_category = problem.test_category == index
        if in_category.any():
            scores[name] = float(correct[in_category].mean())
    return scores


def score(problem, result) -> dict[str, float]:
    if isinstance(problem, ClonesProblem):
        return _score_clones(problem, result)
    if isinstance(problem, RuleWorldProblem):
        return _score_rules(problem, result)
    if isinstance(problem, RewardBenchProblem):
        return rewardbench_scores(problem.subsets, result.scores_chosen, result.scores_rejected)
    raise TypeError(f"not a reward_learning problem: {type(problem).__name__}")
