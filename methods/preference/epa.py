"""EPA: Energy Preference Alignment, a softmax over the preferred answer, strong and weak negatives.

Hong, Zhang, Bao, Jiang & Song, "Energy-Based Preference Model Offers Better Offline Alignment than the
Bradley-Terry Preference Model", ICML 2025, arXiv 2412.13862 (our reconstruction, docs/papers/epa.md). With the
implicit reward r_θ(x, y) = β[log πθ(y|x) − log π_ref(y|x)] (energy −r_θ):

    L_EPA(θ) = E_x log( w + Σ_{y ∈ N_s(x) ∪ N_w(x)} α_y exp(r_θ(x, y) − r_θ(x, y_w)) )

(the Energy Discrepancy loss ℓ = log(w + Σ_j exp(E(u) − E(u'_j))) of the reference code).
Strong negatives N_s(x): the k_s lower-ranked answers to the same prompt (UF-all: up to 3); weak negatives
N_w(x): k_w answers written for the other prompts of the mini-batch (their chosen and rejected), scored
under x ("free": no annotation). With w = 1, one strong and no weak negative the loss is DPO's.

Fidelity: reconstructed (no text or code of the paper was available; the loss is our reconstruction
from the abstract, the TL;DR naming Energy Discrepancy and that code). Unverified defaults: k_s = 3,
k_w = 8, w = 1, α = 1, β = 0.1; trained on the world's off-policy K = 4 lists (UF-all-like).

On the tabular bandit world (preference_bandit) the same loss trains a free logit table (or a
prompt-embedding MLP) from π_ref with Adam: strong negatives are the k_s lowest-ranked members of the list,
weak negatives k_w responses drawn uniformly (with replacement) from the lists of the batch's other prompts,
scored under the list's prompt (a weak negative may coincide with one of the prompt's own responses: "free",
unfiltered). 4000 full-batch Adam steps at lr 0.1, decayed linearly to 0, as for `dpo` there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from bench.toolkit.causal_lm import sequence_logprobs, train
from methods.preference._bandit import solve_bandit, validate_bandit
from methods.preference._common import (
    TrainingSettings,
    completions,
    evaluate,
    implicit_reward,
    learning_rate,
    load_models,
    validate_common,
)
from methods.preference._losses import epa_loss
from tasks.preference import BanditPreferenceProblem, BanditPreferenceResult, PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 4, "weak_negatives": 2, "bandit_steps": 200}

# EPA's mechanism is the energy-based softmax over strong and weak negatives, L = log(w + Σ_y α_y exp(r(y) − r(y_w))):
# k_w = 0 drops the weak negatives (answers of other prompts, the paper's "free" negatives; the claims' ablation);
# k_s = 1, k_w = 0 leaves log(1 + exp(r(y_l) − r(y_w))), the Bradley–Terry (DPO) loss on best vs worst
# (tests/methods/preference/test_methods.py checks its value and gradient against dpo_loss).
SWITCHED_OFF = {"k_w = 0 (no weak negatives)": {"weak_negatives": 0},
                "k_s = 1, k_w = 0 (Bradley–Terry loss)": {"strong_negatives": 1, "weak_negatives": 0}}


@dataclass(frozen=True)
class Config(TrainingSettings):
    strong_negatives: int = 3   # k_s, dispreferred answers to the same prompt (UF-all: 3)
    weak_negatives: int = 8     # k_w, answers of other prompts in the batch (CPU world: 0, 2, 4, 8)
    w: float = 1.0              # w ("w_stable" of Energy Discrepancy)
    weak_weight: float = 1.0    # α on the weak-negative terms inside the log-sum-exp
    beta: float = 0.1           # β of the implicit reward
    # bandit world (preference_bandit) only
    bandit_policy: str = "table"  # free logit table (P × V) or prompt embedding → MLP → logits
    bandit_steps: int = 4000    # Adam steps (full batch: 4000 epochs)
    bandit_lr: float = 0.1      # Adam learning rate on the parameters (linear decay to 0)
    bandit_batch: int = 0       # lists per step (0: full batch; the plan allows full batch or 8)
    bandit_init_noise: float = 0.0  # std of N(0, s²) added to the table's initial logits (0: start at π_ref)

    def __post_init__(self) -> None:
        if self.strong_negatives < 1 or self.weak_negatives < 0 or not self.w > 0 or not self.weak_weight > 0:
            raise ValueError(f"need strong_negatives >= 1, weak_negatives >= 0, w > 0, weak_weight > 0; got "
                             f"{self.strong_negatives}, {self.weak_negatives}, {self.w}, {self.weak_weight}")
        if not self.beta > 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")
        validate_common(self)
        validate_bandit(self)


def skip(problem, config: Config) -> str | None:
    if isinstance(problem, BanditPreferenceProblem):
        if problem.lists.shape[1] - 1 < config.strong_negatives:
            return f"epa needs {config.strong_negatives} strong negatives, the task has {problem.lists.shape[1] - 1}"
        if config.weak_negatives and config.bandit_batch == 1:
            return "weak negatives come from the other prompts of a batch: bandit_batch must be 0 (full) or >= 2"
        return None
    if len(problem.off_policy[0]) - 1 < config.strong_negatives:
        return f"epa needs {config.strong_negatives} strong negatives, the task has {len(problem.off_policy[0]) - 1}"
    if config.weak_negatives and config.batch_size < 2:
        return "weak negatives come from the other prompts of a batch: batch_size must be >= 2"
    return None


def negatives(idx, ranked, k_s: int, k_w: int, generator: torch.Generator) -> list[list[str]]:
    """Per prompt of the batch: its k_s lowest-ranked answers, then k_w answers drawn from the other prompts."""
    out = []
    for i in idx:
        strong = list(ranked[i][-k_s:])
        others = [r for j in idx if j != i for r in ranked[j]]
        picks = torch.randint(len(others), (k_w,), generator=generator).tolist() if others and k_w else []
        out.append(strong + [others[p] for p in picks])
    return out


def make_objective(policy, ref, tokenizer, prompts, ranked, config: Config, generator, device: str = "cpu"):
    """objective(indices): the batch's mean EPA loss (weak negatives drawn from the batch with `generator`)."""
    k_s, k_w = config.strong_negatives, config.weak_negatives
    weights = torch.tensor([1.0] * k_s + [config.weak_weight] * k_w, device=device)

    def logps(model, ps, ys):
        return sequence_logprobs(model, tokenizer, ps, completions(ys), device=device)

    def objective(idx):
        negs = negatives(idx, ranked, k_s, k_w, generator)
        ps, yw = [prompts[i] for i in idx], [ranked[i][0] for i in idx]
        flat_p, flat_y = [p for p in ps for _ in range(k_s + k_w)], [y for ys in negs for y in ys]
        with torch.no_grad():
            ref_w, ref_n = logps(ref, ps, yw), logps(ref, flat_p, flat_y)
        r_w = config.beta * (logps(policy, ps, yw) - ref_w)                                         # (B,)
        r_n = config.beta * (logps(policy, flat_p, flat_y) - ref_n).view(len(idx), k_s + k_w)       # (B, k_s + k_w)
        return epa_loss(r_w, r_n, w=config.w, weak_weight=weights.expand_as(r_n)).mean()

    return objective


