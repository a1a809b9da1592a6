"""Erase a digit concept from a tiny Flux transformer trained with rectified flow on scikit-learn's digits.

The CPU-scale world of spec shared/papers/eraseanything.md ("tiny Flux"): the base model is
diffusers' FluxTransformer2DModel (2 dual-stream + 1 single-stream blocks, 4 heads of 16) trained
once on the 1,797 8 × 8 digits with concept prompts (tasks/erasure/_base.py, cached under
`cache_dir`); a frozen MLP classifier trained on the same images judges generations. The erased
concept ("seven"), its synonyms ("7", "sieben"), the irrelevant concepts D_ir handed to the methods
and the preserved concepts scored are settings. D_un is `concept_images` base-model samples of the
concept prompt (the paper: a folder of Flux generations of the concept).

Evaluation sets (fixed by the task's seed, the same noise for every method): `n_eval` concept
prompts (the templates in turn), the same prompts with shuffled words, `n_eval` per synonym, and
`n_preserve` per preserved concept; the original model's generations of the preserved prompts
are kept as the reference of the Fréchet distance.

`pretrained`: a directory (or hub id) laid out as the cache entries are (transformer/ in diffusers'
format, text_encoder.pt, classifier.npz) replaces training, so a bigger model trained elsewhere runs
unchanged (the test loads a saved cache entry this way). A FLUX.1-dev pipeline id is not accepted: it needs
T5 / CLIP / VAE wiring and a real-image judge (NudeNet, CLIP), which this task does not have.
Fidelity: reconstructed (the spec's plan; the paper's FLUX.1-dev, I2P/NudeNet and COCO protocols are
paper-scale only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from tasks.erasure import ErasureProblem, features
from tasks.erasure._base import BaseSettings, cached_base, load
from tasks.erasure._flux import TEMPLATES, WORD_CLASS, pack, sample

SMALLEST = {"train_steps": 20, "layers": 1, "single_layers": 0, "n_eval": 4, "n_preserve": 2,
            "preserve": ["one", "two"], "concept_images": 4, "sample_steps": 4}


@dataclass(frozen=True)
class Config:
    concept: str = "seven"                          # c, the concept (keyword) to erase
    synonyms: tuple[str, ...] = ("7", "sieben")      # synonyms of c (the paper: WordNet synonyms of the keyword)
    irrelevant: tuple[str, ...] = ("one", "four", "eight")  # D_ir, K = 3 irrelevant concepts (the paper: from GPT-4o)
    preserve: tuple[str, ...] = ("zero", "one", "two", "three", "four", "five", "six", "eight", "nine")
    concept_images: int = 32       # |D_un| (spec: 32 base-model samples of the concept prompt)
    n_eval: int = 64               # generations per concept / shuffled / synonym set
    n_preserve: int = 24           # generations per preserved concept
    sample_steps: int = 28         # Euler steps (the paper: 28)
    guidance: float = 3.0          # classifier-free guidance of sampling (the paper: Flux guidance 3)
    layers: int = 2                # dual-stream blocks of the base model (FLUX.1-dev: 19)
    single_layers: int = 1         # single-stream blocks (FLUX.1-dev: 38)
    heads: int = 4
    head_dim: int = 16
    train_steps: int = 1500        # base-model training steps (batch 128, AdamW 1e-3, cosine)
    base_seed: int = 0             # seed of the cached base model and judge (shared by every run seed)
    cache_dir: str = "~/.cache/icml2025-bench/erasure"
    pretrained: str = ""           # a model directory or hub id to load instead of training ("" = train/cache)

    def __post_init__(self) -> None:
        words = (self.concept, *self.synonyms, *self.irrelevant, *self.preserve)
        unknown = [w for w in words if w not in WORD_CLASS]
        if unknown:
            raise ValueError(f"unknown concept word(s) {unknown}; allowed: {', '.join(WORD_CLASS)}")
        target = WORD_CLASS[self.concept]
        if any(WORD_CLASS[w] != target for w in self.synonyms):
            raise ValueError(f"synonyms {self.synonyms} must name the same digit as {self.concept!r}")
        if any(WORD_CLASS[w] == target for w in (*self.irrelevant, *self.preserve)):
            raise ValueError(f"irrelevant {self.irrelevant} and preserve {self.preserve} must not name {self.concept!r}")
        if not self.synonyms or not self.preserve:
            raise ValueError("at least one synonym and one preserved concept are needed")
        positive = (self.concept_images, self.n_eval, self.n_preserve, self.sample_steps, self.layers, self.heads,
                    self.head_dim, self.train_steps)
        if min(positive) < 1 or self.single_layers < 0 or self.guidance < 0 or self.head_dim % 8:
            raise ValueError("counts must be >= 1 (single_layers >= 0), guidance >= 0 and head_dim a multiple of 8")


def _prompts(word: str, n: int) -> list[str]:
    return [TEMPLATES[i % len(TEMPLATES)].format(word) for i in range(n)]


def _noise(n: int, generator: torch.Generator) -> torch.Tensor:
    return torch.randn((n, 16, 4), generator=generator)


@task(family="erasure", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> ErasureProblem:
    if config.pretrained:
        transformer, encoder, classifier, accuracy = load(config.pretrained)
    else:
        settings = BaseSettings(config.layers, config.single_layers, config.heads, config.head_dim,
                                config.train_steps, seed=config.base_seed)
        transformer, encoder, classifier, accuracy = cached_base(settings, config.cache_dir, ctx.log)
    rng, generator = ctx.rng, ctx.torch_generator
    concept = _prompts(config.concept, config.n_eval)
    shuffled = [" ".join(rng.permutation(p.split())) for p in concept]
    synonym = [p for w in config.synonyms for p in _prompts(w, config.n_eval)]
    preserve = [p for w in config.preserve for p in _prompts(w, config.n_preserve)]
    prompts = {"concept": concept, "shuffled": shuffled, "synonym": synonym, "preserve": preserve}
    noise = {name: _noise(len(p), generator) for name, p in prompts.items()}
    empty = encoder.encode([""])

    def generate(words: list[str], eps: torch.Tensor) -> torch.Tensor:
        return sample(transformer, encoder.encode(words), empty, eps, config.sample_steps, config.guidance)

    reference = generate(preserve, noise["preserve"]).numpy()
    d_un = generate(_prompts(config.concept, config.concept_images), _noise(config.concept_images, generator))
    return ErasureProblem(
        transformer=transformer, text_encoder=encoder, classifier=tuple(classifier), classifier_accuracy=accuracy,
        concept=config.concept, concept_class=WORD_CLASS[config.concept], synonyms=tuple(config.synonyms),
        irrelevant=tuple(config.irrelevant), preserve=tuple(config.preserve), templates=TEMPLATES,
        concept_images=pack(d_un), sample_steps=config.sample_steps, guidance=config.guidance,
        eval_prompts=prompts, eval_noise=noise,
        preserve_labels=np.array([WORD_CLASS[w] for w in config.preserve for _ in range(config.n_preserve)]),
        reference_features=features(classifier, reference))
