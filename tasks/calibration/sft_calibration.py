"""A tiny LM pre-trained on stochastic facts with a long tail, then instruction-tuned on deterministic answers.

Huang, Lu & Zeng, ICML 2025, arXiv 2508.00264; our CPU plan (docs/papers/label-smoothing-calibration.md):
1. World: `entities` facts, each with an answer distribution p_i ~ Dirichlet(α·1) over the letters A–D. A uniformly
   random share `rare_fraction` of them is the corpus's long tail (drawn independently of the SFT set).
2. Pre-training: a LlamaForCausalLM with vocabulary V = `vocab_size` and hidden size d = `hidden_size` learns
   next-token prediction on `per_entity` sampled answers of each frequent fact, `rare_per_entity` (default 0) of each
   rare one, `prior_count` documents of every fact with each letter as its answer, and filler sentences (cached,
   keyed by every setting, the seed and WORLD). `model` = a local directory or hub id skips this and loads that
   model instead (its tokenizer must spell the world's words; a GPU user passes a bigger model here).
3. SFT set: "instruction" copies of the questions of a fraction `sft_fraction` of the entities, answered
   deterministically with the mode of p_i (one-hot targets, as instruction data is), prompts masked.
   `sft_answers="random"`: each SFT fact answered with a uniformly random letter instead (a null: nothing to learn).
4. Evaluation: `eval_questions` questions over all entities, answers sampled from p_i (CPU plan: ≥ 2,000).
The paper varies V and d (its LV-LLM argument): both are fields here.

Why a long tail (issue 23). With every fact sampled 200 times the pre-trained model already predicts each p_i, so it
sits at the Bayes accuracy: SFT on the modes can teach it nothing, "label smoothing keeps accuracy" cannot fail and
not fine-tuning at all looks ideal. Real SFT teaches: here the rare facts are never answered in pre-training, so the
pre-trained model's mode there is a guess (accuracy about 1/4 against a Bayes accuracy about 0.53), while the SFT
set answers the rare facts among its own with their true modes; plain-CE SFT then raises the accuracy over the
pre-trained model's, and a method that learns less loses accuracy against CE.

Why the pseudo-documents (`prior_count`, one per fact and letter). The paper's premise is a calibrated pre-trained
model. A network fitted to its corpus predicts the corpus's answer frequencies; with `prior_count` documents of each
letter those are (n_k + prior_count)/(n + 4·prior_count), the Bayesian posterior predictive under the world's own
Dirichlet(α) prior when prior_count = α (the default 1 = α's default 1), which is calibrated on average over the
world's facts whatever the number n of a fact's answers: uniform on a rare fact (n = 0), about p_i on a frequent
one (n = 200). Without them (prior_count 0) the never-answered facts are read off untrained entity embeddings as
sharply as the known ones (seed 0: ECE 0.117 before tuning, against 0.032 with them), and a fact answered only a few
times is memorised at its empirical frequencies (rare_per_entity 2, prior_count 0: ECE 0.141); with rare_per_entity
2 and the pseudo-documents the posterior is calibrated on average, but over only 32 rare facts its ECE is a draw's
luck (seed 0: 0.058), which is why the default long tail is never answered.

Fidelity: reconstructed. Real LLMs, Tulu-3/Alpaca/OpenHermes SFT and MMLU/HellaSwag/ARC-Easy are replaced by
this synthetic world; questions have a fixed option order; the tokenizer is word level.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from bench.toolkit.cache import cached_dir
from tasks.calibration import CalibrationProblem
from tasks.calibration._world import (
    LETTERS,
    build_lm,
    build_tokenizer,
    encode,
    letter_ids,
    load_lm,
    pretrain,
    pretraining_texts,
    question_text,
    vocabulary,
)

SFT_ANSWERS = ("mode", "random")
WORLD = 2  # bumped whenever the generator's draws or the pre-training corpus change

SMALLEST = {"entities": 8, "per_entity": 20, "vocab_size": 64, "hidden_size": 16, "pretrain_steps": 30,
            "eval_questions": 200, "sft_copies": 4}


@dataclass(frozen=True)
class Config:
    vocab_size: int = 1024        # V, output vocabulary of the LM (paper: 32k–256k; its LV-LLM argument varies it)
    hidden_size: int = 64         # d, hidden size (paper: 896–5120; CPU plan: 16–128)
    layers: int = 2               # transformer blocks (CPU plan: 2–4)
    entities: int = 64            # facts in the world
    alpha: float = 1.0            # α, Dirichlet concentration of each fact's answer distribution (E[max p] ≈ 0.52)
    per_entity: int = 200         # pre-training samples of each frequent fact's answer
    rare_fraction: float = 0.5    # share of the facts in the long tail, seen `rare_per_entity` times in pre-training
    rare_per_entity: int = 0      # pre-training samples of each rare fact's answer (0: never answered)
    prior_count: int = 1          # documents of each fact with each letter as its answer: Dirichlet pseudo-counts
    filler_fraction: float = 0.3  # share of pre-training documents that are filler sentences
    pretrain_steps: int = 1500    # AdamW steps of pre-training
    pretrain_lr: float = 3e-3
    batch_size: int = 128
    sft_fraction: float = 0.5     # share of the facts in the SFT set
    sft_copies: int = 16          # copies of each SFT question (the SFT set's size)
    eval_questions: int = 2000    # n, multiple-choice evaluation questions (CPU plan: ≥ 2,000)
    sft_answers: str = "mode"     # "mode": each SFT fact answered with its p_i's mode; "random": a uniformly random
                                  # letter per fact (the null of the "SFT raises accuracy" control: nothing to learn)
    model: str = ""               # "" = the tiny pre-trained LM above; else a local directory or hub id

    def __post_init__(self) -> None:
        ints = {"vocab_size": self.vocab_size, "hidden_size": self.hidden_size, "layers": self.layers,
                "entities": self.entities, "per_entity": self.per_entity, "pretrain_steps": self.pretrain_steps,
                "batch_size": self.batch_size, "sft_copies": self.sft_copies, "eval_questions": self.eval_questions}
        bad = {k: v for k, v in ints.items() if v < 1}
        bad.update({k: v for k, v in (("rare_per_entity", self.rare_per_entity),
                                      ("prior_count", self.prior_count)) if v < 0})
        if bad:
            raise ValueError(f"out of range (counts >= 1; rare_per_entity, prior_count >= 0): {bad}")
        if self.hidden_size % 16 and self.hidden_size > 16:
            raise ValueError(f"hidden_size must be a multiple of 16 (heads of 16), got {self.hidden_size}")
        vocabulary(self.entities, self.vocab_size)  # raises if V cannot hold the world's words
        if not (self.alpha > 0 and 0 <= self.filler_fraction < 1 and 0 < self.sft_fraction <= 1
                and self.pretrain_lr > 0 and 0 <= self.rare_fraction <= 1):
            raise ValueError(f"need alpha > 0, 0 <= filler_fraction < 1, 0 < sft_fraction <= 1, pretrain_lr > 0, "
                             f"0 <= rare_fraction <= 1; got {self.alpha}, {self.filler_fraction}, {self.sft_fraction}, "
                             f"{self.pretrain_lr}, {self.rare_fraction}")
        if self.sft_answers not in SFT_ANSWERS:
            raise ValueError(f"sft_answers must be one of {SFT_ANSWERS}, got {self.sft_answers!r}")


def world(config: Config, seed: int) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """(p_i of every fact (E, 4), the sorted indices of the rare facts, the world's generator for what follows).
    The rare facts are a uniformly random share of all facts, drawn independently of the SFT set; the permutation
    consumes the same draws whatever `rare_fraction` is, so the SFT set and the questions do not depend on it."""
    rng = np.random.default_rng([seed, 7])                                  # the world, separate from training
    probs = rng.dirichlet(np.full(len(LETTERS), config.alpha), size=config.entities)  # (E, 4) p_i
    rare = np.sort(rng.permutation(config.entities)[: round(config.rare_fraction * config.entities)])
    return probs, rare, rng


def pretraining_counts(config: Config, rare: np.ndarray) -> np.ndarray:
    """(E,) the number of sampled answers of each fact in the pre-training corpus."""
    counts = np.full(config.entities, config.per_entity)
    counts[rare] = config.rare_per_entity
    return counts


def _pretrained_dir(config: Config, probs: np.ndarray, rare: np.ndarray, ctx: RunContext):
    settings = {k: v for k, v in asdict(config).items()
                if k not in ("sft_fraction", "sft_copies", "eval_questions", "model", "sft_answers")}
    settings["seed"] = ctx.seed
    settings["world"] = WORLD  # the generator's layout: a model pre-trained by an older world is never reused

    def make(path):
        words = vocabulary(config.entities, config.vocab_size)
        tokenizer = build_tokenizer(words)
        n_filler = sum(w.startswith("w") for w in words)
        texts = pretraining_texts(probs, pretraining_counts(config, rare), config.filler_fraction, n_filler,
                                  ctx.rng, config.prior_count)
        model = build_lm(config.vocab_size, config.hidden_size, config.layers, ctx.torch_generator)
        pretrain(model, encode(tokenizer, texts), config.pretrain_steps, config.batch_size, config.pretrain_lr,
                 ctx.torch_generator)
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)

    return cached_dir(ctx.cache_dir("calibration"), settings, make)


@task(family="calibration", config=Config, version=2, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> CalibrationProblem:
    probs, rare, rng = world(config, ctx.seed)
    source = config.model or _pretrained_dir(config, probs, rare, ctx)
    model, tokenizer = load_lm(source)
    letters = letter_ids(tokenizer)
    sft_entities = rng.permutation(config.entities)[: max(1, round(config.sft_fraction * config.entities))]
    answer = probs.argmax(axis=1)                                               # deterministic (mode) answer
    if config.sft_answers == "random":                                          # its own stream: the rest unchanged
        answer = np.random.default_rng([ctx.seed, 8]).integers(0, len(LETTERS), size=config.entities)
    sft_texts = [f"{question_text(i)} {LETTERS[int(answer[i])]}" for i in np.repeat(sft_entities, config.sft_copies)]
    sft_ids = encode(tokenizer, sft_texts)
    labels = torch.full_like(sft_ids, -100)
    labels[:, -1] = sft_ids[:, -1]                                              # only the answer token is learned
    eval_entities = rng.integers(0, config.entities, size=config.eval_questions)
    answers = np.array([rng.choice(len(LETTERS), p=probs[i]) for i in eval_entities])
    return CalibrationProblem(model=model, tokenizer=tokenizer, sft_input_ids=sft_ids, sft_labels=labels,
                              eval_input_ids=encode(tokenizer, [question_text(i) for i in eval_entities]),
                              eval_answers=answers, eval_bayes=probs[eval_entities], letter_ids=tuple(letters),
                              vocab_size=int(model.config.vocab_size), hidden_size=int(model.config.hidden_size))
