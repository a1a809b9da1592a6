"""DPO-Mix-P: online DPO whose pairs come from a mixture of a plain sampler and policy-difference samplers.

Shi, Zhou & Du, "The Crucial Role of Samplers in Online Direct Preference Optimization", ICLR 2025,
arXiv 2409.19605 (a SimpleMix baseline; docs/papers/simplemix.md). Each step, for the
prompts of the batch: with probability ½ both answers are sampled from πθ; otherwise one from the tilted
sampler π^{s1} ∝ (πθ/π_ref)^γ·πθ and one from π^{s2} ∝ (π_ref/πθ)^γ·πθ, realised by logit mixing,
logits (1+γ)ℓθ − γℓ_ref and (1−γ)ℓθ + γℓ_ref (γ = 1: the second is π_ref). The annotator labels the pair,
and the step minimises the DPO loss −log σ(β[Δ_w − Δ_l]) on it (pairs of identical answers are dropped).

Fidelity: reconstructed (the LLM instantiation SimpleMix used is not known; this is our CPU-world
recipe). CPU-scale lr for the tiny model; one pair per prompt per step, T = 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from bench.toolkit.causal_lm import sample, sequence_logprobs, train
from methods.preference._common import (
    TrainingSettings,
    completions,
    evaluate,
    implicit_reward,
    learning_rate,
    load_models,
    validate_common,
)
from methods.preference._losses import dpo_loss
from tasks.preference import PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 8}

SWITCHED_OFF = "a baseline of SimpleMix (DPO-Mix-P, online DPO with logit-mixing samplers): no mechanism of the paper"


@dataclass(frozen=True)
class Config(TrainingSettings):
    gamma: float = 1.0          # γ of the logit-mixing samplers (CPU world: 1)
    mix_prob: float = 0.5       # probability of the policy-difference samplers in a step (the "Mix"), ½
    beta: float = 0.5           # β of DPO (the fork uses 0.1, 0.5, 0.001; the paper's value is unknown)

    def __post_init__(self) -> None:
        if self.gamma < 0 or not 0 <= self.mix_prob <= 1 or not self.beta > 0:
            raise ValueError("need gamma >= 0, 0 <= mix_prob <= 1, beta > 0; "
                             f"got {self.gamma}, {self.mix_prob}, {self.beta}")
        validate_common(self)


def online_pairs(policy, ref, tokenizer, prompts, problem, config, ctx: RunContext):
    """(prompts, chosen, rejected) of one step's sampled and annotated pairs (ties dropped)."""
    policy.eval()
    if ctx.rng.random() < config.mix_prob:
        g = config.gamma
        a = sample([policy, ref], tokenizer, prompts, max_new_tokens=problem.max_new_tokens, device=ctx.device,
                   generator=ctx.torch_generator, combine=lambda ls: (1 + g) * ls[0] - g * ls[1])
        b = sample([policy, ref], tokenizer, prompts, max_new_tokens=problem.max_new_tokens, device=ctx.device,
                   generator=ctx.torch_generator, combine=lambda ls: (1 - g) * ls[0] + g * ls[1])
    else:
        both = sample(policy, tokenizer, prompts * 2, max_new_tokens=problem.max_new_tokens, device=ctx.device,
                      generator=ctx.torch_generator)
        a, b = both[: len(prompts)], both[len(prompts):]
    policy.train()
    out = ([], [], [])
    for prompt, ya, yb in zip(prompts, a, b):
        ya, yb = ya.strip(), yb.strip()
        if ya == yb:
            continue
        best = problem.annotate(prompt, [ya, yb], ctx.rng)[0]
        out[0].append(prompt)
        out[1].append((ya, yb)[best])
        out[2].append((yb, ya)[best])
    return out


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0),
        accepts=PreferenceProblem, smoke=SMOKE)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    policy, ref, tokenizer = load_models(problem, ctx)
    train_prompts = list(problem.train_prompts)

    def objective(idx):
        ps, yw, yl = online_pairs(policy, ref, tokenizer, [train_prompts[i] for i in idx], problem, config, ctx)
        if not ps:
            return sum(p.sum() for p in policy.parameters()) * 0.0   # every pair tied: a zero step
        with torch.no_grad():
            ref_w = sequence_logprobs(ref, tokenizer, ps, completions(yw), device=ctx.device)
            ref_l = sequence_logprobs(ref, tokenizer, ps, completions(yl), device=ctx.device)
        pol_w = sequence_logprobs(policy, tokenizer, ps, completions(yw), device=ctx.device)
        pol_l = sequence_logprobs(policy, tokenizer, ps, completions(yl), device=ctx.device)
        return dpo_loss(pol_w, pol_l, ref_w, ref_l, config.beta).mean()

    steps = max(1, int(round(config.epochs * len(train_prompts) / (config.batch_size * config.grad_accum))))
    train(policy, objective, len(train_prompts), steps=steps, lr=learning_rate(problem, config),
          batch_size=config.batch_size, grad_accum=config.grad_accum, warmup_ratio=config.warmup_ratio,
          generator=ctx.torch_generator, device=ctx.device,
          on_step=lambda s, v: (ctx.log(s, loss=v), ctx.check_deadline()))
    return evaluate(problem, policy, ref, tokenizer, ctx, declared=implicit_reward(config))
