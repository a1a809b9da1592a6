"""Preference alignment of a language model: DPO-style objectives judged by a gold reward and win rates.

Contract of the family. A method starts from the task's SFT policy π_SFT (`sft_path`: the task's tiny model, or any
hub id / local directory given as the task's `model`), trains it on preference pairs and returns its
sampled answers to the evaluation prompts with their log-probabilities under the policy and the
reference, the trained policy itself, and the pairs it trained on (`PreferenceResult`). `score` is the only judge:
it judges the answers, and measures on the returned policy what the method's own evaluation once reported (the
probe set's implicit reward, the external benchmarks; tasks/preference/_observe.py, docs/metrics-audit.md):

* `win_rate` (primary): the AlpacaEval 2.0 raw win rate against the baseline's answers, in [0, 1]: the
  mean of 1[judge prefers the policy] with ties counted ½ (preference_world: the judge is the hidden gold
  reward; the baseline is the SFT policy's sampled answer to the same prompt).
* `lc_win_rate`: a length-controlled win rate, in [0, 1]. On `alpacaeval` it is AlpacaEval 2.0's published LC
  metric (Dubois et al. 2024; tasks/preference/_alpacaeval_lc.py: the GLM with its instruction-difficulty term,
  the difficulties fitted across the AlpacaEval leaderboard's models, and the gamed-baseline regularisation when
  those annotations are available), through the problem's `lc_win_rate` hook. Elsewhere (preference_world,
  long_context_alignment: one policy against one baseline, no other models) it is the simpler per-model fit
  `length_controlled_win_rate_simple`: logit P(win) = θ + φ·tanh((len_m − len_b) / std(len_m − len_b)), fitted by
  maximum likelihood on the (soft) preferences, LC = σ(θ), the win probability at equal length. That is not the
  AlpacaEval LC number: without the difficulty term it over-corrects short answers. Lengths are in characters.
* per category c (math, coding, creative_writing, recommendations; long_context_alignment: the context lengths
  short, medium, long, where the gold reward is the answer's exact match): `win_rate_<c>`, `gold_reward_<c>`.
* `gold_reward`: the category-balanced mean gold reward of the policy's answers (pointwise judges only).
* `kl_to_reference`: the Monte-Carlo KL(π‖π_ref) = E_{y~π}[log π(y|x) − log π_ref(y|x)] over the samples.
* `reward_pearson`, `slope1_error` (EPA's intrinsic evaluation, Table 1): how close the learned implicit reward r_θ on a
  fixed probe set of K responses per prompt is to slope-1 linearity in the BT-scale true reward r*/τ:
  the per-prompt Pearson correlation, averaged, and ε̂ = mean_x min_c mean_y (r_θ − r*/τ − c)². score computes
  r_θ = β(log πθ − log π_ref) itself, running the returned policy and the reference π_SFT, for a method that declares
  the β of such a reward (`declared`: beta; the harness checks it against the config).
* `lm_eval_<task>_<metric>`: lm-evaluation-harness scores of the trained policy (long_context_alignment's
  `lm_eval_tasks`, tasks/preference/_harness.py), declared by prefix (METRIC_PREFIXES) since the names depend on
  the suites asked for; most are higher-better (accuracy, F1, exact match, RULER), perplexities are not.
  `longbench_average` and `longbench_<category>` (named) are LOGO's Table 1 metric from those scores. score runs the
  problem's `external_eval` hook on the returned policy.
* `on_policy_fraction`: the realised share of on-policy pairs in the training data (SimpleMix's mixing), from the
  pairs the method returns: each on-policy pair must be a preference the problem's annotator gave during the solve
  (the problem's meter keeps every list it ranked), each off-policy pair one of the problem's off-policy lists.

The tabular bandit world (preference_bandit, docs/papers/epa.md; `BanditPreferenceProblem`): a method returns its
policy's whole table log πθ(y|x) and β (`BanditPreferenceResult`, which declares β for the harness to check against
the config); every metric is exact, over all P × V cells:
* `win_rate` (primary): P(r*(x, y) > r*(x, y′)) + ½ P(=), y ~ πθ(·|x), y′ ~ π_ref(·|x), averaged over prompts.
* `true_value` J = E_x E_{y~πθ} r*(x, y); `kl_to_reference` the exact KL(πθ‖π_ref), averaged over prompts.
* `reward_pearson`, `slope1_error` over all cells and `reward_pearson_seen`, `slope1_error_seen` over the
  cells of each prompt's annotated lists, of r_θ = β(log πθ − log π_ref) against the BT-scale r*/τ (the scale
  of the labels, so that the BT / DPO population minimiser r*/τ + c(x) has ε̂ = 0).
* `train_loss`: the method's training objective on all the data at the end.
* `true_value_at_kl`: the KL–reward frontier at one point: J linearly interpolated, along the method's training
  trace of (KL, J), at the first point where its KL reaches the task's `kl_budget` (absent if it never does).
* `slope1_error_at_kl`: ε̂ of the policy that training stopped at KL(πθ‖π_ref) = `kl_budget` would give: ε̂
  linearly interpolated along the trace where its KL first reaches the budget, or the final policy's ε̂ if training
  never moves that far (a method that learns nothing keeps its zero reward's ε̂). The bandit's data are nearly
  separable and have no finite DPO / EPA minimiser, so the final ε̂ grows with the training budget (it ranks how
  far each method's logits run away); stopped at one KL, every method has moved equally far from π_ref and ε̂
  compares how linear in r*/τ the rewards are (the paper trains for a fixed few epochs, never to convergence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from bench.observe import Meter
from bench.spec import Metric
from tasks.preference._harness import LONGBENCH_CATEGORIES
from tasks.preference._long_context import LENGTHS

# what the family's methods may use of its worlds, beyond the problem and result types (they import no private
# task module: tests/test_layers.py)
from tasks.preference._long_context import synthesize_positions as synthesize_positions
from tasks.preference._observe import Labeller, external_scores, probe_rewards, returned_model, training_share
from tasks.preference._world import CATEGORIES


@dataclass(frozen=True, eq=False)
class PreferenceProblem:
    sft_path: str                          # directory of the SFT policy π_SFT (model + tokenizer); also π_ref
    tiny: bool                             # True when π_SFT is the task's own tiny model (CPU-scale defaults)
    train_prompts: tuple[str, ...]         # prompts x of the preference data
    train_categories: tuple[str, ...]
    off_policy: tuple[tuple[str, ...], ...]  # per train prompt, K responses of other policies, best first
    annotate: Callable                     # (prompt, responses, rng) -> indices best first (the labeller; each list
                                           # it ranks is kept on `meter`)
    eval_prompts: tuple[str, ...]          # each evaluation prompt repeated `eval_samples` times
    eval_categories: tuple[str, ...]
    baseline_responses: tuple[str, ...]    # π_SFT's sampled answer to each eval prompt (the win-rate baseline)
    probe_prompts: tuple[str, ...]         # prompts of the implicit-reward probe set
    probe_responses: tuple[tuple[str, ...], ...]  # K responses per probe prompt
    judge: Callable | None                 # (prompts, responses) -> gold rewards (scoring only; None: pairwise only)
    label_temperature: float               # τ of the annotator's Bradley–Terry / Plackett–Luce model
    max_new_tokens: int
    categories: tuple[str, ...] = CATEGORIES
    pairwise_judge: Callable | None = None  # (prompts, responses, baseline) -> P(answer ≻ baseline) (AlpacaEval's
                                            # judge)
    position_window: int = 0               # K of LOGO's position synthesis for the training data (0: real positions)
    external_eval: Callable | None = None  # (model, tokenizer, device) -> {metric: value} on the trained policy
                                           # (lm_eval)
    lc_win_rate: Callable | None = None    # (preferences, answer lengths, baseline lengths) -> LC in [0, 1] or None
                                           # (not computable); the field None: the simple per-model fit
    meter: Meter = field(init=False, repr=False, compare=False, default=None)  # the lists `annotate` ranked (issued)

    def __post_init__(self) -> None:
        object.__setattr__(self, "meter", Meter())
        object.__setattr__(self, "annotate", Labeller(self.annotate, self.meter))


@dataclass(frozen=True, eq=False)
class PreferenceResult:
    responses: tuple[str, ...]             # the trained policy's sampled answer to each eval prompt
    logp_policy: np.ndarray                # (n,) log π(y|x) of those answers (the method's: kl_to_reference only)
    logp_ref: np.ndarray                   # (n,) log π_ref(y|x)
    model: Any = None                      # the trained policy (a transformers causal LM), which score evaluates
    tokenizer: Any = None                  # its tokenizer
    on_policy_pairs: tuple[tuple[str, str, str], ...] = ()   # (prompt, chosen, rejected) trained on, labelled by
                                                             # problem.annotate during the solve
    off_policy_pairs: tuple[tuple[str, str, str], ...] = ()  # the same, from problem.off_policy
    on_policy_fraction: float | None = None  # the method's own share of on-policy pairs (checked: Misreport)
    declared: dict = field(default_factory=dict)  # config field -> value the scorer uses, checked by the harness:
                                                  # "beta" of an implicit reward β(log π − log π_SFT)


METRICS = {
    "win_rate": Metric(True, "", True, "raw win rate against the baseline's answers (ties ½), AlpacaEval 2.0 WR / 100",
                       bounds=(0.0, 1.0)),
    "lc_win_rate": Metric(True, "", False, "length-controlled win rate / 100: alpacaeval: AlpacaEval 2.0's LC GLM; "
                                            "other tasks: the simple per-model fit σ(θ) (not AlpacaEval's LC)",
                                                bounds=(0.0, 1.0)),
    "gold_reward": Metric(True, "", False, "category-balanced mean gold reward of the policy's answers"),
    "kl_to_reference": Metric(False, "nats", False, "Monte-Carlo KL(π‖π_ref) over the policy's sampled answers"),
    "mean_length": Metric(False, "chars", False, "mean length of the policy's answers", bounds=(0.0, None)),
    "reward_pearson": Metric(True, "", False, "per-prompt Pearson of the implicit reward and the true reward, "
                             "averaged", bounds=(-1.0, 1.0)),
    "slope1_error": Metric(False, "", False, "ε̂ = mean_x min_c mean_y (r_θ − r*/τ − c)², slope-1 linearity error",
                           bounds=(0.0, None)),
    "on_policy_fraction": Metric(True, "", False, "realised share of on-policy pairs in the training data",
                                 bounds=(0.0, 1.0)),
    "longbench_average": Metric(True, "", False, "LongBench (English, code excluded) mean of the five category scores "
                                "× 100 (LOGO Table 1)", bounds=(0.0, 100.0)),
    **{f"longbench_{c}": Metric(True, "", False, f"LongBench {c.replace('_', ' ')}: mean task score × 100",
                                      bounds=(0.0, 100.0))
       for c in LONGBENCH_CATEGORIES},
    "reward_pearson_seen": Metric(True, "", False, "reward_pearson over the responses of each prompt's "
                                  "annotated lists", bounds=(-1.0, 1.0)),
    "slope1_error_seen": Metric(False, "", False, "slope1_error over the responses of each prompt's annotated lists",
                                bounds=(0.0, None)),
    "true_value": Metric(True, "", False, "exact J = E_x E_{y~πθ} r*(x, y) (bandit world)"),
    "train_loss": Metric(False, "nats", False, "the method's training objective on all the data at the end"),
    "true_value_at_kl": Metric(True, "", False, "J where the training trace first reaches KL(πθ‖π_ref) = kl_budget"),
    "slope1_error_at_kl": Metric(False, "", False, "slope1_error where the training trace first reaches "
                                 "KL(πθ‖π_ref) = kl_budget (the final one if it never does)", bounds=(0.0, None)),
    **{f"win_rate_{c}": Metric(True, "", False, f"win rate on the {c} prompts", bounds=(0.0, 1.0))
       for c in CATEGORIES},
    **{f"gold_reward_{c}": Metric(True, "", False, f"mean gold reward on the {c} prompts") for c in CATEGORIES},
    **{f"win_rate_{c}": Metric(True, "", False, f"win rate on the {c} contexts ({n} chunks)",
                                     bounds=(0.0, 1.0))
       for c, n in LENGTHS.items()},
    **{f"gold_reward_{c}": Metric(True, "", False, f"answer accuracy on the {c} contexts ({n} chunks)",
                                        bounds=(0.0, 1.0))
       for c, n in LENGTHS.items()},
}


@dataclass(frozen=True, eq=False)
class BanditPreferenceProblem:
    ref_logp: np.ndarray          # (P, V) log π_ref(y|x), also the policy's initialisation
    list_prompts: np.ndarray      # (N,) prompt index of each annotated list
    lists: np.ndarray             # (N, K) response indices of each list, best first (UF-all-like)
    binarized: np.ndarray         # (N,) each list's UF-binarized-like rejected response: a random non-best member
    label_temperature: float      # τ of the annotator's Plackett–Luce model in r*/τ
    true_reward: np.ndarray       # (P, V) r*(x, y): for scoring only, methods never read it
    kl_budget: float = 1.0        # KL(πθ‖π_ref) at which `true_value_at_kl` reads the trace (scoring only)

    @property
    def seen(self) -> np.ndarray:
        """(P, V) True where the response appears in one of the prompt's annotated lists."""
        mask = np.zeros(self.ref_logp.shape, dtype=bool)
        mask[np.repeat(self.list_prompts, self.lists.shape[1]), self.lists.ravel()] = True
        return mask


