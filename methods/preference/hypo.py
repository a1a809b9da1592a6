"""HyPO: off-policy DPO plus a reverse-KL penalty estimated on online samples of the policy.

Song, Swamy, Sun, Sun, Ho & Yang (?), "The Importance of Online Data: Understanding Preference Fine-tuning
via Coverage", NeurIPS 2024, arXiv 2406.01462 (a SimpleMix baseline):

    L(θ) = L_DPO(θ; D_off) + λ·E_{x, y ~ πθ(·|x)}[log πθ(y|x) − log π_ref(y|x)].

The KL gradient is the score-function estimate ∇KL = E_{y~πθ}[(log πθ(y|x) − log π_ref(y|x) − b)·∇log πθ(y|x)]
(the ∇ of the inner log πθ has zero mean), with b the batch mean as baseline; one online sample per prompt
of each batch, drawn at temperature 1 from the current policy.

Fidelity: reconstructed from our sketch, docs/papers/simplemix.md (λ was not retrieved: 0.1 of {0.01, 0.1}; how the
SimpleMix paper ran HyPO is unknown). CPU-scale lr for the tiny model.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from bench.toolkit.causal_lm import sample, sequence_logprobs
from methods.preference._common import (
    TrainingSettings,
    completions,
    evaluate,
    implicit_reward,
    load_models,
    train_pairs,
    validate_common,
)
from methods.preference._losses import dpo_loss
from tasks.preference import PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 8}

SWITCHED_OFF = "a baseline of SimpleMix (HyPO, another use of on-policy data): no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config(TrainingSettings):
    kl_weight: float = 0.1      # λ, weight of the online reverse-KL term (not retrieved; ours: 0.01 or 0.1)
    beta: float = 0.5           # β of DPO (the fork uses 0.1, 0.5, 0.001; the paper's value is unknown)

    def __post_init__(self) -> None:
        if self.kl_weight < 0 or not self.beta > 0:
            raise ValueError(f"need kl_weight >= 0 and beta > 0, got {self.kl_weight}, {self.beta}")
        validate_common(self)


def kl_surrogate(policy, ref, tokenizer, prompts, problem, ctx: RunContext) -> torch.Tensor:
    """A scalar whose gradient is the score-function estimate of ∇ KL(πθ‖π_ref) on one online sample per prompt."""
    was_training = policy.training
    policy.eval()
    ys = [t.strip() for t in sample(policy, tokenizer, prompts, max_new_tokens=problem.max_new_tokens,
                                    generator=ctx.torch_generator, device=ctx.device)]
    policy.train(was_training)
    logp = sequence_logprobs(policy, tokenizer, prompts, completions(ys), device=ctx.device)     # (B,)
    with torch.no_grad():
        advantage = logp - sequence_logprobs(ref, tokenizer, prompts, completions(ys), device=ctx.device)
        advantage = advantage - advantage.mean()
    return (advantage * logp).mean()


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0),
        accepts=PreferenceProblem, smoke=SMOKE)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    policy, ref, tokenizer = load_models(problem, ctx)
    pairs = [(p, r[0], (r[-1],)) for p, r in zip(problem.train_prompts, problem.off_policy)]
    prompts, chosen, rejected = (list(t) for t in zip(*pairs))
    loss = lambda pw, pl, rw, rl: dpo_loss(pw, pl[:, 0], rw, rl[:, 0], config.beta)  # noqa: E731

    def kl_term(idx):
        return config.kl_weight * kl_surrogate(policy, ref, tokenizer, [prompts[i] for i in idx], problem, ctx)

    train_pairs(policy, ref, tokenizer, prompts, chosen, rejected, loss, config, problem, ctx,
                extra=kl_term if config.kl_weight > 0 else None)
    return evaluate(problem, policy, ref, tokenizer, ctx, declared=implicit_reward(config))
