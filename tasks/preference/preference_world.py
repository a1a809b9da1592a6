"""Synthetic preference world: verifiable and subjective prompts, a tiny SFT policy, off-policy pairs, gold reward.

The CPU world of SimpleMix (Li & Khashabi, ICML 2025, arXiv 2505.02363; docs/papers/simplemix.md),
also used for EPA's intrinsic slope-1 metrics (docs/papers/epa.md). The world itself
(categories, gold reward, SFT teacher, off-policy pool, annotator) is in tasks/preference/_world.py.

Build: (1) π_SFT: a tiny causal LM (`model`, default the toolkit's tiny GPT-2 shape) over a BPE tokenizer trained on
the world's text, fine-tuned on the noisy teacher's answers (completion-only NLL); trained once per setting and world
seed and cached under the run context's `cache_dir("preference")`. A hub id or local directory as `model` is taken as
π_SFT unchanged. Each run seed has its own π_SFT (world_seed = the run's seed) unless `world_seed` fixes one: the tiny
model's training is chaotic, and with one π_SFT for every seed a rounding difference (AVX512 against AVX2 kernels)
moved all seeds at once and flipped four of SimpleMix's eight verdicts (docs/papers/simplemix.md); with one per seed
the seeds' spread includes the base model's, and the verdicts judge it. (2) train prompts, and for each the K
off-policy responses of the pool ranked by the annotator (UltraFeedback-like, best first). On-policy pairs are not
built here: a method samples them from its own policy (the paper's D_on) through `annotate`.
(3) evaluation prompts with π_SFT's sampled answers (the win-rate baseline) and a probe set of K
responses per prompt (pool and teacher answers) for the implicit-reward metrics.

Fidelity: reconstructed (the paper's UltraFeedback / AlpacaEval / Skywork RM setting is replaced
by this world; the gold reward plays both the reward model and the AlpacaEval judge).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from bench.toolkit.cache import cached_dir
from bench.toolkit.causal_lm import load_causal_lm, sample, sequence_logprobs, train
from bench.toolkit.models import TINY_SHAPES, save_model
from bench.toolkit.tokenizer import train_bpe_tokenizer
from tasks.preference import PreferenceProblem
from tasks.preference._world import POOL_QUALITY, annotate, gold_rewards, make_prompts, pool_response, teacher_response

TINY_WIDTH = {"n_embd": 64, "hidden_size": 64}   # CPU world: d = 64 (GPT-2 reads n_embd, Llama hidden_size)
SMALLEST = {"train_per_category": 8, "eval_per_category": 2, "eval_samples": 1, "probe_per_category": 1}


@dataclass(frozen=True)
class Config:
    model: str = "tiny-gpt2"        # π_SFT: a tiny shape trained here, or a hub id / local directory used as is
    train_per_category: int = 512  # training prompts per category (both data sources share them)
    eval_per_category: int = 32     # evaluation prompts per category
    eval_samples: int = 4           # sampled answers per evaluation prompt
    off_policy_k: int = 4           # K responses per prompt in the off-policy set (UltraFeedback has 4)
    label_temperature: float = 0.1  # τ: the annotator is Bradley–Terry / Plackett–Luce in gold/τ
    pool_shift: float = 0.0         # added to each other model's quality (clipped to [0, 1]): 0 = the pool's mean
                                    # quality is the teacher's; > 0 plants better off-policy answers (a control)
    probe_per_category: int = 4     # probe prompts per category for the implicit-reward metrics
    probe_k: int = 8                # responses per probe prompt
    max_new_tokens: int = 12        # longest sampled answer (tokens)
    teacher_quality: float = 0.5    # the SFT teacher's quality q in every category (the pool's mean)
    sft_examples: int = 4096        # teacher examples the tiny π_SFT is trained on
    sft_steps: int = 1500           # AdamW steps of that training
    sft_lr: float = 3e-3
    world_seed: int | None = None   # seed of π_SFT's data and initialisation; None: the run's seed (see build)

    def __post_init__(self) -> None:
        counts = (self.train_per_category, self.eval_per_category, self.eval_samples, self.off_policy_k,
                  self.probe_per_category, self.probe_k, self.max_new_tokens, self.sft_examples)
        if min(counts) < 1 or self.off_policy_k < 2 or self.probe_k < 2 or self.sft_steps < 0:
            raise ValueError(f"counts must be >= 1 (off_policy_k, probe_k >= 2, sft_steps >= 0), got {counts}")
        if (not self.label_temperature > 0 or not 0 <= self.teacher_quality <= 1 or not self.sft_lr > 0
                or not -1 <= self.pool_shift <= 1):
            raise ValueError("need label_temperature > 0, 0 <= teacher_quality <= 1, sft_lr > 0, -1 <= pool_shift <= 1;"
                             f" got {self.label_temperature}, {self.teacher_quality}, {self.sft_lr}, {self.pool_shift}")


def _train_sft(config: Config, path: Path) -> None:
    """Tokenizer on the world's text, then completion-only NLL on the teacher's answers."""
    rng = np.random.default_rng([config.world_seed, 1])
    prompts, _ = make_prompts(config.sft_examples // 4, rng)
    answers = [teacher_response(p, rng, config.teacher_quality) for p in prompts]
    pool = [pool_response(p, q, rng) for p in prompts[:512] for q in POOL_QUALITY]
    tokenizer = train_bpe_tokenizer(prompts + answers + pool, vocab_size=400)
    model, tokenizer = load_causal_lm(config.model, tokenizer=tokenizer, seed=config.world_seed, **TINY_WIDTH)

    def nll(indices):
        return -sequence_logprobs(model, tokenizer, [prompts[i] for i in indices], [" " + answers[i] for i in indices],
                                  average=True).mean()

    with torch.random.fork_rng(devices=[]):  # a fixed base model: independent of any run's generator
        generator = torch.Generator().manual_seed(config.world_seed)
        train(model, nll, len(prompts), steps=config.sft_steps, lr=config.sft_lr, batch_size=64, generator=generator)
    save_model(model, tokenizer, path)


def sft_policy(config: Config, cache_dir: str | Path) -> tuple[str, bool]:
    """(path or hub id of π_SFT, whether it is the task's own tiny model), the tiny one cached under `cache_dir`;
    `config.world_seed` must be set."""
    if config.model not in TINY_SHAPES:
        return config.model, False
    # the version: entries written by earlier code of the family are not what this code trains; they are not reused
    settings = {"model": config.model, "teacher_quality": config.teacher_quality, "sft_examples": config.sft_examples,
                "sft_steps": config.sft_steps, "sft_lr": config.sft_lr, "world_seed": config.world_seed, "version": 3}
    return str(cached_dir(cache_dir, settings, partial(_train_sft, config))), True


# version 2: π_SFT per run seed; version 3: every writer has one quality in every category (tasks/preference/_world.py)
@task(family="preference", config=Config, version=3, problem=PreferenceProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> PreferenceProblem:
    if config.world_seed is None:
        config = replace(config, world_seed=ctx.seed)
    path, tiny = sft_policy(config, ctx.cache_dir("preference"))
    rng = ctx.rng
    pool = [float(np.clip(q + config.pool_shift, 0.0, 1.0)) for q in POOL_QUALITY]   # the other models' qualities
    train_prompts, train_categories = make_prompts(config.train_per_category, rng)
    off_policy = []
    for prompt in train_prompts:   # K answers of the pool's "other models", ranked by the annotator
        responses = [pool_response(prompt, pool[j % len(pool)], rng)
                     for j in range(config.off_policy_k)]
        off_policy.append(tuple(responses[i] for i in annotate(prompt, responses, rng, config.label_temperature)))
    eval_prompts, eval_categories = make_prompts(config.eval_per_category, rng)
    eval_prompts = [p for p in eval_prompts for _ in range(config.eval_samples)]
    eval_categories = [c for c in eval_categories for _ in range(config.eval_samples)]
    model, tokenizer = load_causal_lm(path, device=ctx.device)
    baseline = sample(model, tokenizer, eval_prompts, max_new_tokens=config.max_new_tokens,
                      generator=ctx.torch_generator, device=ctx.device)
    probe_prompts, _ = make_prompts(config.probe_per_category, rng)
    probe = []
    for prompt in probe_prompts:
        half = config.probe_k // 2
        probe.append(tuple([pool_response(prompt, pool[j % len(pool)], rng) for j in range(half)]
                           + [teacher_response(prompt, rng, config.teacher_quality)
                              for _ in range(config.probe_k - half)]))
    return PreferenceProblem(
        sft_path=path, tiny=tiny, train_prompts=tuple(train_prompts), train_categories=tuple(train_categories),
        off_policy=tuple(off_policy), annotate=partial(annotate, temperature=config.label_temperature),
        eval_prompts=tuple(eval_prompts), eval_categories=tuple(eval_categories),
        baseline_responses=tuple(b.strip() for b in baseline), probe_prompts=tuple(probe_prompts),
        probe_responses=tuple(probe), judge=gold_rewards, label_temperature=config.label_temperature,
        max_new_tokens=config.max_new_tokens)
