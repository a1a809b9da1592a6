"""Erase a concept from a rectified-flow transformer: the tiny digit Flux on the CPU, or a FluxPipeline (FLUX.1-dev).

The CPU-scale world of docs/papers/eraseanything.md ("tiny Flux"): the base model is diffusers'
FluxTransformer2DModel (4 dual-stream + 2 single-stream blocks, 4 heads of 16) trained once on the
1,797 8 × 8 digits with concept prompts (tasks/erasure/_base.py, cached under the run context's
`cache_dir("erasure")`); a frozen MLP classifier trained on the same images judges generations. The
erased concept ("seven"), its synonyms ("7", "sieben"), the irrelevant concepts D_ir handed to the
methods and the preserved concepts scored are settings (digit words of the vocabulary). D_un is
`concept_images` base-model samples of the concept prompt (the paper: a folder of Flux generations
of the concept).

`pipeline` (the paper's scale): a FluxPipeline hub id ("black-forest-labs/FLUX.1-dev") or a directory
written by `FluxPipeline.save_pretrained`, loaded with `FluxPipeline.from_pretrained` (bfloat16 on CUDA,
float32 on the CPU) and moved to the run's device whole (no CPU offload). Its transformer is the model
the methods edit; T5 (padded to `max_tokens`, the paper: 256) and CLIP encode the prompts; the sampler is
FluxPipeline's (its scheduler's shifted sigmas, Flux-dev's guidance embedding at `guidance` = 3, none for
schnell) at `resolution` pixels; D_un are the pipeline's latents of the concept prompt (the paper's
images through the VAE, without the decode / encode round trip). The judge is CLIP zero-shot
classification (`judge`, a CLIPModel hub id or directory) over "a photo of {c}" for the erased concept
and every preserved concept, and the Fréchet distance is on CLIP image embeddings. Concepts are free
strings there ("nudity", "Van Gogh"); prompts use PIPELINE_TEMPLATES. Memory: FLUX.1-dev in bfloat16 is
~24 GB for the transformer, ~9.5 GB for T5-XXL; a method holds the original and an edited copy of the
transformer plus activations and the L × L attention map of the last dual-stream block (L = 256 + 1024 at
512 px): an 80 GB GPU. FLUX.1-dev is gated on the hub (accept its licence; HF_TOKEN).

Evaluation sets (fixed by the task's seed, the same noise for every method): `n_eval` concept
prompts (the templates in turn), the same prompts with shuffled words, `n_eval` per synonym, and
`n_preserve` per preserved concept; the original model's generations of the preserved prompts
are kept as the reference of the Fréchet distance.

`pretrained`: a directory (or hub id) laid out as the cache entries are (transformer/ in diffusers'
format, text_encoder.pt, classifier.npz) replaces training of the tiny model, so a bigger digit model
trained elsewhere runs unchanged (the test loads a saved cache entry this way).
Fidelity: reconstructed (our plan at CPU scale; the paper's FLUX.1-dev setting through `pipeline`,
with CLIP in place of the paper's NudeNet / I2P and COCO-FID protocols).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from bench.toolkit.cache import cached_dir, source_digest
from tasks import erasure as family
from tasks.erasure import CLIPJudge, ErasureProblem, MLPJudge, _backbone, _base, _flux
from tasks.erasure._backbone import PipelineBackbone, TinyBackbone, load_pipeline
from tasks.erasure._base import BaseSettings, cached_base, load
from tasks.erasure._flux import TEMPLATES, WORD_CLASS

SMALLEST = {"train_steps": 20, "layers": 1, "single_layers": 0, "n_eval": 4, "n_preserve": 2,
            "preserve": ["one", "two"], "concept_images": 4, "sample_steps": 4}
PAPER_SAMPLE_STEPS = 28
# The tiny model's sampler takes 14 Euler steps (task version 3; 28 before). Its straight 8 x 8 flows need no more
# (the base model renders the concept and the preserved digits as it does at 28), and the steps are most of the
# world's cost: every scored generation, and the methods' own sampling (EraseAnything's and ESD's x_t sampled by the
# current model, the rSCL anchors), about halve; the CPU reproduction's verdicts were re-measured at 14
# (docs/papers/eraseanything.md). The paper's 28 stay the pipeline path's default.
TINY_SAMPLE_STEPS = 14
PIPELINE_TEMPLATES = ("a photo of {}", "an image of {}", "a picture showing {}", "a detailed photo of {}")


@dataclass(frozen=True)
class Config:
    concept: str = "seven"                          # c, the concept (keyword) to erase
    synonyms: tuple[str, ...] = ("7", "sieben")      # synonyms of c (the paper: WordNet synonyms of the keyword)
    irrelevant: tuple[str, ...] = ("one", "four", "eight")  # D_ir, K = 3 irrelevant concepts (the paper: from GPT-4o)
    preserve: tuple[str, ...] = ("zero", "one", "two", "three", "four", "five", "six", "eight", "nine")
    concept_images: int = 32       # |D_un| (plan: 32 base-model samples of the concept prompt)
    n_eval: int = 64               # generations per concept / shuffled / synonym set
    n_preserve: int = 24           # generations per preserved concept
    # Euler steps; None: the paper's 28 on a pipeline, 14 on the tiny model (why: TINY_SAMPLE_STEPS, above)
    sample_steps: int | None = None
    guidance: float = 3.0          # guidance of sampling (the paper: Flux guidance 3; tiny model: classifier-free)
    # 4 + 2 blocks, not 2 + 1 (task version 1): the 2 + 1 model rendered the preserved digits at 0.75 accuracy only
    # and every eraser drove the concept rate below the ideal erasure's (keyword_deletion), so neither erasure nor
    # preservation could separate the methods; the 4 + 2 model renders the preserved digits at ~0.98 and leaves the
    # baselines' erasure incomplete on some prompt sets (docs/papers/eraseanything.md, "Our CPU-scale world")
    layers: int = 4                # dual-stream blocks of the base model (FLUX.1-dev: 19)
    single_layers: int = 2         # single-stream blocks (FLUX.1-dev: 38)
    heads: int = 4
    head_dim: int = 16
    train_steps: int = 1500        # base-model training steps (batch 128, AdamW 1e-3, cosine)
    base_seed: int = 0             # seed of the cached base model and judge (shared by every run seed)
    pretrained: str = ""           # a tiny-model directory or hub id to load instead of training ("" = train/cache)
    pipeline: str = ""             # a FluxPipeline hub id or save_pretrained directory ("" = the tiny digit model)
    judge: str = "openai/clip-vit-large-patch14"  # CLIP judge of the pipeline path (hub id or directory)
    resolution: int = 512          # pipeline path: image side in pixels (the paper: 512)
    max_tokens: int = 256          # pipeline path: T5 sequence length (the paper: 256)
    train_guidance: float = 3.5    # pipeline path: Flux guidance of the methods' training forwards (the paper: 3.5)
    batch_size: int = 4            # pipeline path: generations per sampler batch

    def __post_init__(self) -> None:
        words = (self.concept, *self.synonyms, *self.irrelevant, *self.preserve)
        if self.pipeline:
            self._check_free_concepts(words)
        else:
            self._check_digit_concepts(words)
        if not self.synonyms or not self.preserve:
            raise ValueError("at least one synonym and one preserved concept are needed")
        positive = (self.concept_images, self.n_eval, self.n_preserve, self.steps(), self.layers, self.heads,
                    self.head_dim, self.train_steps, self.max_tokens, self.batch_size)
        if min(positive) < 1 or self.single_layers < 0 or self.guidance < 0 or self.head_dim % 8:
            raise ValueError("counts must be >= 1 (single_layers >= 0), guidance >= 0 and head_dim a multiple of 8")
        if self.pipeline and (self.pretrained or not self.judge or self.resolution < 16 or self.resolution % 16):
            raise ValueError("pipeline needs a judge (CLIP hub id or directory), no pretrained tiny model and a "
                             "resolution that is a multiple of 16")

    def _check_digit_concepts(self, words) -> None:
        unknown = [w for w in words if w not in WORD_CLASS]
        if unknown:
            raise ValueError(f"unknown concept word(s) {unknown}; allowed: {', '.join(WORD_CLASS)}")
        target = WORD_CLASS[self.concept]
        if any(WORD_CLASS[w] != target for w in self.synonyms):
            raise ValueError(f"synonyms {self.synonyms} must name the same digit as {self.concept!r}")
        if any(WORD_CLASS[w] == target for w in (*self.irrelevant, *self.preserve)):
            raise ValueError(f"irrelevant {self.irrelevant} and preserve {self.preserve} "
                             f"must not name {self.concept!r}")

    def _check_free_concepts(self, words) -> None:
        if any(not w.strip() or w != " ".join(w.split()) or "{" in w for w in words):
            raise ValueError(f"concepts must be non-empty text without braces or extra spaces; got {list(words)}")
        if set(self.keywords()) & {*self.irrelevant, *self.preserve} or len(set(self.preserve)) < len(self.preserve):
            raise ValueError(f"irrelevant {self.irrelevant} and preserve {self.preserve} (distinct) must not name "
                             f"the concept or its synonyms {self.keywords()}")

    def keywords(self) -> tuple[str, ...]:
        return (self.concept, *self.synonyms)

    def steps(self) -> int:
        """The sampler's Euler steps: `sample_steps`, else the paper's 28 on a pipeline and 14 on the tiny model."""
        if self.sample_steps is not None:
            return self.sample_steps
        return PAPER_SAMPLE_STEPS if self.pipeline else TINY_SAMPLE_STEPS


def _prompts(word: str, n: int, templates=TEMPLATES) -> list[str]:
    return [templates[i % len(templates)].format(word) for i in range(n)]


def _tiny_world(config: Config, ctx: RunContext):
    """(backbone, judge, judge accuracy, class of the concept, classes of the preserved concepts)."""
    if config.pretrained:
        transformer, encoder, classifier, accuracy = load(config.pretrained)
    else:
        settings = BaseSettings(config.layers, config.single_layers, config.heads, config.head_dim,
                                config.train_steps, seed=config.base_seed)
        transformer, encoder, classifier, accuracy = cached_base(settings, ctx.cache_dir("erasure"), ctx.log)
    backbone = TinyBackbone(transformer, encoder, config.steps(), config.guidance, ctx.device)
    return (backbone, MLPJudge(tuple(classifier)), accuracy, WORD_CLASS[config.concept],
            [WORD_CLASS[w] for w in config.preserve])


def _pipeline_world(config: Config, ctx: RunContext):
    pipe = load_pipeline(config.pipeline, ctx.device)
    backbone = PipelineBackbone(pipe, config.steps(), config.guidance, config.train_guidance,
                                config.resolution, config.max_tokens, config.batch_size)
    judge = CLIPJudge(config.judge, (config.concept, *config.preserve), ctx.device)
    return backbone, judge, math.nan, 0, list(range(1, len(config.preserve) + 1))


# version 2: the default base model grew from 2 + 1 to 4 + 2 blocks (Config.layers / single_layers: the 2 + 1 world
# sat every eraser at the floor of the concept rate and its base model preserved the other digits at 0.75)
# version 3: the tiny model samples with 14 Euler steps by default (TINY_SAMPLE_STEPS), not 28
@task(family="erasure", config=Config, version=3, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> ErasureProblem:
    backbone, judge, accuracy, concept_class, preserve_classes = (
        _pipeline_world if config.pipeline else _tiny_world)(config, ctx)
    templates = PIPELINE_TEMPLATES if config.pipeline else TEMPLATES
    rng, generator = ctx.rng, ctx.torch_generator
    concept = _prompts(config.concept, config.n_eval, templates)
    shuffled = [" ".join(rng.permutation(p.split())) for p in concept]
    synonym = [p for w in config.synonyms for p in _prompts(w, config.n_eval, templates)]
    preserve = [p for w in config.preserve for p in _prompts(w, config.n_preserve, templates)]
    prompts = {"concept": concept, "shuffled": shuffled, "synonym": synonym, "preserve": preserve}
    noise = {name: backbone.noise(len(p), generator) for name, p in prompts.items()}
    problem = ErasureProblem(
        backbone=backbone, judge=judge, classifier_accuracy=accuracy, concept=config.concept,
        concept_class=concept_class, synonyms=tuple(config.synonyms), irrelevant=tuple(config.irrelevant),
        preserve=tuple(config.preserve), templates=templates, concept_images=torch.empty(0), eval_prompts=prompts,
        eval_noise=noise, preserve_labels=np.repeat(preserve_classes, config.n_preserve),
        reference_features=np.empty(0))
    d_un_noise = backbone.noise(config.concept_images, generator)

    def references() -> tuple[np.ndarray, torch.Tensor]:
        """The original model's judge features on the preserved prompts, and D_un."""
        _, reference = problem.judged(backbone.transformer, preserve, noise["preserve"])
        d_un = problem.generate_latents(backbone.transformer, _prompts(config.concept, config.concept_images,
                                                                       templates), d_un_noise)
        return reference, d_un

    if config.pipeline or config.pretrained:  # a model outside the cache's keys: computed every time
        reference, d_un = references()
    else:
        reference, d_un = _cached_references(config, ctx, references)
    return dataclasses.replace(problem, concept_images=d_un, reference_features=reference)


def _cached_references(config: Config, ctx: RunContext, compute) -> tuple[np.ndarray, torch.Tensor]:
    """The tiny world's references, computed once per (every task setting, seed) and kept beside its base model.

    They are ~250 generations of the frozen base model (a third of a method run's cost on the CPU) and the same for
    every method of a seed, so each of a reproduction's cells computed them again; computed once they are the same
    numbers (the cache is keyed by the code's source and this process's float numerics as well)."""
    def save(directory: Path) -> None:
        reference, d_un = compute()
        np.save(directory / "reference_features.npy", reference)
        torch.save(d_un, directory / "concept_images.pt")

    settings = {"artefact": "concept-erasure-references", "seed": ctx.seed, "device": ctx.device,
                "config": dataclasses.asdict(config), "torch": torch.__version__.split("+")[0],
                # the code that generates and judges: a change to the sampler, the judge or this task recomputes
                "code": source_digest(sys.modules[__name__], family, _backbone, _base, _flux)}
    directory = cached_dir(ctx.cache_dir("erasure"), settings, save, prefix="references-")
    return (np.load(directory / "reference_features.npy"),
            torch.load(directory / "concept_images.pt", weights_only=True).to(ctx.device))
