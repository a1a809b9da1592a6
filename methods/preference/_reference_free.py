"""The reference-free length-normalised objective shared by `simpo` (M = 1, λ = 0) and `logo` (M = 2, λ = 0.1).

LOGO (Tang et al., ICML 2025, arXiv 2410.18533, §2.1, following its code `training/logo_train.py`):
    L*(θ) = −log σ(β·avg log πθ(y_w|x) − (1/M) Σ_j β·avg log πθ(y_l^j|x) − γ) + λ·(−avg log πθ(y_w|x)),
γ = β · gamma_beta_ratio (the code's parameterisation); avg = the token-averaged log-probability over the
answer, each rejected answer normalised by its own length (the code; the paper prints β/(M|y_l|)).
"""

from __future__ import annotations

import numpy as np
import torch

from bench.context import RunContext
from bench.toolkit.causal_lm import sequence_logprobs, train
from methods.preference._common import completions, evaluate, learning_rate, load_models
from methods.preference._losses import logo_loss
from tasks.preference import PreferenceProblem, PreferenceResult, synthesize_positions

CHUNK_TOKENS = 6   # tokens per synthesis chunk (a 5-word chunk of the long-context world; LOGO: 512)


def synthesized_positions(tokenizer, prompts, answers, window: int, rng: np.random.Generator) -> torch.Tensor:
    """(B, T) LOGO position ids: the prompt's tokens spread over [0, window − |answer|), the answer's after them.

    Rows follow the layout of sequence_logprobs (prompt tokens, answer tokens, eos, right padding); repeated
    prompts (the chosen and the M rejected answers of one sample) share one layout."""
    layouts, rows = {}, []
    for prompt, answer in zip(prompts, answers):
        k = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        c = len(tokenizer(answer, add_special_tokens=False)["input_ids"]) + 1
        if prompt not in layouts:
            layouts[prompt] = synthesize_positions(k, max(1, k // CHUNK_TOKENS), max(k, window - 8), rng)
        head = layouts[prompt]
        rows.append(list(head) + list(range(int(head[-1]) + 1, int(head[-1]) + 1 + c)))
    width = max(len(r) for r in rows)
    return torch.tensor([r + [0] * (width - len(r)) for r in rows])


def solve_reference_free(problem: PreferenceProblem, config, m: int, sft_weight: float, ctx: RunContext,
                         synthesize: bool = False, negatives: str = "paper") -> PreferenceResult:
    """Train on (best, the m lowest-ranked) answers of each prompt's off-policy list; with `synthesize` and a task
    that sets position_window, on LOGO's synthesised position indices; `negatives`: the weighting of the m rejected
    answers (_losses.logo_loss)."""
    policy, ref, tokenizer = load_models(problem, ctx)
    prompts = list(problem.train_prompts)
    chosen = [ranked[0] for ranked in problem.off_policy]
    rejected = [tuple(ranked[-m:]) for ranked in problem.off_policy]
    gamma = config.beta * config.gamma_beta_ratio

    window = problem.position_window if synthesize else 0

    def logps(ps, ys):
        pos = synthesized_positions(tokenizer, ps, ys, window, ctx.rng) if window else None
        return sequence_logprobs(policy, tokenizer, ps, ys, average=True, device=ctx.device, position_ids=pos,
                                 batch_size=max(64, len(ps)))

    def objective(idx):
        ps = [prompts[i] for i in idx]
        avg_w = logps(ps, completions([chosen[i] for i in idx]))                                      # (B,)
        avg_l = logps([p for p in ps for _ in range(m)],
                      completions([y for i in idx for y in rejected[i]])).view(len(idx), m)           # (B, M)
        return (logo_loss(avg_w, avg_l, config.beta, gamma, negatives) - sft_weight * avg_w).mean()

    steps = max(1, int(round(config.epochs * len(prompts) / (config.batch_size * config.grad_accum))))
    train(policy, objective, len(prompts), steps=steps, lr=learning_rate(problem, config), batch_size=config.batch_size,
          grad_accum=config.grad_accum, warmup_ratio=config.warmup_ratio, generator=ctx.torch_generator,
          device=ctx.device, on_step=lambda s, v: (ctx.log(s, loss=v), ctx.check_deadline()))
    return evaluate(problem, policy, ref, tokenizer, ctx)
