"""Long-context alignment: answers that need evidence far back in the context, at several context lengths.

LOGO (Tang et al., ICML 2025, arXiv 2410.18533; the CPU world of docs/papers/logo.md). Contexts of 5-word chunks
with retrieval, key-value and multi-hop questions (tasks/preference/_long_context.py). π_SFT is a tiny Llama
(RoPE) trained on short contexts (4 chunks) by a noisy teacher that answers right with probability
`teacher_accuracy` and otherwise hallucinates a value read off a distractor chunk (the failure LOGO targets).
Training prompts are short contexts; their preference lists are (right answer, M = 2 distractor values), the
preferred answer from the critical chunk and dis-preferred ones from irrelevant chunks (LOGO §2.3). LOGO's
position synthesis spreads the short training inputs over the target window `position_window` (the longest
evaluation context). Evaluation: exact match of the answer on fresh contexts of 4, 12 and 32 chunks
(categories short / medium / long; `gold_reward_<length>` is the accuracy), win rate against π_SFT's answers.
The real LongBench / RULER suites run through lm-evaluation-harness on the trained policy when
`lm_eval_tasks` names them (e.g. "longbench-english", "ruler_fwe"; "" = off; `lm_eval_include` adds a
directory of custom task YAMLs, `lm_eval_limit` caps the documents per task, `lm_eval_seq_lengths` sets RULER's
lengths, `lm_eval_max_length` the context window): `score` calls the problem's `external_eval` hook
(tasks/preference/_harness.py) on the trained policy the method returns and reports its results as
`lm_eval_<task>_<metric>`. RULER's frequent word extraction runs offline on this task's policies:
`lm_eval_tasks=ruler_fwe`, `lm_eval_include=tasks/preference/data/ruler`, `lm_eval_seq_lengths=1024,2048`,
`lm_eval_max_length=2112` store `lm_eval_ruler_fwe_1024` and `_2048` (tasks/preference/_ruler.py says which RULER
subtasks run offline and why: vt needs a tokenizer that writes English compactly, the rest `wonderwords` or hub
data). LongBench downloads its data from the hub and is meant for GPU users (`pip install -e '.[eval]'`).

Fidelity: reconstructed (a synthetic stand-in for the paper's LongBench setting, docs/papers/logo.md).
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
from tasks.preference._harness import HarnessSettings, external_eval, parse_lengths, parse_tasks, task_manager
from tasks.preference._long_context import (
    FILLER,
    KEYS,
    KINDS,
    LENGTHS,
    VALUES,
    distractor_answers,
    exact_match,
    make_example,
    prompt_text,
)

SMALLEST = {"train_per_kind": 8, "eval_per_kind": 1}


@dataclass(frozen=True)
class Config:
    model: str = "tiny-llama"       # π_SFT: a tiny shape trained here (RoPE), or a hub id / local directory
    train_per_kind: int = 256       # short training contexts per question kind
    train_length: str = "short"     # the methods' training contexts: "short" (LOGO's setting), or "long" for the
                                    # world's positive control (SFT on the true long-range evidence)
    eval_per_kind: int = 64         # evaluation contexts per kind and length (192 per length: SE of an accuracy ≤
                                    # 3.6 points)
    m_rejected: int = 2             # M dis-preferred answers per training context (LOGO: 2)
    position_window: int = 192      # K of the position synthesis: about the longest evaluation context in tokens
    teacher_accuracy: float = 0.7   # π_SFT's teacher: right answer share on short contexts
    sft_examples: int = 6144
    sft_steps: int = 1500
    sft_lr: float = 3e-3
    world_seed: int | None = None   # π_SFT's data and initialisation; None: the run's seed (each its own π_SFT)
    lm_eval_tasks: str = ""         # comma-separated lm_eval tasks run on the trained policy ("" = off)
    lm_eval_include: str = ""       # directory of custom lm_eval task YAMLs (TaskManager include_path)
    lm_eval_limit: int = 0          # documents per lm_eval task (0: all)
    lm_eval_max_length: int = 0     # context window the harness gives the model (0: its config's)
    lm_eval_batch_size: int = 8
    lm_eval_seq_lengths: str = ""   # RULER's max_seq_lengths, e.g. "4096,8192" ("" = lm_eval's default)

    def __post_init__(self) -> None:
        if min(self.train_per_kind, self.eval_per_kind, self.m_rejected, self.sft_examples) < 1 or self.sft_steps < 0:
            raise ValueError("train_per_kind, eval_per_kind, m_rejected, sft_examples must be >= 1 and sft_steps >= 0")
        if self.train_length not in LENGTHS:
            raise ValueError(f"train_length must be one of {', '.join(LENGTHS)}, got {self.train_length!r}")
        if self.position_window < 64 or not 0 <= self.teacher_accuracy <= 1:
            raise ValueError(f"need position_window >= 64 and 0 <= teacher_accuracy <= 1; got "
                             f"{self.position_window}, {self.teacher_accuracy}")
        if min(self.lm_eval_limit, self.lm_eval_max_length) < 0 or self.lm_eval_batch_size < 1:
            raise ValueError(f"need lm_eval_limit >= 0, lm_eval_max_length >= 0, lm_eval_batch_size >= 1; got "
                             f"{self.lm_eval_limit}, {self.lm_eval_max_length}, {self.lm_eval_batch_size}")
        parse_lengths(self.lm_eval_seq_lengths)


def _examples(per_kind: int, n_chunks: int, rng):
    return [(kind, *make_example(kind, n_chunks, rng)) for kind in KINDS for _ in range(per_kind)]


def _train_sft(config: Config, path) -> None:
    rng = np.random.default_rng([config.world_seed, 2])
    examples = _examples(config.sft_examples // len(KINDS), LENGTHS["short"], rng)
    prompts = [prompt_text(chunks, q) for _, chunks, q, _ in examples]
    answers = [a if rng.random() < config.teacher_accuracy else distractor_answers(c, a, rng, 1)[0]
               for _, c, _, a in examples]
    corpus = prompts + answers + list(FILLER) + [" ".join(KEYS), " ".join(VALUES)]
    tokenizer = train_bpe_tokenizer(corpus, vocab_size=400)
    model, tokenizer = load_causal_lm(config.model, tokenizer=tokenizer, seed=config.world_seed, hidden_size=64,
                                      intermediate_size=128)

    def nll(idx):
        return -sequence_logprobs(model, tokenizer, [prompts[i] for i in idx], [" " + answers[i] for i in idx],
                                  average=True).mean()

    with torch.random.fork_rng(devices=[]):
        train(model, nll, len(prompts), steps=config.sft_steps, lr=config.sft_lr, batch_size=64,
              generator=torch.Generator().manual_seed(config.world_seed))
    save_model(model, tokenizer, path)


def sft_policy(config: Config, cache_dir: str | Path) -> tuple[str, bool]:
    if config.model not in TINY_SHAPES:
        return config.model, False
    # version 2: entries written by the family's pre-commit code are not what this code trains; they are not reused
    settings = {"long_context": config.model, "teacher_accuracy": config.teacher_accuracy,
                "sft_steps": config.sft_steps, "sft_examples": config.sft_examples, "sft_lr": config.sft_lr,
                "world_seed": config.world_seed, "version": 2}
    return str(cached_dir(cache_dir, settings, partial(_train_sft, config))), True


def harness(config: Config) -> dict:
    """{"external_eval": hook} when lm_eval tasks are asked for (names checked now, before any training), else {}."""
    tasks = parse_tasks(config.lm_eval_tasks)
    if not tasks:
        return {}
    settings = HarnessSettings(tasks=tasks, include=config.lm_eval_include, limit=config.lm_eval_limit,
                               max_length=config.lm_eval_max_length, batch_size=config.lm_eval_batch_size,
                               seq_lengths=parse_lengths(config.lm_eval_seq_lengths))
    task_manager(settings)
    return {"external_eval": external_eval(settings)}


def _rank(answer_of: dict, temperature: float, prompt: str, responses, rng) -> np.ndarray:
    scores = exact_match(answer_of, [prompt] * len(responses), list(responses)) / temperature
    return np.argsort(-(scores + rng.gumbel(size=len(scores))), kind="stable")


# version 2: π_SFT per run seed
@task(family="preference", config=Config, version=2, problem=PreferenceProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> PreferenceProblem:
    hooks = harness(config)
    if config.world_seed is None:  # as preference_world: the seeds' spread includes π_SFT's (a chaotic training)
        config = replace(config, world_seed=ctx.seed)
    path, tiny = sft_policy(config, ctx.cache_dir("preference"))
    rng = ctx.rng
    train = _examples(config.train_per_kind, LENGTHS[config.train_length], rng)
    train_prompts = [prompt_text(c, q) for _, c, q, _ in train]
    off = [tuple([a] + distractor_answers(c, a, rng, config.m_rejected)) for _, c, _, a in train]
    evals = [(name, *ex) for name, n in LENGTHS.items() for ex in _examples(config.eval_per_kind, n, rng)]
    eval_prompts = [prompt_text(c, q) for _, _, c, q, _ in evals]
    # equal lengths by construction; strict=True waits for the next lock of this input (noqa keeps its code as is)
    answer_of = {p: a for p, (_, _, _, _, a) in zip(eval_prompts, evals)}  # noqa: B905
    answer_of.update({p: a for p, (_, _, _, a) in zip(train_prompts, train)})  # noqa: B905
    model, tokenizer = load_causal_lm(path, device=ctx.device)
    baseline = [t.strip() for t in sample(model, tokenizer, eval_prompts, max_new_tokens=3,
                                          generator=ctx.torch_generator, device=ctx.device)]
    return PreferenceProblem(
        sft_path=path, tiny=tiny, train_prompts=tuple(train_prompts), train_categories=tuple(k for k, *_ in train),
        off_policy=tuple(off), annotate=partial(_rank, answer_of, 0.1), eval_prompts=tuple(eval_prompts),
        eval_categories=tuple(name for name, *_ in evals), baseline_responses=tuple(baseline), probe_prompts=(),
        probe_responses=(), judge=partial(exact_match, answer_of), label_temperature=0.1, max_new_tokens=3,
        categories=tuple(LENGTHS), position_window=config.position_window, **hooks)
