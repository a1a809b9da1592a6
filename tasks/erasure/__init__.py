"""Concept erasure in a text-conditioned rectified-flow transformer (the EraseAnything setting).

Gao et al., "EraseAnything: Enabling Concept Erasure in Rectified Flow Transformers", ICML 2025,
arXiv 2412.20413 (docs/papers/eraseanything.md). An `ErasureProblem` hands a method a
frozen base model behind a `Backbone` (tasks/erasure/_backbone.py: the tiny digit Flux with its
word-level encoder, or a diffusers FluxPipeline such as FLUX.1-dev with T5 / CLIP / VAE), the concept
to erase with its keyword synonyms, the irrelevant concepts D_ir, concept latents D_un (base-model
samples of the concept prompt) and the sampler settings. A method returns the edited transformer
(`ErasureResult`), with any LoRA merged into its weights.

`score` is the only judge: it samples the edited model from the problem's fixed noise with the
backbone's sampler (14 Euler steps on the tiny model, 28 on a pipeline; CFG 3 for the tiny model, Flux-dev's
guidance embedding 3 for a pipeline) and classifies the decoded images with the problem's frozen judge: the MLP
digit classifier (`MLPJudge`) or CLIP zero-shot classification over "a photo of {concept}" for the erased and every
preserved concept (`CLIPJudge`, transformers' CLIPModel).
    concept_rate   fraction of concept-prompt generations classified as the concept (primary, lower better)
    synonym_rate   the same under the synonym keywords ("7", "sieben" for "seven")
    shuffled_rate  the same with the prompt's words shuffled
    preserve_accuracy  fraction of generations for the preserved concepts classified as their own class
    feature_fd     Fréchet distance between the judge's features (the MLP's hidden layer; CLIP's projected
                   image embeddings) of the edited and the original model's generations for the preserved
                   prompts (same noise), the FID analogue of the paper's COCO comparison against the original Flux
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.spec import Metric, Resources

# what the family's methods may use of its worlds, beyond the problem and result types (they import no private
# task module: tests/test_layers.py)
from tasks.erasure._flux import euler_sample as euler_sample
from tasks.erasure._flux import record_last_block as record_last_block


@dataclass(frozen=True, eq=False)
class ErasureProblem:
    backbone: Any                      # TinyBackbone | PipelineBackbone: the frozen original model v_θ0 and its sampler
    judge: Any                         # MLPJudge | CLIPJudge: labels and features of decoded images
    classifier_accuracy: float         # held-out accuracy of the judge on real digits (nan: not measured, CLIP)
    concept: str                       # c, the keyword to erase ("seven", "nudity", "Van Gogh")
    concept_class: int                 # the class the judge assigns to c
    synonyms: tuple[str, ...]          # other keywords of c (the paper: WordNet synonyms)
    irrelevant: tuple[str, ...]        # D_ir: the K irrelevant concepts (the paper: GPT-4o's far / mid / no-relation)
    preserve: tuple[str, ...]          # concepts whose generations must survive
    templates: tuple[str, ...]         # prompt templates with one "{}" word for the keyword
    concept_images: torch.Tensor       # D_un: (n, tokens, channels) packed base-model latents of the concept prompt
    eval_prompts: dict                 # set name -> list of prompts (concept, shuffled, synonym, preserve)
    eval_noise: dict                   # set name -> (n, tokens, channels) noise
    preserve_labels: np.ndarray        # class of each preserve prompt
    reference_features: np.ndarray     # judge features of the original model on the preserve prompts

    @property
    def transformer(self) -> torch.nn.Module:
        return self.backbone.transformer

    @property
    def sample_steps(self) -> int:
        return self.backbone.steps

    @property
    def guidance(self) -> float:
        return self.backbone.guidance

    @property
    def keywords(self) -> tuple[str, ...]:
        return (self.concept, *self.synonyms)

    def encode(self, prompts: list[str]):
        return self.backbone.encode(prompts)

    def generate_latents(self, transformer: torch.nn.Module, prompts: list[str], noise: torch.Tensor) -> torch.Tensor:
        """Packed latents of `transformer` under `prompts` from `noise`, with the backbone's sampler (in batches)."""
        size = self.backbone.batch or len(prompts)
        return torch.cat([self.backbone.sample(transformer, self.encode(prompts[i:i + size]), noise[i:i + size])
                          for i in range(0, len(prompts), size)])

    def judged(self, transformer: torch.nn.Module, prompts: list[str], noise: torch.Tensor):
        """(judge labels, judge features) of the decoded generations, generated and judged batch by batch."""
        size = self.backbone.batch or len(prompts)
        parts = [self.judge.judge(self.backbone.decode(self.generate_latents(
            transformer, prompts[i:i + size], noise[i:i + size]))) for i in range(0, len(prompts), size)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


@dataclass(frozen=True, eq=False)
class ErasureResult:
    transformer: torch.nn.Module       # the edited model (LoRA merged), same class and shapes as the original


# What one method run needs. The tiny model: ~2 GB of host memory on one core. A FLUX.1-dev pipeline
# (`pipeline` task setting): one CUDA device holding the bfloat16 pipeline (~24 GB transformer, ~9.5 GB
# T5-XXL, CLIP-L, VAE) plus the method's edited copy of the transformer (~24 GB) and activations /
# attention maps: an 80 GB GPU (the paper's code spreads this over two GPUs); host memory to load it.
RESOURCES = Resources(cpus=1.0, gpus=0.0, memory_gb=2.0)

METRICS = {
    "concept_rate": Metric(False, "", True, "fraction of concept-prompt generations the frozen classifier labels "
                           "as the erased concept", bounds=(0.0, 1.0)),
    "synonym_rate": Metric(False, "", False, "the same for prompts that name the concept by a synonym",
                           bounds=(0.0, 1.0)),
    "shuffled_rate": Metric(False, "", False, "the same for concept prompts with shuffled word order",
                            bounds=(0.0, 1.0)),
    "preserve_accuracy": Metric(True, "", False, "fraction of generations for preserved concepts classified "
                                "as their own class", bounds=(0.0, 1.0)),
    "feature_fd": Metric(False, "", False, "Fréchet distance of classifier features, edited vs original model, "
                         "preserved prompts (same noise)", bounds=(0.0, None)),
}


# ---- the judges ---------------------------------------------------------------------------------

def features(classifier, images) -> np.ndarray:
    """Hidden ReLU activations (n, 64) of the MLP judge on images (n, 8, 8) in [−1, 1]."""
    x = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    return np.maximum(x @ classifier[0] + classifier[1], 0.0)


def classify(classifier, images) -> np.ndarray:
    return (features(classifier, images) @ classifier[2] + classifier[3]).argmax(axis=1)


@dataclass(frozen=True, eq=False)
class MLPJudge:
    """The tiny world's judge: an MLP digit classifier (W0 (64, 64), b0, W1 (64, 10), b1); classes are digits."""
    weights: tuple[np.ndarray, ...]

    def judge(self, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(labels, hidden features) of images (n, 8, 8) in [−1, 1]."""
        return classify(self.weights, images), features(self.weights, images)


class CLIPJudge:
    """Zero-shot CLIP: the class of an image is argmax_c cos(f_image, f_text("a photo of {c}")).

    `classes` are the erased concept (class 0) and the preserved concepts; the features are CLIP's projected
    image embeddings (get_image_features), the space of the Fréchet distance.
    """

    def __init__(self, name: str, classes: tuple[str, ...], device: str = "cpu"):
        from transformers import CLIPModel, CLIPProcessor

        from bench.toolkit.models import from_pretrained
        model, _ = from_pretrained(CLIPModel, name, "CLIP judge", with_tokenizer=False)
        self.model = model.to(device).eval().requires_grad_(False)
        self.processor = CLIPProcessor.from_pretrained(name, local_files_only=Path(name).expanduser().is_dir())
        self.device, self.classes = device, classes
        self.prompts = [f"a photo of {c}" for c in classes]
        text = self.processor(text=self.prompts, return_tensors="pt", padding=True).to(device)
        with torch.no_grad():
            self.text_features = _embedding(self.model.get_text_features(**text)).float().cpu()

    def judge(self, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(labels, image embeddings) of images (n, 3, H, W) in [0, 1], resized / normalised by the CLIP processor."""
        pixels = self.processor(images=list(torch.from_numpy(images)), return_tensors="pt", do_rescale=False)
        with torch.no_grad():
            f = _embedding(self.model.get_image_features(pixel_values=pixels["pixel_values"].to(self.device)))
        f = f.float().cpu()
        cosine = torch.nn.functional.normalize(f, dim=-1) @ torch.nn.functional.normalize(self.text_features, dim=-1).T
        return cosine.argmax(dim=1).numpy(), f.numpy().astype(np.float64)


def _embedding(output) -> torch.Tensor:
    """get_*_features returns the projected embedding (a tensor, or a model output holding it in pooler_output)."""
    return output if isinstance(output, torch.Tensor) else output.pooler_output


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """‖μ_a − μ_b‖² + tr(Σ_a + Σ_b − 2 (Σ_a Σ_b)^{1/2}) of two feature samples (rows), as in FID."""
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    vals, vecs = np.linalg.eigh(cov_a)
    half_a = (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T              # Σ_a^{1/2}
    # tr (Σ_a Σ_b)^{1/2} = tr (Σ_a^{1/2} Σ_b Σ_a^{1/2})^{1/2}: a symmetric PSD matrix, stable when singular
    trace_root = np.sum(np.sqrt(np.clip(np.linalg.eigvalsh(half_a @ cov_b @ half_a), 0, None)))
    return float(max(np.sum((mu_a - mu_b) ** 2) + np.trace(cov_a) + np.trace(cov_b) - 2.0 * trace_root, 0.0))


def concept_scores(problem: ErasureProblem, judged: dict) -> dict[str, float]:
    """The metrics of judged generations {set name: (labels, features)} (the sets of `problem.eval_prompts`)."""
    rate = {name: float(np.mean(judged[name][0] == problem.concept_class))
            for name in ("concept", "shuffled", "synonym")}
    labels, feats = judged["preserve"]
    return {
        "concept_rate": rate["concept"], "synonym_rate": rate["synonym"], "shuffled_rate": rate["shuffled"],
        "preserve_accuracy": float(np.mean(labels == problem.preserve_labels)),
        "feature_fd": frechet_distance(feats, problem.reference_features),
    }


def score(problem: ErasureProblem, result: ErasureResult) -> dict[str, float]:
    judged = {name: problem.judged(result.transformer, prompts, problem.eval_noise[name])
              for name, prompts in problem.eval_prompts.items()}
    return concept_scores(problem, judged)
