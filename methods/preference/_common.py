"""What every preference method shares: the policy and the reference, on-policy pairs, a pairwise trainer, evaluation.

π_SFT is the task's: `problem.sft_path` (the task's `model` setting: its tiny model trained here, or a hub id / local
directory, the paper-scale path, run unchanged on `ctx.device`). The policy starts from it, the reference π_ref is a
frozen copy of it, score reads the probe set's reference log-probabilities from it, and preference_world and
long_context_alignment sample their baseline answers from it (so a win rate there compares the trained policy with
the model it started from; alpacaeval's baseline is AlpacaEval's reference output). A method has no model setting of
its own: `--set task.model=...` names π_SFT for every method at once.
Learning rate: `config.lr`, or when it is 0 the CPU-scale value TINY_LR for the task's tiny model (`problem.tiny`;
docs/papers/simplemix.md uses 1e-4 for a 2-layer GPT-2; this world's runs of a few dozen steps need a larger step to
move the tiny model) and the paper's 5e-7 for a given one.
`evaluate` returns the trained policy with its answers: `score` runs the problem's optional `external_eval` hook
(lm-evaluation-harness suites) and the probe set's implicit reward on it itself; a method with an implicit reward
β(log π − log π_ref) declares its β (`implicit_reward`), which the harness checks against the config; π_ref is the
problem's π_SFT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from bench.context import RunContext
from bench.toolkit.causal_lm import load_causal_lm, sample, sequence_logprobs, train
from tasks.preference import PreferenceProblem, PreferenceResult

PAPER_LR = 5e-7   # SimpleMix fork [F], EPA (zephyr recipe), LOGO: all use 5e-7 at 7–8B
TINY_LR = 1e-3    # the task's tiny GPT-2


def load_models(problem: PreferenceProblem, ctx: RunContext):
    """(policy, frozen reference, tokenizer) on ctx.device: both π_SFT (problem.sft_path)."""
    policy, tokenizer = load_causal_lm(problem.sft_path, device=ctx.device)
    ref, _ = load_causal_lm(problem.sft_path, device=ctx.device)
    for p in ref.parameters():
        p.requires_grad_(False)
    return policy, ref, tokenizer


def learning_rate(problem: PreferenceProblem, config) -> float:
    if config.lr > 0:
        return config.lr
    return TINY_LR if problem.tiny else PAPER_LR


def completions(responses) -> list[str]:
    """The completion text of a response: a leading space (the world's prompts end in '=')."""
    return [" " + r for r in responses]


def on_policy_lists(problem: PreferenceProblem, model, tokenizer, prompts, config,
                    ctx: RunContext) -> list[tuple[str, ...]]:
    """n samples per prompt from `model` (T, top-p of the config), ranked best first by the annotator."""
    flat = [p for p in prompts for _ in range(config.n_samples)]
    texts = sample(model, tokenizer, flat, max_new_tokens=problem.max_new_tokens, temperature=config.temperature,
                   top_p=config.top_p, generator=ctx.torch_generator, device=ctx.device)
    texts = [t.strip() for t in texts]
    out = []
    for i, prompt in enumerate(prompts):
        group = texts[i * config.n_samples:(i + 1) * config.n_samples]
        out.append(tuple(group[j] for j in problem.annotate(prompt, group, ctx.rng)))
    return out


def train_pairs(policy, ref, tokenizer, prompts, chosen, rejected, loss: Callable, config, problem, ctx: RunContext,
                extra: Callable | None = None) -> list[float]:
    """Minimise mean loss(π(y_w), π(y_l), π_ref(y_w), π_ref(y_l)) (+ extra(indices)) over the pairs.

    `rejected` is a list of tuples (M negatives per pair, all M same length); reference log-probs are
    computed once. Steps = epochs · n / (batch · grad_accum)."""
    n, m = len(prompts), len(rejected[0])
    with torch.no_grad():
        ref_w = sequence_logprobs(ref, tokenizer, prompts, completions(chosen), device=ctx.device)
        flat_prompts = [p for p in prompts for _ in range(m)]
        flat_l = [r for rs in rejected for r in rs]
        ref_l = sequence_logprobs(ref, tokenizer, flat_prompts, completions(flat_l), device=ctx.device).view(n, m)

    def objective(idx):
        pw = sequence_logprobs(policy, tokenizer, [prompts[i] for i in idx], completions([chosen[i] for i in idx]),
                               device=ctx.device)
        pl = sequence_logprobs(policy, tokenizer, [prompts[i] for i in idx for _ in range(m)],
                               completions([r for i in idx for r in rejected[i]]), device=ctx.device).view(len(idx), m)
        value = loss(pw, pl, ref_w[idx].to(pw.device), ref_l[idx].to(pw.device)).mean()
        return value + extra(idx) if extra is not None else value

    steps = max(1, int(round(config.epochs * n / (config.batch_size * config.grad_accum))))
    return train(policy, objective, n, steps=steps, lr=learning_rate(problem, config), batch_size=config.batch_size,
                 grad_accum=config.grad_accum, warmup_ratio=config.warmup_ratio, generator=ctx.torch_generator,
                 device=ctx.device, on_step=lambda s, v: (ctx.log(s, loss=v), ctx.check_deadline()))


def implicit_reward(config) -> dict:
    """The declaration of a method whose implicit reward is r = β(log π − log π_ref): its β, the value score evaluates
    that reward with on the probe set (π_ref there is the problem's π_SFT, which the method does not choose)."""
    return {"beta": config.beta}


def evaluate(problem: PreferenceProblem, policy, ref, tokenizer, ctx: RunContext, declared: dict | None = None,
             **training) -> PreferenceResult:
    """Sample the policy's answers (T = 1, so the KL estimate is unbiased) and their log-probs; the result holds the
    policy itself for score to evaluate.

    `declared`: `implicit_reward(config)` for a method with such a reward (None: it has none); `training`: the
    PreferenceResult fields of the pairs it trained on (on_policy_pairs, off_policy_pairs, on_policy_fraction)."""
    policy.eval()
    responses = [t.strip() for t in sample(policy, tokenizer, problem.eval_prompts,
                                           max_new_tokens=problem.max_new_tokens,
                                           generator=ctx.torch_generator, device=ctx.device)]
    with torch.no_grad():
        lp = sequence_logprobs(policy, tokenizer, problem.eval_prompts, completions(responses), device=ctx.device)
        lr = sequence_logprobs(ref, tokenizer, problem.eval_prompts, completions(responses), device=ctx.device)
    return PreferenceResult(responses=tuple(responses), logp_policy=lp.cpu().numpy().astype(float),
                            logp_ref=lr.cpu().numpy().astype(float), model=policy, tokenizer=tokenizer,
                            declared=dict(declared or {}), **training)


@dataclass(frozen=True)
class TrainingSettings:
    """The training settings every preference method's Config starts with (each adds its own after them; all of
    them are `--set` keys). No model: π_SFT, the policy's start and the reference, is the task's `model`."""

    lr: float = 0.0             # 0 = 1e-3 for the task's tiny π_SFT, 5e-7 (paper scale) for a given task.model
    epochs: float = 1.0         # one epoch
    batch_size: int = 32        # pairs (or answers) per micro-batch
    grad_accum: int = 1         # gradient accumulation steps
    warmup_ratio: float = 0.1   # linear decay with 10 % warm-up


def validate_common(config) -> None:
    """The checks every pairwise method's Config shares."""
    if not config.lr >= 0 or not config.epochs > 0 or config.batch_size < 1 or config.grad_accum < 1:
        raise ValueError(f"need lr >= 0 (0: automatic), epochs > 0, batch_size >= 1, grad_accum >= 1; got "
                         f"{config.lr}, {config.epochs}, {config.batch_size}, {config.grad_accum}")
    if not 0 <= config.warmup_ratio < 1:
        raise ValueError(f"warmup_ratio must be in [0, 1), got {config.warmup_ratio}")


def validate_sampling(config) -> None:
    if config.n_samples < 2 or not config.temperature > 0 or not 0 < config.top_p <= 1:
        raise ValueError(f"need n_samples >= 2, temperature > 0, 0 < top_p <= 1; got {config.n_samples}, "
                         f"{config.temperature}, {config.top_p}")
