"""Concept erasure in a text-conditioned rectified-flow transformer (the EraseAnything setting).

Gao et al., "EraseAnything: Enabling Concept Erasure in Rectified Flow Transformers", ICML 2025,
arXiv 2412.20413 (spec shared/papers/eraseanything.md). An `ErasureProblem` hands a method a
frozen base model (diffusers' FluxTransformer2DModel + a frozen text encoder), the concept to
erase with its keyword synonyms, the irrelevant concepts D_ir, concept images D_un (base-model
samples of the concept prompt) and the sampler settings. A method returns the edited transformer
(`ErasureResult`), with any LoRA merged into its weights.

`score` is the only judge: it samples the edited model from the problem's fixed noise (28 Euler
steps, classifier-free guidance) and classifies the images with the problem's frozen classifier.
    concept_rate   fraction of concept-prompt generations classified as the concept (primary, lower better)
    synonym_rate   the same under the synonym keywords ("7", "sieben" for "seven")
    shuffled_rate  the same with the prompt's words shuffled
    preserve_accuracy  fraction of generations for the preserved concepts classified as their own class
    feature_fd     Fréchet distance between the classifier's hidden features of the edited and the
                   original model's generations for the preserved prompts (same noise), the
                   FID analogue of the paper's COCO comparison against the original Flux
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bench.spec import Metric
from tasks.erasure._flux import TextEncoder, sample


@dataclass(frozen=True, eq=False)
class ErasureProblem:
    transformer: torch.nn.Module      # the original model v_θ0 (frozen; methods edit a copy)
    text_encoder: TextEncoder          # frozen contextual text encoder (the T5 analogue)
    classifier: tuple[np.ndarray, ...]  # judge weights (W0 (64, 64), b0, W1 (64, 10), b1)
    classifier_accuracy: float         # held-out accuracy of the judge on real digits
    concept: str                       # c, the keyword to erase ("seven")
    concept_class: int                 # the class the judge assigns to c
    synonyms: tuple[str, ...]          # other keywords of c (the paper: WordNet synonyms)
    irrelevant: tuple[str, ...]        # D_ir: the K irrelevant concepts (the paper: GPT-4o's far / mid / no-relation)
    preserve: tuple[str, ...]          # concepts whose generations must survive
    templates: tuple[str, ...]         # prompt templates with one "{}" slot for the keyword
    concept_images: torch.Tensor       # D_un: (n, 16, 4) packed base-model samples of the concept prompt
    sample_steps: int                  # Euler steps of the sampler (the paper: 28)
    guidance: float                    # classifier-free guidance scale of sampling (the paper: 3)
    eval_prompts: dict                 # set name -> list of prompts (concept, shuffled, synonym, preserve)
    eval_noise: dict                   # set name -> (n, 16, 4) noise
    preserve_labels: np.ndarray        # class of each preserve prompt
    reference_features: np.ndarray     # judge features of the original model on the preserve prompts

    @property
    def keywords(self) -> tuple[str, ...]:
        return (self.concept, *self.synonyms)

    def encode(self, prompts: list[str]) -> torch.Tensor:
        return self.text_encoder.encode(prompts)

    def generate(self, transformer: torch.nn.Module, prompts: list[str], noise: torch.Tensor) -> torch.Tensor:
        """Images (B, 8, 8) of `transformer` under `prompts` from `noise`, with the problem's sampler."""
        return sample(transformer, self.encode(prompts), self.encode([""]), noise, self.sample_steps, self.guidance)


@dataclass(frozen=True, eq=False)
class ErasureResult:
    transformer: torch.nn.Module       # the edited model (LoRA merged), same class and shapes as the original


METRICS = {
    "concept_rate": Metric(False, "", True, "fraction of concept-prompt generations the frozen classifier labels as the erased concept"),
    "synonym_rate": Metric(False, "", False, "the same for prompts that name the concept by a synonym"),
    "shuffled_rate": Metric(False, "", False, "the same for concept prompts with shuffled word order"),
    "preserve_accuracy": Metric(True, "", False, "fraction of generations for preserved concepts classified as their own class"),
    "feature_fd": Metric(False, "", False, "Fréchet distance of classifier features, edited vs original model, preserved prompts (same noise)"),
}


# ---- the judge ---------------------------------------------------------------------------------

def features(classifier, images) -> np.ndarray:
    """Hidden ReLU activations (n, 64) of the MLP judge on images (n, 8, 8) in [−1, 1]."""
    x = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    return np.maximum(x @ classifier[0] + classifier[1], 0.0)


def classify(classifier, images) -> np.ndarray:
    return (features(classifier, images) @ classifier[2] + classifier[3]).argmax(axis=1)


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """‖μ_a − μ_b‖² + tr(Σ_a + Σ_b − 2 (Σ_a Σ_b)^{1/2}) of two feature samples (rows), as in FID."""
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    vals, vecs = np.linalg.eigh(cov_a)
    half_a = (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T              # Σ_a^{1/2}
    # tr (Σ_a Σ_b)^{1/2} = tr (Σ_a^{1/2} Σ_b Σ_a^{1/2})^{1/2}: a symmetric PSD matrix, stable when singular
    trace_root = np.sum(np.sqrt(np.clip(np.linalg.eigvalsh(half_a @ cov_b @ half_a), 0, None)))
    return float(max(np.sum((mu_a - mu_b) ** 2) + np.trace(cov_a) + np.trace(cov_b) - 2.0 * trace_root, 0.0))


def concept_scores(problem: ErasureProblem, images: dict) -> dict[str, float]:
    """The metrics of generated images {set name: (n, 8, 8)} (the sets of `problem.eval_prompts`)."""
    rate = {name: float(np.mean(classify(problem.classifier, images[name]) == problem.concept_class))
            for name in ("concept", "shuffled", "synonym")}
    preserved = images["preserve"]
    return {
        "concept_rate": rate["concept"], "synonym_rate": rate["synonym"], "shuffled_rate": rate["shuffled"],
        "preserve_accuracy": float(np.mean(classify(problem.classifier, preserved) == problem.preserve_labels)),
        "feature_fd": frechet_distance(features(problem.classifier, preserved), problem.reference_features),
    }


def score(problem: ErasureProblem, result: ErasureResult) -> dict[str, float]:
    images = {name: problem.generate(result.transformer, prompts, problem.eval_noise[name]).numpy()
              for name, prompts in problem.eval_prompts.items()}
    return concept_scores(problem, images)