@dataclass(frozen=True, eq=False)
class BanditPreferenceResult:
    log_policy: np.ndarray        # (P, V) log πθ(y|x) of the trained policy
    beta: float                   # β of its implicit reward r_θ = β(log πθ − log π_ref)
    train_loss: float             # the training objective on all the data at the end
    trace: tuple = ()             # ((step, (P, V) log πθ), ...) over training, step 0 first (the KL–reward trace)

    @property
    def declared(self) -> dict:
        """β scales every implicit reward score reads: the harness checks it against the run's config."""
        return {"beta": self.beta}


METRIC_PREFIXES = {
    "lm_eval_": Metric(True, "", False, "lm-evaluation-harness score of the trained policy, lm_eval_<task>_<metric>"),
}


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def length_controlled_win_rate_simple(preference, length_difference, ridge: float = 1e-6) -> float:
    """σ(θ) of the per-model GLM logit P(win) = θ + φ·tanh(Δlen / std(Δlen)), fitted by Newton's method.

    Not AlpacaEval's LC metric (no instruction-difficulty term, no gamed baselines: see _alpacaeval_lc.py).
    `preference` ∈ [0, 1] (soft labels, ties ½); `ridge` only keeps a separable fit finite."""
    y = np.asarray(preference, dtype=float)
    delta = np.asarray(length_difference, dtype=float)
    std = delta.std()
    x = np.tanh(delta / std) if std > 0 else np.zeros_like(delta)
    design = np.stack([np.ones_like(x), x], axis=1)                     # (n, 2)
    w = np.zeros(2)
    for _ in range(100):
        p = sigmoid(design @ w)
        grad = design.T @ (p - y) + ridge * w
        hess = (design * (p * (1 - p))[:, None]).T @ design + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-12:
            break
    return float(sigmoid(w[0]))