def bandit_weak_negatives(prompts: torch.Tensor, lists: torch.Tensor, k_w: int,
                          generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, k_w) responses drawn uniformly (with replacement) from the batch's lists of other prompts, and (B, k_w)
    their validity (False for a list whose batch holds no other prompt).

    The batch's responses are sorted by prompt, so a list's own prompt is one block [start, end): a uniform
    draw u among the others is u, or u + (end − start) once it reaches the block."""
    owner, order = torch.sort(prompts.repeat_interleave(lists.shape[1]), stable=True)   # (B·K,)
    pool = lists.reshape(-1)[order]
    start = torch.searchsorted(owner, prompts, right=False)
    end = torch.searchsorted(owner, prompts, right=True)
    others = len(pool) - (end - start)                                                # (B,)
    u = (torch.rand(len(prompts), k_w, generator=generator, dtype=torch.float64) * others[:, None]).long()
    u = torch.minimum(u, (others[:, None] - 1).clamp(min=0))                          # guard the float edge u == others
    picks = u + (u >= start[:, None]) * (end - start)[:, None]
    valid = (others > 0)[:, None].expand(-1, k_w)
    return pool[picks.clamp(max=len(pool) - 1)], valid


def bandit_objective(problem: BanditPreferenceProblem, config: Config, generator: torch.Generator):
    """make_objective(policy) -> objective(list indices): the batch's mean EPA loss over strong and weak negatives."""
    k_s, k_w = config.strong_negatives, config.weak_negatives
    prompts, lists = torch.as_tensor(problem.list_prompts), torch.as_tensor(problem.lists)
    ref = torch.as_tensor(problem.ref_logp)

    def make(policy):
        def objective(idx):
            x, ranked = prompts[idx], lists[idx]
            negs, mask = ranked[:, -k_s:], torch.ones(len(idx), k_s, dtype=torch.bool)
            if k_w:
                weak, valid = bandit_weak_negatives(x, ranked, k_w, generator)
                negs, mask = torch.cat([negs, weak], dim=1), torch.cat([mask, valid], dim=1)
            reward = config.beta * (policy() - ref)                                 # (P, V) r_θ
            weights = torch.tensor([1.0] * k_s + [config.weak_weight] * k_w, dtype=reward.dtype)
            r_n = reward[x[:, None].expand_as(negs), negs]                          # (B, k_s + k_w)
            return epa_loss(reward[x, ranked[:, 0]], r_n, mask=mask, w=config.w,
                            weak_weight=weights.expand_as(r_n)).mean()
        return objective
    return make


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0), skip=skip,
        accepts=(PreferenceProblem, BanditPreferenceProblem), smoke=SMOKE)
def solve(problem: PreferenceProblem | BanditPreferenceProblem, config: Config,
          ctx: RunContext) -> PreferenceResult | BanditPreferenceResult:
    if isinstance(problem, BanditPreferenceProblem):
        return solve_bandit(problem, config, bandit_objective(problem, config, ctx.torch_generator), ctx)
    policy, ref, tokenizer = load_models(problem, ctx)
    prompts, ranked = list(problem.train_prompts), list(problem.off_policy)
    objective = make_objective(policy, ref, tokenizer, prompts, ranked, config, ctx.torch_generator, ctx.device)
    steps = max(1, int(round(config.epochs * len(prompts) / (config.batch_size * config.grad_accum))))
    train(policy, objective, len(prompts), steps=steps, lr=learning_rate(problem, config), batch_size=config.batch_size,
          grad_accum=config.grad_accum, warmup_ratio=config.warmup_ratio, generator=ctx.torch_generator,
          device=ctx.device, on_step=lambda s, v: (ctx.log(s, loss=v), ctx.check_deadline()))
    return evaluate(problem, policy, ref, tokenizer, ctx, declared=implicit_reward(config))
