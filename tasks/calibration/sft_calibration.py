"""A tiny LM pre-trained on stochastic facts, then instruction-tuned on deterministic answers.

Huang, Lu & Zeng, ICML 2025, arXiv 2508.00264; our CPU plan (docs/papers/label-smoothing-calibration.md):
1. World: `entities` facts, each with an answer distribution p_i ~ Dirichlet(α·1) over the letters A–D.
2. Pre-training: a LlamaForCausalLM with vocabulary V = `vocab_size` and hidden size d = `hidden_size`
   learns next-token prediction on `per_entity` sampled answers per fact plus filler sentences, so it
   predicts p_i: calibrated up to sampling noise (cached, keyed by every setting and the seed).
   `model` = a local directory or hub id skips this and loads that model instead (its tokenizer must
   spell the world's words; a GPU user passes a bigger model here).
3. SFT set: "instruction" copies of the questions of a fraction `sft_fraction` of the entities, answered
   deterministically with the mode of p_i (one-hot targets, as instruction data is), prompts masked.
4. Evaluation: `eval_questions` questions over all entities, answers sampled from p_i (CPU plan: ≥ 2,000).
The paper varies V and d (its LV-LLM argument): both are fields here.

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
from tasks.calibration._world import (LETTERS, build_lm, build_tokenizer, encode, letter_ids,
                                      load_lm, pretrain, pretraining_texts, question_text, vocabulary)

SMALLEST = {"entities": 8, "per_entity": 20, "vocab_size": 64, "hidden_size": 16, "pretrain_steps": 30,
            "eval_questions": 200, "sft_copies": 4}


@dataclass(frozen=True)
class Config:
    vocab_size: int = 1024        # V, output vocabulary of the LM (paper: 32k–256k; its LV-LLM argument varies it)
    hidden_size: int = 64         # d, hidden size (paper: 896–5120; CPU plan: 16–128)
    layers: int = 2               # transformer blocks (CPU plan: 2–4)
    entities: int = 64            # facts in the world
    alpha: float = 1.0            # α, Dirichlet concentration of each fact's answer distribution (E[max p] ≈ 0.52)
    per_entity: int = 200         # pre-training samples of each fact's answer
    filler_fraction: float = 0.3  # share of pre-training documents that are filler sentences
    pretrain_steps: int = 1500    # AdamW steps of pre-training
    pretrain_lr: float = 3e-3
    batch_size: int = 128
    sft_fraction: float = 0.5     # share of the facts in the SFT set
    sft_copies: int = 16          # copies of each SFT question (the SFT set's size)
    eval_questions: int = 2000    # n, multiple-choice evaluation questions (CPU plan: ≥ 2,000)
    model: str = ""               # "" = the tiny pre-trained LM above; else a local directory or hub id

    def __post_init__(self) -> None:
        ints = {"vocab_size": self.vocab_size, "hidden_size": self.hidden_size, "layers": self.layers,
                "entities": self.entities, "per_entity": self.per_entity, "pretrain_steps": self.pretrain_steps,
                "batch_size": self.batch_size, "sft_copies": self.sft_copies, "eval_questions": self.eval_questions}
        bad = {k: v for k, v in ints.items() if v < 1}
        if bad:
            raise ValueError(f"these settings must be >= 1: {bad}")
        if self.hidden_size % 16 and self.hidden_size > 16:
            raise ValueError(f"hidden_size must be a multiple of 16 (heads of 16), got {self.hidden_size}")
        vocabulary(self.entities, self.vocab_size)  # raises if V cannot hold the world's words
        if not (self.alpha > 0 and 0 <= self.filler_fraction < 1 and 0 < self.sft_fraction <= 1
                and self.pretrain_lr > 0):
            raise ValueError(f"need alpha > 0, 0 <= filler_fraction < 1, 0 < sft_fraction <= 1, pretrain_lr > 0; "
                             f"got {self.alpha}, {self.filler_fraction}, {self.sft_fraction}, {self.pretrain_lr}")


def _pretrained_dir(config: Config, probs: np.ndarray, ctx: RunContext):
    settings = {k: v for k, v in asdict(config).items()
                if k not in ("sft_fraction", "sft_copies", "eval_questions", "model")}
    settings["seed"] = ctx.seed

    def make(path):
        words = vocabulary(config.entities, config.vocab_size)
        tokenizer = build_tokenizer(words)
        n_filler = sum(w.startswith("w") for w in words)
        texts = pretraining_texts(probs, config.per_entity, config.filler_fraction, n_filler, ctx.rng)
        model = build_lm(config.vocab_size, config.hidden_size, config.layers, ctx.torch_generator)
        pretrain(model, encode(tokenizer, texts), config.pretrain_steps, config.batch_size, config.pretrain_lr,
                 ctx.torch_generator)
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)

    return cached_dir(ctx.cache_dir("calibration"), settings, make)


@task(family="calibration", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> CalibrationProblem:
    rng = np.random.default_rng([ctx.seed, 7])                                  # the world, separate from training
    probs = rng.dirichlet(np.full(len(LETTERS), config.alpha), size=config.entities)  # (E, 4) p_i
    source = config.model or _pretrained_dir(config, probs, ctx)
    model, tokenizer = load_lm(source)
    letters = letter_ids(tokenizer)
    sft_entities = rng.permutation(config.entities)[: max(1, round(config.sft_fraction * config.entities))]
    sft_texts = [f"{question_text(i)} {LETTERS[int(np.argmax(probs[i]))]}"       # deterministic (mode) answer
                 for i in np.repeat(sft_entities, config.sft_copies)]
    sft_ids = encode(tokenizer, sft_texts)
    labels = torch.full_like(sft_ids, -100)
    labels[:, -1] = sft_ids[:, -1]                                              # only the answer token is learned
    eval_entities = rng.integers(0, config.entities, size=config.eval_questions)
    answers = np.array([rng.choice(len(LETTERS), p=probs[i]) for i in eval_entities])
    return CalibrationProblem(model=model, tokenizer=tokenizer, sft_input_ids=sft_ids, sft_labels=labels,
                              eval_input_ids=encode(tokenizer, [question_text(i) for i in eval_entities]),
                              eval_answers=answers, eval_bayes=probs[eval_entities], letter_ids=tuple(letters),
                              vocab_size=int(model.config.vocab_size), hidden_size=int(model.config.hidden_size))