def win_preferences(policy_scores, baseline_scores) -> np.ndarray:
    """1 where the policy's answer scores higher, ½ on ties, 0 otherwise."""
    a, b = np.asarray(policy_scores, float), np.asarray(baseline_scores, float)
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


def slope1_error(learned: np.ndarray, true: np.ndarray) -> float:
    """ε̂ = mean_x min_c mean_y (learned − true − c)² over (prompts, responses) tables (the min is at the mean)."""
    diff = learned - true
    return float(np.mean((diff - diff.mean(axis=1, keepdims=True)) ** 2))


def slope1_metrics(learned: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """Averaged per-prompt Pearson and ε̂ (slope1_error)."""
    error = slope1_error(learned, true)
    pearsons = [np.corrcoef(l, t)[0, 1] for l, t in zip(learned, true) if l.std() > 0 and t.std() > 0]
    out = {"slope1_error": error}
    if pearsons:
        out["reward_pearson"] = float(np.mean(pearsons))
    return out


def _score_world(problem: PreferenceProblem, result: PreferenceResult) -> dict[str, float]:
    n = len(problem.eval_prompts)
    if len(result.responses) != n:
        raise ValueError(f"PreferenceResult.responses must hold one answer per eval prompt ({n}), "
                         f"got {len(result.responses)}")
    if problem.pairwise_judge is not None:
        gold = None
        wins = np.asarray(problem.pairwise_judge(problem.eval_prompts, result.responses,
                                                 problem.baseline_responses), float)
    else:
        gold = problem.judge(problem.eval_prompts, result.responses)
        wins = win_preferences(gold, problem.judge(problem.eval_prompts, problem.baseline_responses))
    lengths = np.array([len(r) for r in result.responses], float)
    base_lengths = np.array([len(r) for r in problem.baseline_responses], float)
    categories = np.array(problem.eval_categories)
    lc = (problem.lc_win_rate(wins, lengths, base_lengths) if problem.lc_win_rate is not None
          else length_controlled_win_rate_simple(wins, lengths - base_lengths))
    scores = {"win_rate": float(wins.mean()),
              "kl_to_reference": float(np.mean(np.asarray(result.logp_policy) - np.asarray(result.logp_ref))),
              "mean_length": float(lengths.mean())}
    if lc is not None:                                   # None: the hook's GLM cannot be fitted (too few answers)
        scores["lc_win_rate"] = float(lc)
    per_category = []
    for c in problem.categories:
        mask = categories == c
        if mask.any():
            scores[f"win_rate_{c}"] = float(wins[mask].mean())
            if gold is not None:
                scores[f"gold_reward_{c}"] = float(gold[mask].mean())
                per_category.append(scores[f"gold_reward_{c}"])
    if per_category:
        scores["gold_reward"] = float(np.mean(per_category))
    declared = result.declared or {}
    if declared.get("beta") is not None and len(problem.probe_prompts):
        learned = probe_rewards(problem, returned_model(result), declared["beta"])
        true = np.array([problem.judge([p] * len(rs), rs)
                         for p, rs in zip(problem.probe_prompts, problem.probe_responses)])
        scores.update(slope1_metrics(learned, true / problem.label_temperature))
    share = training_share(problem, result)
    if share is not None:
        scores["on_policy_fraction"] = share
    if problem.external_eval is not None:           # lm_eval_<task>_<metric>, longbench_* of the returned policy
        scores.update(external_scores(problem, result))
    return scores


def masked_slope1_metrics(learned: np.ndarray, true: np.ndarray, mask: np.ndarray) -> dict[str, float]:
    """slope1_metrics restricted per prompt to the cells of `mask` (prompts with fewer than two cells left out)."""
    errors, pearsons = [], []
    for l, t, m in zip(learned, true, mask):
        if m.sum() < 2:
            continue
        diff = l[m] - t[m]
        errors.append(np.mean((diff - diff.mean()) ** 2))
        if l[m].std() > 0 and t[m].std() > 0:
            pearsons.append(np.corrcoef(l[m], t[m])[0, 1])
    out = {"slope1_error": float(np.mean(errors))} if errors else {}
    if pearsons:
        out["reward_pearson"] = float(np.mean(pearsons))
    return out


def bandit_win_rate(policy: np.ndarray, reference: np.ndarray, reward: np.ndarray) -> float:
    """E_x Σ_{y, y′} πθ(y|x) π_ref(y′|x) (1[r*(x,y) > r*(x,y′)] + ½·1[=]) (policies as probabilities, (P, V))."""
    diff = reward[:, :, None] - reward[:, None, :]                           # (P, V, V): r*(x, y) − r*(x, y′)
    wins = np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
    return float(np.einsum("py,pz,pyz->p", policy, reference, wins).mean())


def kl_and_value(log_policy: np.ndarray, ref_logp: np.ndarray, reward: np.ndarray) -> tuple[float, float]:
    """Exact (E_x KL(πθ(·|x)‖π_ref(·|x)), E_x E_{y~πθ} r*(x, y)) of a (P, V) log-policy table."""
    policy = np.exp(log_policy)
    return float((policy * (log_policy - ref_logp)).sum(axis=1).mean()), float((policy * reward).sum(axis=1).mean())


def value_at_kl(kls, values, budget: float) -> float | None:
    """A trace's values (J, ε̂) linearly interpolated where its KL first reaches `budget` (None if it never does)."""
    for i in range(1, len(kls)):
        if kls[i - 1] < budget <= kls[i]:
            share = (budget - kls[i - 1]) / (kls[i] - kls[i - 1])
            return float(values[i - 1] + share * (values[i] - values[i - 1]))
    return None


def _score_bandit(problem: BanditPreferenceProblem, result: BanditPreferenceResult) -> dict[str, float]:
    log_policy, ref = np.asarray(result.log_policy, float), problem.ref_logp
    if log_policy.shape != ref.shape:
        raise ValueError(f"BanditPreferenceResult.log_policy must have shape {ref.shape}, got {log_policy.shape}")
    implicit, target = result.beta * (log_policy - ref), problem.true_reward / problem.label_temperature
    kl, value = kl_and_value(log_policy, ref, problem.true_reward)
    scores = {"win_rate": bandit_win_rate(np.exp(log_policy), np.exp(ref), problem.true_reward),
              "true_value": value, "kl_to_reference": kl, "train_loss": float(result.train_loss),
              **slope1_metrics(implicit, target)}
    seen = masked_slope1_metrics(implicit, target, problem.seen)
    scores.update({f"{k}_seen": v for k, v in seen.items()})
    if result.trace:
        tables = [np.asarray(lp, float) for _, lp in result.trace]
        kls, values = zip(*(kl_and_value(lp, ref, problem.true_reward) for lp in tables))
        at = value_at_kl(kls, values, problem.kl_budget)
        if at is not None:
            scores["true_value_at_kl"] = at
        errors = [slope1_error(result.beta * (lp - ref), target) for lp in tables]
        stopped = value_at_kl(kls, errors, problem.kl_budget)
        scores["slope1_error_at_kl"] = scores["slope1_error"] if stopped is None else stopped
    return scores


def score(problem, result) -> dict[str, float]:
    if isinstance(problem, PreferenceProblem):
        return _score_world(problem, result)
    if isinstance(problem, BanditPreferenceProblem):
        return _score_bandit(problem, result)
    raise TypeError(f"not a preference problem: {type(problem).__name__}")
